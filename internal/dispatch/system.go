package dispatch

import (
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// UnauthenticatedUserID is the user_id GET_ME/GET_CLIENT/GET_CLIENTS report
// for a connection that has not logged in. semantics.md §7 gives u32::MAX;
// commands.md says 0 with "UNKNOWN for certain". Iggo follows semantics.md:
// 0 is the root user's id and would make an anonymous connection look
// like root.
const UnauthenticatedUserID = ^uint32(0)

func (d *Dispatcher) registerSystem() {
	// PING: empty request, empty reply. Like every command without
	// request fields, bytes in the body are ignored (the reference decodes
	// a prefix of no fields; docs/DESIGN.md, "Reference parity").
	d.Handle(wire.CmdPing, func(x *Exchange) { x.Reply(nil) })
	// FLUSH_UNSAVED_BUFFER is always FeatureUnavailable (semantics.md §4.3).
	d.Handle(wire.CmdFlushUnsavedBuffer, func(x *Exchange) { x.Deny(wire.ErrFeatureUnavailable.Code) })
	d.Handle(wire.CmdGetMe, d.getMe)
	d.Handle(wire.CmdGetClient, d.getClient)
	d.Handle(wire.CmdGetClients, d.getClients)
}

// clientDetails describes one connection as GET_ME/GET_CLIENT report it.
func (d *Dispatcher) clientDetails(c *session.Conn) wire.ClientDetails {
	cd := wire.ClientDetails{ClientID: c.ID, UserID: UnauthenticatedUserID, Transport: wire.Transport(c.Transport), Address: c.Addr}
	if b, ok := c.Binding(); ok {
		cd.UserID = uint32(b.UserID)
		if d.groups != nil {
			cd.ConsumerGroups = d.groups(b.Client)
		}
	}
	return cd
}

// getMe answers GET_ME (20): the caller's own connection record; any
// logged-in user may ask. The request has no fields; body bytes are
// ignored.
func (d *Dispatcher) getMe(x *Exchange) {
	cd := d.clientDetails(x.Conn)
	x.Reply(cd.AppendTo(x.Scratch()))
}

// canReadServers applies the server_info rule (semantics.md §2.4); a user
// deleted since login has no permissions.
func (x *Exchange) canReadServers() bool {
	u, ok := x.User()
	return ok && u.CanReadServers()
}

// getClient answers GET_CLIENT (21): ClientDetails of a live connection
// by transport client id, or an empty body when there is none. Needs
// server_info (status 41 otherwise).
func (d *Dispatcher) getClient(x *Exchange) {
	var req wire.GetClient
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !x.canReadServers() {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	c, ok := d.sessions.Conn(req.ClientID)
	if !ok {
		x.Reply(nil)
		return
	}
	cd := d.clientDetails(c)
	x.Reply(cd.AppendTo(x.Scratch()))
}

// getClients answers GET_CLIENTS (22): every live connection on this node,
// logged in or not, ordered by client id. Needs server_info. The request
// has no fields; body bytes are ignored.
func (d *Dispatcher) getClients(x *Exchange) {
	if !x.canReadServers() {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	body := x.Scratch()
	for _, c := range d.sessions.Conns() {
		cd := d.clientDetails(c)
		h := cd.Header()
		body = h.AppendTo(body)
	}
	x.Reply(body)
}
