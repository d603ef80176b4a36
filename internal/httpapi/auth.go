package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// bearerPrefix is the exact Authorization prefix (http-api.md §2).
const bearerPrefix = "Bearer "

// authenticate verifies the bearer: a self-issued JWT (not revoked), else
// the same string as a raw personal access token. No or non-Bearer header
// -> 401 id 77; any other failure -> 401 id 40.
func (s *Server) authenticate(r *http.Request) (*credential, *apiError) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, bearerPrefix) {
		return nil, codeError(wire.ErrAccessTokenMissing.Code)
	}
	raw := h[len(bearerPrefix):]
	if raw == "" {
		return nil, codeError(wire.ErrAccessTokenMissing.Code)
	}
	if cl, err := s.tokens.Verify(raw); err == nil {
		if s.revoked.Revoked(cl) || !s.passwordUnchanged(cl) {
			return nil, codeError(wire.ErrUnauthenticated.Code)
		}
		return &credential{key: "jwt:" + cl.JTI, user: cl.User, expiry: time.Unix(cl.Expiry, 0), jti: cl.JTI, exp: cl.Expiry}, nil
	}
	return s.patCredential(raw)
}

// passwordUnchanged reports whether a token's user still has the password
// it had when the token was issued (PasswordStamp; tokens without the
// claim pass). A user that no longer exists fails.
func (s *Server) passwordUnchanged(cl Claims) bool {
	if cl.PasswordStamp == "" {
		return true
	}
	u, ok := s.authn.Store().UserByID(cl.User)
	return ok && stampMatches(cl.PasswordStamp, u.PasswordHash)
}

// patCredential accepts a raw PAT as a bearer (expired or owner inactive:
// 401 id 40).
func (s *Server) patCredential(raw string) (*credential, *apiError) {
	u, err := s.authn.Token(raw)
	if err != nil {
		return nil, codeError(wire.ErrUnauthenticated.Code)
	}
	hash := auth.HashToken(raw)
	c := &credential{key: "pat:" + hash, user: u.ID}
	if p, ok := s.authn.Store().PATByHash(hash); ok && p.ExpiryAt != 0 {
		c.expiry = time.UnixMicro(int64(p.ExpiryAt))
	}
	return c, nil
}

// loginRequest is POST /users/login.
type loginRequest struct {
	Username *string `json:"username"`
	Password *string `json:"password"`
	Version  *string `json:"version,omitempty"`
	Context  *string `json:"context,omitempty"`
}

// tokenRequest is POST /personal-access-tokens/login and
// POST /users/refresh-token.
type tokenRequest struct {
	Token *string `json:"token"`
}

// accessToken is the token part of IdentityInfo.
type accessToken struct {
	Token  string `json:"token"`
	Expiry uint64 `json:"expiry"`
}

// identityInfo is the reply of every login.
type identityInfo struct {
	UserID      uint32      `json:"user_id"`
	AccessToken accessToken `json:"access_token"`
}

func (s *Server) identity(user auth.UserID) (identityInfo, error) {
	stamp := ""
	if u, ok := s.authn.Store().UserByID(user); ok {
		stamp = PasswordStamp(u.PasswordHash)
	}
	t, err := s.tokens.IssueStamped(user, stamp)
	if err != nil {
		return identityInfo{}, err
	}
	return identityInfo{UserID: uint32(user), AccessToken: accessToken{Token: t.Token, Expiry: uint64(t.Expiry)}}, nil
}

// login: every failure is id 42 (invalid_credentials), as in http-api.md
// §3, but with status 401 rather than the reference's 400: a refused login
// is an authentication failure (docs/HTTP.md, "Errors").
func (c *call) login() error {
	var req loginRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Username == nil || req.Password == nil {
		return errUnprocessable("username and password are required")
	}
	u, err := c.s.authn.Password(*req.Username, *req.Password)
	if err != nil {
		return errBadCredentials()
	}
	id, err := c.s.identity(u.ID)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, id)
}

// patLogin: unknown or expired -> 401 id 53; owner inactive -> 400 id 47.
func (c *call) patLogin() error {
	var req tokenRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Token == nil {
		return errUnprocessable("token is required")
	}
	u, err := c.s.authn.Token(*req.Token)
	switch {
	case errors.Is(err, auth.ErrUserInactive):
		return codeError(wire.ErrUserInactive.Code)
	case err != nil:
		return codeError(wire.ErrInvalidPersonalAccessToken.Code)
	}
	id, err := c.s.identity(u.ID)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, id)
}

// refresh issues a new token for a valid, unrevoked JWT whose user's
// password did not change since it was issued (as every bearer is
// checked); the old one stays valid (stateless refresh, as the
// reference).
func (c *call) refresh() error {
	var req tokenRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Token == nil || *req.Token == "" {
		return codeError(wire.ErrUnauthenticated.Code)
	}
	cl, err := c.s.tokens.Verify(*req.Token)
	if err != nil || c.s.revoked.Revoked(cl) || !c.s.passwordUnchanged(cl) {
		return codeError(wire.ErrUnauthenticated.Code)
	}
	id, err := c.s.identity(cl.User)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, id)
}

// logout ends the credential's session on this node (a Logout is
// committed when it ever wrote) and, beyond the reference, revokes a JWT
// until its exp: through the metadata log (Options.TokenLog), so on every
// node of a cluster. 204 once the revocation applied on this node; when
// it could not be committed the binary protocol's 58 (never admitted, no
// metadata leader) or 57 (outcome unknown), both 503 with Retry-After: the
// token still verifies, so the client retries the logout with it (a retry
// after a 57 that did commit is refused with 401: the token is revoked).
func (c *call) logout() error {
	if hs := c.s.sessions.drop(c.cred.key); hs != nil {
		c.s.sessions.end(hs)
	}
	if c.cred.jti != "" {
		code, err := c.s.revoked.RevokeToken(c.cred.user, c.cred.jti, c.cred.exp)
		if code != 0 {
			c.s.log.Warn("logout: the token revocation was not committed", "code", code, "err", err)
			return codeError(code)
		}
		if err != nil {
			c.s.log.Warn("could not persist a token revocation", "err", err)
		}
	}
	return c.empty(http.StatusNoContent)
}
