package auth

import (
	"sync"
)

// UserID identifies a user; the root user is 0 (semantics.md §2.1).
type UserID uint32

// RootUserID is the id of the root user.
const RootUserID UserID = 0

// UserStatus is a user's status byte: 1 active, 2 inactive.
type UserStatus uint8

// User statuses.
const (
	StatusActive   UserStatus = 1
	StatusInactive UserStatus = 2
)

// User is what login and authorization need to know about a user.
type User struct {
	ID       UserID
	Username string
	Status   UserStatus
	// PasswordHash is an Argon2id PHC string.
	PasswordHash string
	// Permissions is nil when the user has none.
	Permissions *Permissions
	// CreatedAt is in microseconds since the Unix epoch.
	CreatedAt uint64
}

// Active reports whether the user may log in.
func (u *User) Active() bool { return u.Status == StatusActive }

// PAT is a stored personal access token.
type PAT struct {
	UserID UserID
	Name   string
	// TokenHash is HashToken of the raw token.
	TokenHash string
	// ExpiryAt is in microseconds since the Unix epoch; 0 means never.
	ExpiryAt uint64
}

// Expired reports whether the token has expired at nowMicros: expired
// means ExpiryAt <= now (semantics.md §2.6).
func (p *PAT) Expired(nowMicros uint64) bool { return p.ExpiryAt != 0 && p.ExpiryAt <= nowMicros }

// Store is the users and tokens lookup the login path needs. The metadata
// state machine implements it over committed state; MemStore is the
// in-memory implementation used until then and in tests. Implementations
// are safe for concurrent use and return copies.
type Store interface {
	// UserByName finds a user by exact (case-sensitive) username.
	UserByName(name string) (User, bool)
	// UserByID finds a user by id.
	UserByID(id UserID) (User, bool)
	// PATByHash finds a token by HashToken of its raw value.
	PATByHash(tokenHash string) (PAT, bool)
}

// MemStore is an in-memory Store.
type MemStore struct {
	mu     sync.RWMutex
	users  map[UserID]User   // guarded by mu
	byName map[string]UserID // guarded by mu
	pats   map[string]PAT    // by token hash; guarded by mu
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{users: map[UserID]User{}, byName: map[string]UserID{}, pats: map[string]PAT{}}
}

// UserByName implements Store.
func (s *MemStore) UserByName(name string) (User, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byName[name]
	if !ok {
		return User{}, false
	}
	return s.users[id], true
}

// UserByID implements Store.
func (s *MemStore) UserByID(id UserID) (User, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[id]
	return u, ok
}

// PATByHash implements Store.
func (s *MemStore) PATByHash(h string) (PAT, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.pats[h]
	return p, ok
}

// PutUser inserts or replaces u (by id), keeping the name index current.
func (s *MemStore) PutUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.users[u.ID]; ok {
		delete(s.byName, old.Username)
	}
	s.users[u.ID] = u
	s.byName[u.Username] = u.ID
}

// PutPAT inserts or replaces a token (by hash).
func (s *MemStore) PutPAT(p PAT) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pats[p.TokenHash] = p
}

// Login credential bounds (semantics.md §1.4): outside them a password
// login is rejected as invalid credentials without a lookup.
const (
	MinUsernameBytes = 3
	MaxUsernameBytes = 50
	MinPasswordBytes = 3
	MaxPasswordBytes = 100
)

// RootCreatedAt is the reference's fixed created_at of the root user
// (semantics.md §2.1). Iggo's metadata plane records the real creation
// time instead; this value remains for a root user made without a clock
// (NewRootUser, and a bootstrap entry without a timestamp).
const RootCreatedAt = 1

// NewRootUser returns the root user (id 0, active, every global
// permission) with password hashed by h.
func NewRootUser(h *Hasher, username, password string) (User, error) {
	hash, err := h.Hash(password)
	if err != nil {
		return User{}, err
	}
	return User{
		ID: RootUserID, Username: username, Status: StatusActive, PasswordHash: hash,
		Permissions: &Permissions{Global: AllGlobal}, CreatedAt: RootCreatedAt,
	}, nil
}

// MaxRevokedTokens bounds a list of revoked HTTP tokens (the replicated
// one of the metadata plane, and the HTTP API's local one): when it is
// full, expired entries go first, then the entry that expires soonest.
const MaxRevokedTokens = 100_000
