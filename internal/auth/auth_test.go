package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testParams keep Argon2 cheap in tests; DefaultParams are exercised once.
var testParams = Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}

func TestHashVerify(t *testing.T) {
	for _, p := range []Params{testParams} {
		h := NewHasher(p, nil)
		phc, err := h.Hash("s3cret")
		if err != nil {
			t.Fatal(err)
		}
		got, salt, key, err := ParsePHC(phc)
		if err != nil {
			t.Fatalf("ParsePHC(%q): %v", phc, err)
		}
		if d := cmp.Diff(p, got); d != "" || len(salt) != 16 || len(key) != 32 {
			t.Fatalf("params (-want +got):\n%s salt %d key %d", d, len(salt), len(key))
		}
		if ok, err := h.Verify(phc, "s3cret"); !ok || err != nil {
			t.Fatalf("Verify(right) = %v, %v", ok, err)
		}
		if ok, err := h.Verify(phc, "s3creT"); ok || err != nil {
			t.Fatalf("Verify(wrong) = %v, %v", ok, err)
		}
	}
}

func TestDefaultParamsPHC(t *testing.T) {
	h := NewHasher(DefaultParams, bytes.NewReader(make([]byte, 16)))
	phc, err := h.Hash("iggy")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$") {
		t.Fatalf("PHC = %q", phc)
	}
	if ok, err := h.Verify(phc, "iggy"); !ok || err != nil {
		t.Fatalf("Verify = %v, %v", ok, err)
	}
}

func TestParsePHCRejects(t *testing.T) {
	h := NewHasher(testParams, nil)
	good, _ := h.Hash("pw")
	for _, tc := range []struct{ name, phc string }{
		{"empty", ""},
		{"argon2i", strings.Replace(good, "argon2id", "argon2i", 1)},
		{"version", strings.Replace(good, "v=19", "v=16", 1)},
		{"huge memory", strings.Replace(good, "m=64", "m=4000000", 1)},
		{"zero time", strings.Replace(good, "t=1", "t=0", 1)},
		{"missing p", strings.Replace(good, ",p=1", "", 1)},
		{"extra field", strings.Replace(good, ",p=1", ",p=1,x=2", 1)},
		{"bad salt", strings.Replace(good, "$", "$!", 4)},
		{"too long", good + strings.Repeat("A", 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := ParsePHC(tc.phc); !errors.Is(err, ErrBadHash) {
				t.Fatalf("ParsePHC(%q) = %v", tc.phc, err)
			}
			if ok, err := h.Verify(tc.phc, "pw"); ok || err == nil {
				t.Fatalf("Verify accepted %q", tc.phc)
			}
		})
	}
}

func TestToken(t *testing.T) {
	tok, err := NewToken(nil)
	if err != nil || len(tok) != 68 {
		t.Fatalf("NewToken = %q, %v", tok, err)
	}
	// BLAKE3("") is a published test vector.
	if got := HashToken(""); got != "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" {
		t.Fatalf("HashToken(\"\") = %s", got)
	}
	if len(HashToken(tok)) != 64 {
		t.Fatal("hash length")
	}
}

func TestAuthenticator(t *testing.T) {
	h := NewHasher(testParams, nil)
	store := NewMemStore()
	root, err := NewRootUser(h, "iggy", "iggy")
	if err != nil {
		t.Fatal(err)
	}
	store.PutUser(root)
	hash, _ := h.Hash("password")
	store.PutUser(User{ID: 1, Username: "sleepy", Status: StatusInactive, PasswordHash: hash})
	now := time.UnixMicro(1_000_000)
	tokRoot, _ := NewToken(nil)
	tokOld, _ := NewToken(nil)
	tokSleepy, _ := NewToken(nil)
	tokGone, _ := NewToken(nil)
	store.PutPAT(PAT{UserID: 0, Name: "a", TokenHash: HashToken(tokRoot), ExpiryAt: 0})
	store.PutPAT(PAT{UserID: 0, Name: "b", TokenHash: HashToken(tokOld), ExpiryAt: 1_000_000})
	store.PutPAT(PAT{UserID: 1, Name: "c", TokenHash: HashToken(tokSleepy)})
	store.PutPAT(PAT{UserID: 9, Name: "d", TokenHash: HashToken(tokGone), ExpiryAt: 2_000_000})
	a := NewAuthenticator(store, h, func() time.Time { return now })

	for _, tc := range []struct {
		name, user, pass string
		want             error
	}{
		{"ok", "iggy", "iggy", nil},
		{"wrong password", "iggy", "nope", ErrInvalidCredentials},
		{"unknown user", "nobody", "iggy", ErrInvalidCredentials},
		{"inactive", "sleepy", "password", ErrInvalidCredentials},
		{"short username", "ig", "iggy", ErrInvalidCredentials},
		{"short password", "iggy", "ig", ErrInvalidCredentials},
		{"long password", "iggy", strings.Repeat("x", 101), ErrInvalidCredentials},
	} {
		t.Run("password/"+tc.name, func(t *testing.T) {
			u, err := a.Password(tc.user, tc.pass)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Password = %v, want %v", err, tc.want)
			}
			if err == nil && (u.ID != RootUserID || !u.CanReadServers()) {
				t.Fatalf("user = %+v", u)
			}
		})
	}
	for _, tc := range []struct {
		name, tok string
		want      error
	}{
		{"ok", tokRoot, nil},
		{"expired", tokOld, ErrInvalidToken},
		{"unknown", "nope", ErrInvalidToken},
		{"inactive owner", tokSleepy, ErrUserInactive},
		{"deleted owner", tokGone, ErrUserInactive},
	} {
		t.Run("token/"+tc.name, func(t *testing.T) {
			if _, err := a.Token(tc.tok); !errors.Is(err, tc.want) {
				t.Fatalf("Token = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCanReadServers(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    User
		want bool
	}{
		{"root", User{ID: 0}, true},
		{"none", User{ID: 3}, false},
		{"read", User{ID: 3, Permissions: &Permissions{Global: GlobalPermissions{ReadServers: true}}}, true},
		{"manage", User{ID: 3, Permissions: &Permissions{Global: GlobalPermissions{ManageServers: true}}}, true},
		{"other", User{ID: 3, Permissions: &Permissions{Global: GlobalPermissions{ReadUsers: true}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.u.CanReadServers(); got != tc.want {
				t.Fatalf("CanReadServers = %v", got)
			}
		})
	}
}

func FuzzParsePHC(f *testing.F) {
	h := NewHasher(testParams, nil)
	good, _ := h.Hash("pw")
	f.Add(good)
	f.Add("$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := ParsePHC(s)
		if err != nil {
			return
		}
		again := formatPHC(p, salt, key)
		p2, salt2, key2, err := ParsePHC(again)
		if err != nil || p2 != p || !bytes.Equal(salt, salt2) || !bytes.Equal(key, key2) {
			t.Fatalf("re-parse of %q: %v", again, err)
		}
	})
}
