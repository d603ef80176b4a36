package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/zeebo/blake3"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
)

// noExpiryLifetime is the lifetime of tokens when access_token_expiry is
// "none" (http-api.md §3: iat + 1,000,000,000 s).
const noExpiryLifetime = 1_000_000_000 * time.Second

// Random secret length bounds when no secret is configured.
const (
	minRandomSecret = 32
	maxRandomSecret = 64
)

// JWTSettings are the resolved [http.jwt] settings.
type JWTSettings struct {
	Method         jwt.SigningMethod
	Key            []byte
	Issuer         string
	Audience       string
	ValidIssuers   []string
	ValidAudiences []string
	Lifetime       time.Duration
	ClockSkew      time.Duration
	NotBefore      time.Duration
}

// NewJWTSettings resolves cfg; with no secret configured a random one is
// drawn from rnd (tokens then die with the process, as in the reference).
func NewJWTSettings(cfg config.HTTPJWTConfig, rnd io.Reader) (JWTSettings, error) {
	s := JWTSettings{
		Issuer: cfg.Issuer, Audience: cfg.Audience,
		ValidIssuers: cfg.ValidIssuers.Clean(), ValidAudiences: cfg.ValidAudiences.Clean(),
		ClockSkew: cfg.ClockSkew.Std(), NotBefore: cfg.NotBefore.Std(),
	}
	switch cfg.Algorithm {
	case "HS256":
		s.Method = jwt.SigningMethodHS256
	case "HS384":
		s.Method = jwt.SigningMethodHS384
	case "HS512":
		s.Method = jwt.SigningMethodHS512
	default:
		return s, fmt.Errorf("http.jwt.algorithm %q is not supported", cfg.Algorithm)
	}
	if cfg.AccessTokenExpiry == config.NoTokenExpiry {
		s.Lifetime = noExpiryLifetime
	} else {
		s.Lifetime = time.Duration(cfg.AccessTokenExpiry)
	}
	key, err := cfg.JWTKey()
	if err != nil {
		return s, fmt.Errorf("http.jwt: %w", err)
	}
	if len(key) == 0 {
		if key, err = randomSecret(rnd); err != nil {
			return s, fmt.Errorf("http.jwt: random secret: %w", err)
		}
	}
	s.Key = key
	return s, nil
}

const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomSecret returns a random alphanumeric secret of 32..64 characters.
func randomSecret(rnd io.Reader) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	n, err := rand.Int(rnd, big.NewInt(maxRandomSecret-minRandomSecret+1))
	if err != nil {
		return nil, err
	}
	out := make([]byte, minRandomSecret+int(n.Int64()))
	for i := range out {
		c, err := rand.Int(rnd, big.NewInt(int64(len(secretAlphabet))))
		if err != nil {
			return nil, err
		}
		out[i] = secretAlphabet[c.Int64()]
	}
	return out, nil
}

// Issued is a token the server signed.
type Issued struct {
	Token string
	JTI   string
	User  auth.UserID
	// IssuedAt is the issue time; Expiry = IssuedAt + lifetime (unix s).
	IssuedAt time.Time
	Expiry   int64
}

// Claims are the verified claims of a self-issued token.
type Claims struct {
	JTI    string
	User   auth.UserID
	Expiry int64 // unix seconds
	// IssuedMillis is the issue time in unix milliseconds, taken from the
	// UUIDv7 jti (finer than iat, so a revocation at a given instant can
	// tell tokens issued just before it from those issued just after).
	IssuedMillis int64
	// PasswordStamp is the pwv claim: PasswordStamp of the user's password
	// hash when the token was issued ("" in tokens without one).
	PasswordStamp string
}

// tokenClaims are the registered claims plus pwv.
type tokenClaims struct {
	jwt.RegisteredClaims
	PWV string `json:"pwv,omitempty"`
}

// PasswordStamp is a short fingerprint of a stored password hash (16 hex
// digits of BLAKE3 over it). A token carries the one of its user's
// password at issue (claim pwv); the server refuses it once the user's
// stored hash has another stamp, so a password change, made through
// either protocol on any node of a cluster (the hash is replicated
// metadata, salted anew on every change), ends the user's earlier tokens
// everywhere.
func PasswordStamp(passwordHash string) string {
	var out [2 * stampBytes]byte
	return string(appendStamp(out[:0], passwordHash))
}

// stampBytes is the length of a password stamp before hex encoding.
const stampBytes = 8

// appendStamp appends PasswordStamp(passwordHash) to dst; with a dst of
// room enough (and a hash as the store keeps it) it allocates nothing, so
// checking a token's stamp on every request costs no garbage.
func appendStamp(dst []byte, passwordHash string) []byte {
	var in [256]byte
	b := append(append(in[:0], "iggo http pwv\x00"...), passwordHash...)
	sum := blake3.Sum256(b)
	return hex.AppendEncode(dst, sum[:stampBytes])
}

// stampMatches reports whether stamp is PasswordStamp(passwordHash).
func stampMatches(stamp, passwordHash string) bool {
	var out [2 * stampBytes]byte
	return string(appendStamp(out[:0], passwordHash)) == stamp
}

// Tokens signs and verifies the server's JWTs (http-api.md §3).
type Tokens struct {
	s   JWTSettings
	now func() time.Time
	rnd io.Reader
}

// NewTokens returns a signer/verifier over s with clock now and jti
// randomness rnd (crypto/rand when nil).
func NewTokens(s JWTSettings, now func() time.Time, rnd io.Reader) *Tokens {
	if now == nil {
		now = time.Now
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	return &Tokens{s: s, now: now, rnd: rnd}
}

// Issue signs a new token for user: header {typ, alg}, claims jti
// (UUIDv7), iss, aud (one string), sub (decimal user id), iat, nbf, exp.
func (t *Tokens) Issue(user auth.UserID) (Issued, error) { return t.IssueStamped(user, "") }

// IssueStamped is Issue with the pwv claim set to stamp (PasswordStamp of
// the user's password hash; none when empty).
func (t *Tokens) IssueStamped(user auth.UserID, stamp string) (Issued, error) {
	now := t.now()
	id, err := newV7(now, t.rnd)
	if err != nil {
		return Issued{}, fmt.Errorf("mint jti: %w", err)
	}
	iat := now.Unix()
	exp := iat + int64(t.s.Lifetime/time.Second)
	claims := jwt.MapClaims{
		"jti": id.String(),
		"iss": t.s.Issuer,
		"aud": t.s.Audience,
		"sub": strconv.FormatUint(uint64(user), 10),
		"iat": iat,
		"nbf": iat + int64(t.s.NotBefore/time.Second),
		"exp": exp,
	}
	if stamp != "" {
		claims["pwv"] = stamp
	}
	tok := jwt.NewWithClaims(t.s.Method, claims)
	signed, err := tok.SignedString(t.s.Key)
	if err != nil {
		return Issued{}, fmt.Errorf("sign token: %w", err)
	}
	return Issued{Token: signed, JTI: id.String(), User: user, IssuedAt: now, Expiry: exp}, nil
}

// newV7 builds a UUIDv7 for the instant now (RFC 9562 §5.7) with random
// bits from rnd, so tests with an injected clock get matching jti times.
func newV7(now time.Time, rnd io.Reader) (uuid.UUID, error) {
	var u uuid.UUID
	if _, err := io.ReadFull(rnd, u[6:]); err != nil {
		return u, err
	}
	ms := uint64(now.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return u, nil
}

// v7Millis returns the unix-millisecond timestamp of a UUIDv7 string.
func v7Millis(s string) (int64, bool) {
	u, err := uuid.Parse(s)
	if err != nil || u.Version() != 7 {
		return 0, false
	}
	var ms int64
	for i := 0; i < 6; i++ {
		ms = ms<<8 | int64(u[i])
	}
	return ms, true
}

// Verification failures.
var (
	errTokenInvalid = errors.New("invalid token")
	errTokenSubject = errors.New("token subject is not a user id")
)

// Verify checks a self-issued token: header alg equal to the configured
// one, signature, exp required with exp + clock_skew >= now, nbf -
// clock_skew <= now, iss among valid_issuers, aud intersecting
// valid_audiences, sub a u32, jti a UUIDv7 (iat is not checked).
func (t *Tokens) Verify(raw string) (Claims, error) {
	p := jwt.NewParser(
		jwt.WithValidMethods([]string{t.s.Method.Alg()}),
		jwt.WithLeeway(t.s.ClockSkew),
		jwt.WithExpirationRequired(),
		jwt.WithAudience(t.s.ValidAudiences...),
		jwt.WithTimeFunc(t.now),
	)
	var tc tokenClaims
	tok, err := p.ParseWithClaims(raw, &tc, func(*jwt.Token) (any, error) { return t.s.Key, nil })
	rc := &tc.RegisteredClaims
	if err != nil || !tok.Valid {
		return Claims{}, fmt.Errorf("%w: %v", errTokenInvalid, err)
	}
	if !contains(t.s.ValidIssuers, rc.Issuer) {
		return Claims{}, fmt.Errorf("%w: issuer %q not accepted", errTokenInvalid, rc.Issuer)
	}
	sub, err := strconv.ParseUint(rc.Subject, 10, 32)
	if err != nil {
		return Claims{}, errTokenSubject
	}
	ms, ok := v7Millis(rc.ID)
	if !ok {
		return Claims{}, fmt.Errorf("%w: jti is not a UUIDv7", errTokenInvalid)
	}
	return Claims{JTI: rc.ID, User: auth.UserID(sub), Expiry: rc.ExpiresAt.Unix(), IssuedMillis: ms, PasswordStamp: tc.PWV}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
