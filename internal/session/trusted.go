package session

import (
	"fmt"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// TransportHTTP is the transport code of connections that stand for an
// HTTP credential (GET_CLIENTS reports "HTTP" for it in the reference;
// such connections never appear there, see TrustedConn).
const TransportHTTP Transport = 3

// TrustedReadSession is the session epoch of a connection bound by
// ReadConn. It is never a client-table epoch, so a metadata request
// on such a connection is refused by the table (Eviction 12).
const TrustedReadSession = ^uint64(0)

// ReadConn returns a connection bound to user without a login and
// without a client-table entry, for reads whose credential was verified
// elsewhere (an HTTP bearer: http-api.md §8, "reads create nothing").
// client is the id the requests on it carry. The connection is not in
// the manager's registry, so it is not listed by GET_CLIENTS and not
// counted in clients_count.
func ReadConn(client wire.Uint128, user auth.UserID, addr string) *Conn {
	c := &Conn{Transport: TransportHTTP, Addr: addr}
	c.setBinding(Binding{Client: client, Session: TrustedReadSession, UserID: user, SDKName: "http"})
	return c
}

// RegisterTrusted commits a Register of client for user and returns a
// connection bound to the new session, for a credential verified outside
// the binary login (http-api.md §8: one client-table entry per HTTP
// credential). The connection is not in the manager's registry: it is
// neither listed by GET_CLIENTS nor counted in clients_count, and the
// heartbeat verifier never looks at it. End it with Logout.
func (m *Manager) RegisterTrusted(client wire.Uint128, user auth.UserID, addr string) (*Conn, error) {
	if client.IsZero() {
		return nil, fmt.Errorf("register trusted session: client id 0")
	}
	e, err := m.log.Append(Entry{Kind: EntryRegister, Client: client, UserID: uint32(user)})
	if err != nil {
		return nil, fmt.Errorf("register trusted session: %w", err)
	}
	c := &Conn{Transport: TransportHTTP, Addr: addr}
	c.lastSeen.Store(m.opts.Now().UnixNano())
	c.setBinding(Binding{Client: client, Session: e.Op, UserID: user, SDKName: "http"})
	m.opts.Logger.Debug("trusted session registered", "addr", addr, "user", uint32(user), "session", e.Op)
	return c, nil
}
