package auth

import (
	"errors"
	"time"
)

// Login outcomes. Each maps to one eviction reason (semantics.md §1.4).
var (
	// ErrInvalidCredentials: unknown user, wrong password, a password
	// login of an inactive user, or credentials outside the length bounds
	// (eviction 9).
	ErrInvalidCredentials = errors.New("auth: invalid credentials")
	// ErrInvalidToken: unknown or expired personal access token (eviction 10).
	ErrInvalidToken = errors.New("auth: invalid personal access token")
	// ErrUserInactive: a valid token whose owner is inactive or gone (eviction 11).
	ErrUserInactive = errors.New("auth: user inactive")
)

// Authenticator checks login credentials against a Store.
type Authenticator struct {
	store  Store
	hasher *Hasher
	now    func() time.Time
}

// NewAuthenticator returns an Authenticator over store; now is the clock
// used for token expiry (time.Now when nil).
func NewAuthenticator(store Store, hasher *Hasher, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	return &Authenticator{store: store, hasher: hasher, now: now}
}

// Store returns the lookup the authenticator uses.
func (a *Authenticator) Store() Store { return a.store }

// Password checks a username/password login. Every failure is
// ErrInvalidCredentials, including an inactive user: the reference answers
// a password login of an inactive user with eviction 9, not 11
// (semantics.md §1.4 step 3). An unknown user still costs one Argon2
// verification so timing does not reveal which names exist.
func (a *Authenticator) Password(username, password string) (User, error) {
	if len(username) < MinUsernameBytes || len(username) > MaxUsernameBytes ||
		len(password) < MinPasswordBytes || len(password) > MaxPasswordBytes {
		return User{}, ErrInvalidCredentials
	}
	u, ok := a.store.UserByName(username)
	if !ok {
		a.hasher.VerifyDummy(password)
		return User{}, ErrInvalidCredentials
	}
	match, err := a.hasher.Verify(u.PasswordHash, password)
	if err != nil || !match || !u.Active() {
		return User{}, ErrInvalidCredentials
	}
	return u, nil
}

// Token checks a personal-access-token login: unknown or expired ->
// ErrInvalidToken; owner inactive (or deleted) -> ErrUserInactive.
func (a *Authenticator) Token(token string) (User, error) {
	p, ok := a.store.PATByHash(HashToken(token))
	if !ok || p.Expired(uint64(a.now().UnixMicro())) {
		return User{}, ErrInvalidToken
	}
	u, ok := a.store.UserByID(p.UserID)
	if !ok || !u.Active() {
		return User{}, ErrUserInactive
	}
	return u, nil
}
