package metadata

import (
	"math/bits"
	"sort"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// validUsername is the create/update rule: 3..=50 bytes (semantics.md
// §2.2; the wire Name already guarantees UTF-8).
func validUsername(name string) bool {
	return len(name) >= MinUsernameLen && len(name) <= MaxUsernameLen
}

// storedStatus maps a requested status byte to the stored one: an unknown
// byte is stored as active (semantics.md §2.2).
func storedStatus(s wire.UserStatus) auth.UserStatus {
	if s == wire.UserInactive {
		return auth.StatusInactive
	}
	return auth.StatusActive
}

// userDetails is the GET_USER / CREATE_USER payload of u; status is the
// byte to report.
func userDetails(u *user, status wire.UserStatus) []byte {
	d := wire.UserDetails{
		User:        wire.User{ID: uint32(u.ID), CreatedAt: u.CreatedAt, Status: status, Username: u.Username},
		Permissions: u.Perms,
	}
	return d.AppendTo(nil)
}

// addUser inserts u into the indexes.
func (s *state) addUser(u *user) {
	s.users[uint32(u.ID)] = u
	s.userByName[u.Username] = uint32(u.ID)
}

// applyBootstrap creates the root user (first start only), created at
// the entry's commit time; auth.RootCreatedAt only for an entry without
// one. The reference's fixed sentinel (semantics.md §2.1) shows as
// "1970-01-01" in every client, so Iggo records the real time.
func (s *state) applyBootstrap(e *Entry) {
	if _, ok := s.users[uint32(auth.RootUserID)]; ok {
		return
	}
	created := e.Timestamp
	if created == 0 {
		created = auth.RootCreatedAt
	}
	perms := rootPermissions()
	s.addUser(&user{
		User: auth.User{
			ID: auth.RootUserID, Username: string(e.Body), Status: auth.StatusActive,
			PasswordHash: string(e.Secret), Permissions: authPermissions(perms), CreatedAt: created,
		},
		Perms: perms, PATs: map[string]*pat{},
	})
}

func (s *state) createUser(e *Entry, a actor) result {
	var req wire.CreateUser
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	if !a.root && !canManageUsers(a.perms) {
		return reject(wire.ErrUnauthorized)
	}
	if len(req.Options) > 0 {
		return reject(wire.ErrUnsupportedOptionKey)
	}
	if !validUsername(req.Username) {
		return reject(wire.ErrInvalidUsername)
	}
	if _, dup := s.userByName[req.Username]; dup {
		return reject(wire.ErrUserAlreadyExists)
	}
	id, ok := lowestFree(s.users, ^uint32(0))
	if !ok {
		return reject(wire.ErrUsersLimitReached)
	}
	u := &user{
		User: auth.User{
			ID: auth.UserID(id), Username: req.Username, Status: storedStatus(req.Status),
			PasswordHash: string(e.Secret), Permissions: authPermissions(req.Permissions), CreatedAt: e.Timestamp,
		},
		Perms: req.Permissions, PATs: map[string]*pat{},
	}
	s.addUser(u)
	return result{payload: userDetails(u, req.Status)}
}

func (s *state) updateUser(e *Entry, a actor) result {
	var req wire.UpdateUser
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u, res := s.managedUser(req.UserID, a)
	if u == nil {
		return res
	}
	if len(req.Options) > 0 {
		return reject(wire.ErrUnsupportedOptionKey)
	}
	if req.Username != "" {
		if !validUsername(req.Username) {
			return reject(wire.ErrInvalidUsername)
		}
		if other, dup := s.userByName[req.Username]; dup && other != uint32(u.ID) {
			return reject(wire.ErrUserAlreadyExists)
		}
	}
	if req.Username != "" {
		delete(s.userByName, u.Username)
		u.Username = req.Username
		s.userByName[u.Username] = uint32(u.ID)
	}
	if req.Status != 0 {
		u.Status = storedStatus(req.Status)
	}
	return result{}
}

// managedUser checks the manage_users rule (41) and then resolves the
// target user (20 ResourceNotFound): the permission is checked before the
// lookup, so a user without the right learns nothing about who exists.
func (s *state) managedUser(id wire.Identifier, a actor) (*user, result) {
	if !a.root && !canManageUsers(a.perms) {
		return nil, reject(wire.ErrUnauthorized)
	}
	u := s.user(id)
	if u == nil {
		return nil, reject(wire.ErrResourceNotFound)
	}
	return u, result{}
}

func (s *state) deleteUser(e *Entry, a actor) result {
	var req wire.DeleteUser
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u, res := s.managedUser(req.UserID, a)
	if u == nil {
		return res
	}
	if u.ID == auth.RootUserID {
		return reject(wire.ErrCannotDeleteUser)
	}
	for _, p := range u.PATs {
		delete(s.patByHash, p.Hash)
	}
	delete(s.users, uint32(u.ID))
	delete(s.userByName, u.Username)
	return result{}
}

func (s *state) updatePermissions(e *Entry, a actor) result {
	var req wire.UpdatePermissions
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u, res := s.managedUser(req.UserID, a)
	if u == nil {
		return res
	}
	if u.ID == auth.RootUserID {
		return reject(wire.ErrCannotChangePermissions)
	}
	u.Perms = req.Permissions
	u.Permissions = authPermissions(req.Permissions)
	return result{}
}

// passwordSecret is the Secret of a CHANGE_PASSWORD entry: the new hash
// and the hash the current password was verified against before commit.
// An empty Secret means the verification failed.
func passwordSecret(newHash, verified string) []byte {
	return appendStr16(appendStr16(nil, newHash), verified)
}

func (s *state) changePassword(e *Entry, a actor) result {
	var req wire.ChangePassword
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u := s.user(req.UserID)
	if u == nil {
		return reject(wire.ErrResourceNotFound)
	}
	if !a.root && uint32(u.ID) != a.id && !canManageUsers(a.perms) {
		return reject(wire.ErrUnauthorized)
	}
	d := decoder{b: e.Secret}
	newHash, verified := d.str16(), d.str16()
	if len(e.Secret) == 0 || d.finish() != nil || verified != u.PasswordHash {
		return reject(wire.ErrInvalidCredentials)
	}
	u.PasswordHash = newHash
	return result{}
}

// patExpiry resolves a CREATE_PERSONAL_ACCESS_TOKEN expiry at now: 0 or
// u64::MAX never expire (ExpiryAt 0); otherwise now + value, which must be
// after now (InvalidPersonalAccessTokenExpiry 56, also on overflow).
func patExpiry(now, value uint64) (uint64, bool) {
	if value == wire.PATExpiryServerDefault || value == wire.PATExpiryNever {
		return 0, true
	}
	at, carry := bits.Add64(now, value, 0)
	if carry != 0 || at <= now {
		return 0, false
	}
	return at, true
}

func (s *state) createPAT(e *Entry, a actor) result {
	var req wire.CreatePersonalAccessToken
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u := s.users[a.id]
	if u == nil {
		return reject(wire.ErrResourceNotFound)
	}
	if _, dup := u.PATs[req.Name]; dup {
		return reject(wire.ErrPersonalAccessTokenAlreadyExists)
	}
	at, ok := patExpiry(e.Timestamp, req.Expiry)
	if !ok {
		return reject(wire.ErrInvalidPersonalAccessTokenExpiry)
	}
	hash := string(e.Secret)
	if _, dup := s.patByHash[hash]; dup || hash == "" {
		return reject(wire.ErrPersonalAccessTokenAlreadyExists)
	}
	p := &pat{UserID: a.id, Name: req.Name, Hash: hash, ExpiryAt: at}
	u.PATs[p.Name] = p
	s.patByHash[hash] = p
	return result{secret: true}
}

func (s *state) deletePAT(e *Entry, a actor) result {
	var req wire.DeletePersonalAccessToken
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	u := s.users[a.id]
	if u == nil {
		return reject(wire.ErrResourceNotFound)
	}
	p, ok := u.PATs[req.Name]
	if !ok {
		return reject(wire.ErrResourceNotFound)
	}
	delete(u.PATs, p.Name)
	delete(s.patByHash, p.Hash)
	return result{}
}

// expiredPATs counts the tokens expired at now.
func (s *state) expiredPATs(now uint64) int {
	n := 0
	for _, p := range s.patByHash {
		if p.ExpiryAt != 0 && p.ExpiryAt <= now {
			n++
		}
	}
	return n
}

// applyPATCleanup deletes the tokens still expired at e.Timestamp
// (semantics.md §2.6).
func (s *state) applyPATCleanup(e *Entry) {
	for h, p := range s.patByHash {
		if p.ExpiryAt != 0 && p.ExpiryAt <= e.Timestamp {
			delete(s.patByHash, h)
			if u := s.users[p.UserID]; u != nil {
				delete(u.PATs, p.Name)
			}
		}
	}
}

// userPATs lists u's tokens sorted by name (GET_PERSONAL_ACCESS_TOKENS).
func userPATs(u *user) wire.PersonalAccessTokens {
	out := make(wire.PersonalAccessTokens, 0, len(u.PATs))
	for _, p := range u.PATs {
		out = append(out, wire.PersonalAccessToken{Name: p.Name, ExpiryAt: p.ExpiryAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
