package metadata

import (
	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// Administrative operations outside any session, for embedding programs
// and tests. They commit ordinary command entries (the acting user is the
// root user, or the token's owner), so they are durable and replayed like
// requests from a client.

// CreateUser creates a user and returns its id. Errors are the committed
// rejection codes as wire errors (e.g. wire.ErrUserAlreadyExists).
func (s *Store) CreateUser(username, password string, status wire.UserStatus, perms *wire.Permissions) (uint32, error) {
	if s.cfg.Hasher == nil {
		return 0, wire.ErrError
	}
	hash, err := s.cfg.Hasher.Hash(password)
	if err != nil {
		return 0, err
	}
	req := wire.CreateUser{Username: username, Status: status, Permissions: perms}
	c, err := s.submit(Entry{Kind: KindCommand, UserID: uint32(auth.RootUserID), Code: wire.CmdCreateUser, Body: req.AppendTo(nil), Secret: []byte(hash)})
	if err != nil {
		return 0, err
	}
	if c.res.code != 0 {
		return 0, wire.ErrorForCode(c.res.code)
	}
	var d wire.UserDetails
	if err := d.Decode(c.res.payload); err != nil {
		return 0, err
	}
	return d.User.ID, nil
}

// CreatePAT creates a personal access token for user (expiry as in
// CREATE_PERSONAL_ACCESS_TOKEN: a duration in microseconds, 0 = never) and
// returns the raw token.
func (s *Store) CreatePAT(user uint32, name string, expiry uint64) (string, error) {
	raw, err := auth.NewToken(nil)
	if err != nil {
		return "", err
	}
	req := wire.CreatePersonalAccessToken{Name: name, Expiry: expiry}
	c, err := s.submit(Entry{Kind: KindCommand, UserID: user, Code: wire.CmdCreatePersonalAccessToken, Body: req.AppendTo(nil), Secret: []byte(auth.HashToken(raw))})
	if err != nil {
		return "", err
	}
	if c.res.code != 0 {
		return "", wire.ErrorForCode(c.res.code)
	}
	return raw, nil
}

// WirePermissions converts global flags of the auth model to a wire
// permission set (no per-stream entries).
func WirePermissions(g auth.GlobalPermissions) *wire.Permissions {
	return &wire.Permissions{Global: g}
}
