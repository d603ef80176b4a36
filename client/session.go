package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// register logs in on cn (operation 1, request 0, session 0; commands.md
// §40 and §45) and records the session epoch on the connection. A
// transient rejection is retried with the identical frame.
func (c *Client) register(ctx context.Context, cn *conn, cr *credentials) (*wire.LoginRegisterReply, error) {
	version := wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: c.opts.sdkName, SDKVersion: c.opts.sdkVersion}
	var cl *call
	if cr.token != "" {
		cl = newCall(wire.CmdLoginRegisterWithPAT, 64+len(cr.token))
		body := wire.LoginRegisterWithPAT{Version: version, Token: cr.token}
		cl.frame = body.AppendTo(cl.frame)
	} else {
		cl = newCall(wire.CmdLoginRegister, 64+len(cr.username)+len(cr.password))
		body := wire.LoginRegister{Version: version, Username: cr.username, Password: cr.password}
		cl.frame = body.AppendTo(cl.frame)
	}
	cl.seal(c.id)
	rp := c.newReplay(true)
	for {
		if err := c.exchange(ctx, cn, cl); err != nil {
			return nil, err
		}
		payload, err := cl.result()
		if err != nil {
			if !isTransient(err) {
				return nil, err
			}
			pause, _, ok := rp.next(err)
			if !ok {
				return nil, err
			}
			if err := sleep(ctx, pause); err != nil {
				return nil, err
			}
			cl.rearm()
			continue
		}
		var r wire.LoginRegisterReply
		if err := r.Decode(payload); err != nil {
			return nil, &ProtocolError{Reason: "undecodable login reply: " + err.Error()}
		}
		cn.session.Store(r.Session)
		cn.login.Store(&r)
		c.router.loggedIn()
		return &r, nil
	}
}

// Login logs in with a username and password (LOGIN_REGISTER, code 40)
// and remembers the credentials for reconnects. The session epoch of the
// reply is echoed in every later request. A refused login is a
// *wire.EvictionError (reason 9 matches wire.ErrInvalidCredentials).
// Against a cluster the client then follows the leader (ClusterPolicy):
// it logs in there under the same client id and returns that reply.
//
// On a connection that is already logged in, the server answers with the
// existing session and does not switch users (semantics.md §1.4 step 5):
// Logout first to log in as someone else.
func (c *Client) Login(ctx context.Context, username, password string) (*wire.LoginRegisterReply, error) {
	return c.login(ctx, wire.CmdLoginRegister, &credentials{username: username, password: password})
}

// LoginWithToken logs in with a personal access token
// (LOGIN_REGISTER_WITH_PAT, code 45) and remembers it for reconnects; it
// follows the cluster leader like Login. An
// unknown or expired token is a *wire.EvictionError matching
// wire.ErrInvalidPersonalAccessToken.
func (c *Client) LoginWithToken(ctx context.Context, token string) (*wire.LoginRegisterReply, error) {
	return c.login(ctx, wire.CmdLoginRegisterWithPAT, &credentials{token: token})
}

func (c *Client) login(ctx context.Context, code wire.Command, cr *credentials) (*wire.LoginRegisterReply, error) {
	cn, err := c.current(ctx)
	if err != nil {
		return nil, wrapCmd(code, err)
	}
	r, err := c.register(ctx, cn, cr)
	if err != nil {
		return nil, wrapCmd(code, err)
	}
	c.mu.Lock()
	c.creds = cr
	c.mu.Unlock()
	c.router.reset() // node connections attach again with these credentials
	if leader, ok := c.leaderElsewhere(ctx, cn); ok && c.moveTo(cn, leader) {
		// The reconnect cycle logs in on the leader (and settles there).
		select {
		case <-cn.dead:
		case <-ctx.Done():
			return nil, wrapCmd(code, ctx.Err())
		}
		next, err := c.current(ctx)
		if err != nil {
			return nil, wrapCmd(code, err)
		}
		if lr := next.login.Load(); lr != nil {
			r = lr
		}
	}
	return r, nil
}

// Logout ends the session (LOGOUT_USER, code 39, operation 3: it takes a
// request number and is stamped like a metadata operation). The server
// removes the client from its consumer groups. The connection stays open
// for PING and a new Login; reconnects no longer log in.
func (c *Client) Logout(ctx context.Context) error {
	if err := c.call(ctx, wire.CmdLogoutUser, nil, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.creds = nil
	if c.cn != nil {
		c.cn.session.Store(0)
	}
	c.mu.Unlock()
	c.router.reset()
	return nil
}
