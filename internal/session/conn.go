package session

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// Transport is the transport code GET_CLIENTS reports (commands.md,
// "Client"): TLS variants report their base transport.
type Transport uint8

// Transports.
const (
	TransportTCP       Transport = 1
	TransportQUIC      Transport = 2
	TransportWebSocket Transport = 4
)

// Sink is how the session plane reaches a connection's writer from
// outside its reader: the stale-client verifier uses it to send an
// eviction and close the connection.
type Sink interface {
	// Evict queues an Eviction frame for client and closes the connection
	// once it is written (or at once when the writer is stuck).
	Evict(client wire.Uint128, reason wire.EvictionReason)
}

// Binding is the session a connection is bound to after login.
type Binding struct {
	Client  wire.Uint128
	Session uint64
	UserID  auth.UserID
	// ProtocolVersion, SDKName and SDKVersion come from the login body.
	ProtocolVersion uint32
	SDKName         string
	SDKVersion      string
	// Attached marks a connection bound by ATTACH_SESSION to a session
	// another connection registered (Manager.Attach): ending it commits no
	// Logout, so the session and its consumer-group memberships live on.
	Attached bool
	// Consumer and ConsumerSession name the coordinator session a logged-in
	// connection was attached to by ATTACH_CONSUMER_SESSION
	// (Manager.AttachConsumer; zero when it was not): the data connection
	// an official SDK opens to a partition's primary. Its partition
	// requests act for Consumer in consumer groups, while its own Client
	// keeps deduplicating its writes; they run only on the partition's
	// leader (58 elsewhere, so the SDK asks for the route again).
	Consumer        wire.Uint128
	ConsumerSession uint64
}

// GroupClient is the client id consumer groups know the connection's
// requests by: the attached coordinator session's, else its own.
func (b Binding) GroupClient() wire.Uint128 {
	if !b.Consumer.IsZero() {
		return b.Consumer
	}
	return b.Client
}

// Conn is the session-plane state of one transport connection
// (semantics.md §1.2): Connected until a login binds it, Bound after.
type Conn struct {
	// ID is the server-side transport client id reported as client_id by
	// GET_ME/GET_CLIENTS: a per-node sequence, unique among live connections.
	ID uint32
	// Transport and Addr ("ip:port" of the peer) are fixed at accept.
	Transport Transport
	Addr      string

	sink     Sink
	lastSeen atomic.Int64 // unix nanoseconds of the last request
	// ctx ends when the connection is closed (Manager.Close).
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	bound bool    // guarded by mu
	bind  Binding // guarded by mu
}

// Binding returns the connection's binding and whether it is bound.
func (c *Conn) Binding() (Binding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bind, c.bound
}

// Session returns the bound session epoch, 0 when not bound (the value
// direct replies carry in the op field).
func (c *Conn) Session() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.bound {
		return 0
	}
	return c.bind.Session
}

func (c *Conn) setBinding(b Binding) {
	c.mu.Lock()
	c.bind, c.bound = b, true
	c.mu.Unlock()
}

// unbind clears the binding and returns the old one.
func (c *Conn) unbind() (Binding, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.bind, c.bound
	c.bind, c.bound = Binding{}, false
	return b, ok
}

// Context returns a context that ends when the connection is closed: the
// bound of every wait a request of the connection makes. A Conn not made
// by Manager.Open (tests) never ends.
func (c *Conn) Context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// LastSeen returns the time of the last request in unix nanoseconds.
func (c *Conn) LastSeen() int64 { return c.lastSeen.Load() }
