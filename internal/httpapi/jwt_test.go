package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
)

func jwtCfg(mod func(*config.HTTPJWTConfig)) config.HTTPJWTConfig {
	c := config.Default().HTTP.JWT
	c.EncodingSecret = "a-test-secret-of-enough-length-0123456789"
	if mod != nil {
		mod(&c)
	}
	return c
}

func newTokens(t *testing.T, clk *fakeClock, mod func(*config.HTTPJWTConfig)) *Tokens {
	t.Helper()
	s, err := NewJWTSettings(jwtCfg(mod), nil)
	if err != nil {
		t.Fatal(err)
	}
	return NewTokens(s, clk.Now, nil)
}

func TestJWTLifetimeAndSkew(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, nil) // 1 h, skew 5 s
	iss, err := tk.Issue(7)
	if err != nil {
		t.Fatal(err)
	}
	if iss.Expiry != clk.Now().Unix()+3600 {
		t.Fatalf("exp = %d", iss.Expiry)
	}
	cl, err := tk.Verify(iss.Token)
	if err != nil || cl.User != 7 || cl.JTI != iss.JTI || cl.IssuedMillis != clk.Now().UnixMilli() {
		t.Fatalf("Verify = %+v, %v", cl, err)
	}
	clk.Advance(time.Hour + 4*time.Second) // inside the skew
	if _, err := tk.Verify(iss.Token); err != nil {
		t.Fatalf("inside skew: %v", err)
	}
	clk.Advance(2 * time.Second) // past exp + skew
	if _, err := tk.Verify(iss.Token); err == nil {
		t.Fatal("expired token verified")
	}
}

func TestJWTNotBefore(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.NotBefore = config.Duration(time.Minute) })
	iss, _ := tk.Issue(1)
	if _, err := tk.Verify(iss.Token); err == nil {
		t.Fatal("token verified before nbf")
	}
	clk.Advance(time.Minute - 5*time.Second) // nbf - skew
	if _, err := tk.Verify(iss.Token); err != nil {
		t.Fatalf("at nbf - skew: %v", err)
	}
}

func TestJWTNoExpiry(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.AccessTokenExpiry = config.NoTokenExpiry })
	iss, _ := tk.Issue(1)
	if iss.Expiry != clk.Now().Unix()+1_000_000_000 {
		t.Fatalf("exp = %d", iss.Expiry)
	}
	clk.Advance(10 * 365 * 24 * time.Hour)
	if _, err := tk.Verify(iss.Token); err != nil {
		t.Fatalf("after 10 years: %v", err)
	}
}

func TestJWTRejects(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, nil)
	good, _ := tk.Issue(1)
	other := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.EncodingSecret = "another-key-another-key-another-key-1234" })
	foreign, _ := other.Issue(1)
	hs512 := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.Algorithm = "HS512" })
	algMismatch, _ := hs512.Issue(1)
	badIss := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.Issuer = "someone.else" })
	wrongIssuer, _ := badIss.Issue(1)
	badAud := newTokens(t, clk, func(c *config.HTTPJWTConfig) { c.Audience = "someone.else" })
	wrongAudience, _ := badAud.Issue(1)
	// A token with a non-numeric sub, signed with the right key.
	claims := jwt.MapClaims{"jti": good.JTI, "iss": "iggy.apache.org", "aud": "iggy.apache.org", "sub": "root",
		"iat": clk.Now().Unix(), "nbf": clk.Now().Unix(), "exp": clk.Now().Unix() + 60}
	badSub, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(tk.s.Key)
	noExp := jwt.MapClaims{"jti": good.JTI, "iss": "iggy.apache.org", "aud": "iggy.apache.org", "sub": "1", "iat": clk.Now().Unix()}
	noExpTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, noExp).SignedString(tk.s.Key)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	for name, tok := range map[string]string{
		"foreign key": foreign.Token, "alg mismatch": algMismatch.Token, "issuer": wrongIssuer.Token,
		"audience": wrongAudience.Token, "subject": badSub, "no exp": noExpTok, "alg none": none,
		"garbage": "abc.def.ghi", "tampered": good.Token[:len(good.Token)-2] + "xx",
	} {
		if _, err := tk.Verify(tok); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if _, err := tk.Verify(good.Token); err != nil {
		t.Fatalf("good token: %v", err)
	}
	if strings.Count(good.Token, ".") != 2 {
		t.Fatal("not a JWS compact token")
	}
}

func TestJWTRandomSecret(t *testing.T) {
	c := config.Default().HTTP.JWT
	a, err := NewJWTSettings(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewJWTSettings(c, nil)
	if len(a.Key) < 32 || len(a.Key) > 64 || string(a.Key) == string(b.Key) {
		t.Fatalf("random secrets %q %q", a.Key, b.Key)
	}
	c.UseBase64Secret, c.EncodingSecret = true, "c2VjcmV0"
	s, err := NewJWTSettings(c, nil)
	if err != nil || string(s.Key) != "secret" {
		t.Fatalf("base64 secret = %q, %v", s.Key, err)
	}
	c.DecodingSecret, c.EncodingSecret, c.UseBase64Secret = "mirror", "", false
	s, _ = NewJWTSettings(c, nil)
	if string(s.Key) != "mirror" {
		t.Fatalf("decoding secret not mirrored: %q", s.Key)
	}
}

func TestRevocationsPersist(t *testing.T) {
	clk := newClock()
	tk := newTokens(t, clk, nil)
	path := t.TempDir() + "/rev.bin"
	r, err := OpenRevocations(path, clk.Now, 10, time.Hour+5*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tk.Issue(1)
	b, _ := tk.Issue(1)
	ca, _ := tk.Verify(a.Token)
	cb, _ := tk.Verify(b.Token)
	if _, err := r.RevokeToken(1, ca.JTI, ca.Expiry); err != nil {
		t.Fatal(err)
	}
	if !r.Revoked(ca) || r.Revoked(cb) {
		t.Fatal("jti revocation")
	}
	// Password change of user 2: earlier tokens die, later ones live.
	old, _ := tk.Issue(2)
	clk.Advance(time.Millisecond)
	if err := r.RevokeUser(2); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Millisecond)
	fresh, _ := tk.Issue(2)
	co, _ := tk.Verify(old.Token)
	cf, _ := tk.Verify(fresh.Token)
	if !r.Revoked(co) || r.Revoked(cf) {
		t.Fatal("user revocation")
	}
	// A restart keeps both.
	r2, err := OpenRevocations(path, clk.Now, 10, time.Hour+5*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Revoked(ca) || !r2.Revoked(co) || r2.Revoked(cb) || r2.Revoked(cf) {
		t.Fatal("revocations lost across a restart")
	}
	// Entries go once no token can match them.
	clk.Advance(2 * time.Hour)
	_, _ = r2.RevokeToken(1, "x", clk.Now().Unix()+60)
	if n := r2.Len(); n != 1 {
		t.Fatalf("after expiry %d entries, want 1", n)
	}
	// A corrupt file is refused.
	data := []byte("12345678{}")
	if err := writeFile(path, data); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRevocations(path, clk.Now, 10, time.Hour, 0, nil); err == nil {
		t.Fatal("corrupt revocation file accepted")
	}
}

func TestRevocationsBounded(t *testing.T) {
	clk := newClock()
	r, _ := OpenRevocations("", clk.Now, 3, time.Hour, 0, nil)
	for i := range 5 {
		_, _ = r.RevokeToken(1, string(rune('a'+i)), clk.Now().Unix()+int64(100+i))
	}
	if r.Len() != 3 {
		t.Fatalf("%d entries, want the cap 3", r.Len())
	}
	// The soonest-expiring ones went.
	if r.Revoked(Claims{JTI: "a"}) || !r.Revoked(Claims{JTI: "e"}) {
		t.Fatal("wrong victims")
	}
	_ = auth.UserID(0)
}
