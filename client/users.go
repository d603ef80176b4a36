package client

import (
	"context"
	"math"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// GetUser returns a user with its permissions (GET_USER, code 31). The
// server's empty "no such user" answer is returned as
// wire.ErrResourceNotFound, the code the server uses for a missing user
// (semantics.md, code 20).
func (c *Client) GetUser(ctx context.Context, user wire.Identifier) (*wire.UserDetails, error) {
	var d wire.UserDetails
	if err := c.getIfPresent(ctx, wire.CmdGetUser, &wire.GetUser{UserID: user}, &d, wire.ErrResourceNotFound); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetUsers lists the users (GET_USERS, code 32).
func (c *Client) GetUsers(ctx context.Context) (wire.Users, error) {
	var us wire.Users
	if err := c.call(ctx, wire.CmdGetUsers, nil, &us); err != nil {
		return nil, err
	}
	return us, nil
}

// CreateUser creates a user (CREATE_USER, code 33) and returns it as
// stored. permissions may be nil for none.
func (c *Client) CreateUser(ctx context.Context, username, password string, status wire.UserStatus, permissions *wire.Permissions) (*wire.UserDetails, error) {
	var d wire.UserDetails
	req := &wire.CreateUser{Username: username, Password: password, Status: status, Permissions: permissions}
	if err := c.call(ctx, wire.CmdCreateUser, req, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// UpdateUser renames a user and/or changes its status (UPDATE_USER, code
// 35). An empty username or a zero status leaves that field unchanged.
func (c *Client) UpdateUser(ctx context.Context, user wire.Identifier, username string, status wire.UserStatus) error {
	return c.call(ctx, wire.CmdUpdateUser, &wire.UpdateUser{UserID: user, Username: username, Status: status}, nil)
}

// DeleteUser deletes a user (DELETE_USER, code 34).
func (c *Client) DeleteUser(ctx context.Context, user wire.Identifier) error {
	return c.call(ctx, wire.CmdDeleteUser, &wire.DeleteUser{UserID: user}, nil)
}

// UpdatePermissions replaces a user's permissions (UPDATE_PERMISSIONS,
// code 36); nil clears them.
func (c *Client) UpdatePermissions(ctx context.Context, user wire.Identifier, permissions *wire.Permissions) error {
	return c.call(ctx, wire.CmdUpdatePermissions, &wire.UpdatePermissions{UserID: user, Permissions: permissions}, nil)
}

// ChangePassword changes a user's password (CHANGE_PASSWORD, code 37); a
// wrong current password is wire.ErrInvalidCredentials.
func (c *Client) ChangePassword(ctx context.Context, user wire.Identifier, currentPassword, newPassword string) error {
	req := &wire.ChangePassword{UserID: user, CurrentPassword: currentPassword, NewPassword: newPassword}
	return c.call(ctx, wire.CmdChangePassword, req, nil)
}

// PATNeverExpires asks CreatePersonalAccessToken for a token that never
// expires (expiry u64::MAX on the wire).
const PATNeverExpires = time.Duration(math.MaxInt64)

// GetPersonalAccessTokens lists the caller's tokens
// (GET_PERSONAL_ACCESS_TOKENS, code 41). ExpiryAt is µs since the epoch,
// 0 for never.
func (c *Client) GetPersonalAccessTokens(ctx context.Context) (wire.PersonalAccessTokens, error) {
	var ts wire.PersonalAccessTokens
	if err := c.call(ctx, wire.CmdGetPersonalAccessTokens, nil, &ts); err != nil {
		return nil, err
	}
	return ts, nil
}

// CreatePersonalAccessToken creates a token for the caller
// (CREATE_PERSONAL_ACCESS_TOKEN, code 42) and returns the raw token, which
// the server shows only this once. expiry is relative to now: 0 takes the
// server default, PATNeverExpires never expires. It is sent as a u64 of
// microseconds (commands.md §42), not with the official Go SDK's u32 quirk.
func (c *Client) CreatePersonalAccessToken(ctx context.Context, name string, expiry time.Duration) (string, error) {
	var micros uint64
	switch {
	case expiry == PATNeverExpires:
		micros = wire.ExpiryNever
	case expiry > 0:
		micros = max(uint64(expiry/time.Microsecond), 1)
	}
	var t wire.RawToken
	if err := c.call(ctx, wire.CmdCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: name, Expiry: micros}, &t); err != nil {
		return "", err
	}
	return t.Token, nil
}

// DeletePersonalAccessToken deletes one of the caller's tokens by name
// (DELETE_PERSONAL_ACCESS_TOKEN, code 43).
func (c *Client) DeletePersonalAccessToken(ctx context.Context, name string) error {
	return c.call(ctx, wire.CmdDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: name}, nil)
}
