package httpapi

import (
	"net/http"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// CreateUserRequest is POST /users (status required).
type CreateUserRequest struct {
	Username    *string          `json:"username"`
	Password    *string          `json:"password"`
	Status      *string          `json:"status"`
	Permissions *PermissionsJSON `json:"permissions"`
}

// UpdateUserRequest is PUT /users/{user_id}.
type UpdateUserRequest struct {
	Username *string           `json:"username,omitempty"`
	Status   *string           `json:"status,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
}

// ChangePasswordRequest is PUT /users/{user_id}/password.
type ChangePasswordRequest struct {
	CurrentPassword *string `json:"current_password"`
	NewPassword     *string `json:"new_password"`
}

// UpdatePermissionsRequest is PUT /users/{user_id}/permissions (absent =
// clear).
type UpdatePermissionsRequest struct {
	Permissions *PermissionsJSON `json:"permissions"`
}

// CreatePATRequest is POST /personal-access-tokens.
type CreatePATRequest struct {
	Name   *string `json:"name"`
	Expiry *uint64 `json:"expiry"`
}

func validUsername(s string) bool {
	return len(s) >= auth.MinUsernameBytes && len(s) <= auth.MaxUsernameBytes
}

func validPassword(s string) bool {
	return len(s) >= auth.MinPasswordBytes && len(s) <= auth.MaxPasswordBytes
}

func (c *call) getUsers() error {
	out, err := c.read(wire.CmdGetUsers, nil)
	if err != nil {
		return err
	}
	var us wire.Users
	if err := decodeReply(out.payload, &us); err != nil {
		return err
	}
	list := make([]UserInfo, 0, len(us))
	for i := range us {
		list = append(list, userJSON(&us[i]))
	}
	return c.json(http.StatusOK, list)
}

// userPath reads {user_id}; allowMe maps "me" to the caller.
func (c *call) userPath(allowMe bool) (wire.Identifier, error) {
	if allowMe && c.r.PathValue("user_id") == "me" {
		return wire.NumericID(uint32(c.user())), nil
	}
	return c.ident("user_id")
}

func (c *call) getUser() error {
	id, err := c.userPath(true)
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetUser, &wire.GetUser{UserID: id})
	if err != nil {
		return err
	}
	if len(out.payload) == 0 {
		return errNotFound()
	}
	var d wire.UserDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, userDetailsJSON(&d))
}

func (c *call) createUser() error {
	var req CreateUserRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Username == nil || req.Password == nil || req.Status == nil {
		return errUnprocessable("username, password and status are required")
	}
	if !validUsername(*req.Username) {
		return codeError(wire.ErrInvalidUsername.Code)
	}
	if !validPassword(*req.Password) {
		return codeError(wire.ErrInvalidPassword.Code)
	}
	st, ok := parseStatus(*req.Status)
	if !ok {
		return errUnprocessable("status must be active or inactive")
	}
	perms, err := wirePermissions(req.Permissions)
	if err != nil {
		return err
	}
	out, err := c.write(wire.CmdCreateUser, &wire.CreateUser{Username: *req.Username, Password: *req.Password, Status: st, Permissions: perms})
	if err != nil {
		return err
	}
	var d wire.UserDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, userDetailsJSON(&d))
}

func (c *call) updateUser() error {
	id, err := c.ident("user_id")
	if err != nil {
		return err
	}
	var req UpdateUserRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if len(req.Options) > 0 {
		return codeError(wire.ErrUnsupportedOptionKey.Code)
	}
	u := &wire.UpdateUser{UserID: id}
	if req.Username != nil {
		if !validUsername(*req.Username) {
			return codeError(wire.ErrInvalidUsername.Code)
		}
		u.Username = *req.Username
	}
	if req.Status != nil {
		st, ok := parseStatus(*req.Status)
		if !ok {
			return errUnprocessable("status must be active or inactive")
		}
		u.Status = st
	}
	if _, err := c.write(wire.CmdUpdateUser, u); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) deleteUser() error {
	id, err := c.ident("user_id")
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdDeleteUser, &wire.DeleteUser{UserID: id}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

// changePassword also revokes every token of the user issued before the
// change (an Iggo addition, see Revocations).
func (c *call) changePassword() error {
	id, err := c.ident("user_id")
	if err != nil {
		return err
	}
	var req ChangePasswordRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.CurrentPassword == nil || req.NewPassword == nil {
		return errUnprocessable("current_password and new_password are required")
	}
	if !validPassword(*req.CurrentPassword) || !validPassword(*req.NewPassword) {
		return codeError(wire.ErrInvalidPassword.Code)
	}
	if _, err := c.write(wire.CmdChangePassword, &wire.ChangePassword{UserID: id, CurrentPassword: *req.CurrentPassword, NewPassword: *req.NewPassword}); err != nil {
		return err
	}
	target, ok := c.resolveUser(id)
	if ok {
		if err := c.s.revoked.RevokeUser(target); err != nil {
			c.s.log.Warn("could not persist a token revocation", "err", err)
		}
	}
	return c.empty(http.StatusNoContent)
}

// resolveUser finds a user id by identifier in the user store.
func (c *call) resolveUser(id wire.Identifier) (auth.UserID, bool) {
	st := c.s.authn.Store()
	if id.IsNumeric() {
		u, ok := st.UserByID(auth.UserID(id.Num))
		return u.ID, ok
	}
	u, ok := st.UserByName(id.Str)
	return u.ID, ok
}

func (c *call) updatePermissions() error {
	id, err := c.ident("user_id")
	if err != nil {
		return err
	}
	var req UpdatePermissionsRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	perms, err := wirePermissions(req.Permissions)
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdUpdatePermissions, &wire.UpdatePermissions{UserID: id, Permissions: perms}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) getPATs() error {
	out, err := c.read(wire.CmdGetPersonalAccessTokens, nil)
	if err != nil {
		return err
	}
	var ps wire.PersonalAccessTokens
	if err := decodeReply(out.payload, &ps); err != nil {
		return err
	}
	list := make([]PAT, 0, len(ps))
	for _, p := range ps {
		e := PAT{Name: p.Name}
		if p.ExpiryAt != 0 {
			v := p.ExpiryAt
			e.ExpiryAt = &v
		}
		list = append(list, e)
	}
	return c.json(http.StatusOK, list)
}

func (c *call) createPAT() error {
	var req CreatePATRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil || req.Expiry == nil {
		return errUnprocessable("name and expiry are required")
	}
	if n := len(*req.Name); n < 3 || n > 30 {
		return codeError(wire.ErrInvalidPersonalAccessTokenName.Code)
	}
	out, err := c.write(wire.CmdCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: *req.Name, Expiry: *req.Expiry})
	if err != nil {
		return err
	}
	var t wire.RawToken
	if err := decodeReply(out.payload, &t); err != nil {
		return err
	}
	return c.json(http.StatusOK, RawToken{Token: t.Token})
}

func (c *call) deletePAT() error {
	name := c.r.PathValue("name")
	if _, err := c.write(wire.CmdDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: name}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}
