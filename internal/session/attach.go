package session

import "github.com/iggo-dev/iggo/wire"

// Attaching a connection to an existing session (ATTACH_SESSION, an Iggo
// extension): a client that talks to several nodes of a cluster at once
// (Iggo's SDK routes each partition's requests to its leader) needs every
// connection bound to its one client id, so that the partitions' duplicate
// windows and its consumer-group memberships see one client. A Register
// per connection would do that but raise the session epoch each time,
// fencing the client's other connections out of the metadata plane, and
// the close of each such connection would commit a Logout that ends the
// client's group memberships. An attached connection instead takes the
// session the client already holds, commits nothing, and commits nothing
// when it ends.

// AttachResult is the outcome of an attach: an eviction, a status-deny
// code, or a success reply.
type AttachResult struct {
	// Evict is non-zero when the attach is refused with an eviction.
	Evict wire.EvictionReason
	// Status is non-zero (58) when the session is not known here yet.
	Status uint32
	// Reply is the success payload.
	Reply wire.LoginRegisterReply
}

// sessionOwner is the client-table read Attach needs (ClientTable has it).
type sessionOwner interface {
	Owner(client wire.Uint128) (epoch uint64, user uint32, ok bool)
}

// Attach handles ATTACH_SESSION: the credentials are checked like a
// login's (same evictions); then c is bound to client's session when the
// client table holds that session live under the same user.
//
//   - a session the table does not know yet (this node has not applied
//     the Register), or that ended: status 58, so the client retries;
//   - an older session than the table's (the client registered again
//     since): Eviction(7 SessionTooLow);
//   - a session of another user: Eviction(9 InvalidCredentials).
//
// An already bound connection gets its binding back, as a login does.
func (m *Manager) Attach(c *Conn, client wire.Uint128, body []byte) AttachResult {
	var req wire.AttachSession
	if req.Decode(body) != nil {
		return AttachResult{Evict: wire.EvictMalformedLogin}
	}
	user, v, evict := m.authenticate(req.Login)
	if evict != 0 {
		return AttachResult{Evict: evict}
	}
	reply := wire.LoginRegisterReply{ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: m.opts.ServerVersion}
	if b, bound := c.Binding(); bound {
		reply.UserID, reply.Session = uint32(b.UserID), b.Session
		return AttachResult{Reply: reply}
	}
	o, ok := m.table.(sessionOwner)
	if !ok {
		return AttachResult{Status: wire.ErrFeatureUnavailable.Code}
	}
	epoch, owner, live := o.Owner(client)
	switch {
	case !live || epoch < req.Session:
		return AttachResult{Status: wire.ErrTransientNotAccepted.Code}
	case epoch > req.Session:
		return AttachResult{Evict: wire.EvictSessionTooLow}
	case owner != uint32(user.ID):
		return AttachResult{Evict: wire.EvictInvalidCredentials}
	}
	c.setBinding(Binding{
		Client: client, Session: epoch, UserID: user.ID, Attached: true,
		ProtocolVersion: v.ProtocolVersion, SDKName: v.SDKName, SDKVersion: v.SDKVersion,
	})
	m.opts.Logger.Debug("connection attached to a session", "conn", c.ID, "addr", c.Addr, "user", uint32(user.ID), "session", epoch)
	reply.UserID, reply.Session = uint32(user.ID), epoch
	return AttachResult{Reply: reply}
}

// Owner returns the epoch and user of client's session; false when the
// table has no entry for the client or its session ended.
func (t *ClientTable) Owner(client wire.Uint128) (epoch uint64, user uint32, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, found := t.byClient[client]
	if !found || ent.ended {
		return 0, 0, false
	}
	return ent.epoch, ent.userID, true
}

// AttachConsumer handles ATTACH_CONSUMER_SESSION (wire/consumer_routing.go)
// once this node applied the metadata the request names: the logged-in
// connection c acts for client's session in consumer groups from now on.
// It answers 0, or the status of a refusal: 40 when c is not logged in;
// 30 (StaleClient) when the client table does not hold client's session
// live at exactly epoch under c's user (another user's session, a session
// that ended or was replaced by a new login), so that the client fetches
// its route and session again. Nothing is committed.
func (m *Manager) AttachConsumer(c *Conn, client wire.Uint128, epoch uint64) uint32 {
	b, bound := c.Binding()
	if !bound {
		return wire.ErrUnauthenticated.Code
	}
	o, ok := m.table.(sessionOwner)
	if !ok {
		return wire.ErrFeatureUnavailable.Code
	}
	cur, owner, live := o.Owner(client)
	if !live || cur != epoch || owner != uint32(b.UserID) {
		return wire.ErrStaleClient.Code
	}
	c.mu.Lock()
	if c.bound && c.bind.Client == b.Client {
		c.bind.Consumer, c.bind.ConsumerSession = client, epoch
	}
	c.mu.Unlock()
	m.opts.Logger.Debug("connection attached to a consumer session", "conn", c.ID, "addr", c.Addr, "user", uint32(b.UserID), "session", epoch)
	return 0
}
