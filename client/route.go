package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Partition routing (Iggo clusters): the client reads the partition map
// (CLUSTER_PARTITIONS) and sends each partition request — SEND_MESSAGES
// naming a partition or a key, POLL_MESSAGES and the consumer-offset
// commands naming a partition — to that partition's leader, on a
// connection per node. Everything else, and every partition request the
// map cannot place, goes to the main connection (the metadata leader).
//
// The map is read in the background: first when a partition request
// finds none, again when it is older than PartitionMapMaxAge, and soon
// after a partition request was answered 58 (not the leader), never more
// often than PartitionMapMinInterval. A node's connection is dialed on
// first use, also in the background (the requests meanwhile take the main
// connection), with the client's credentials, TLS and transport, and is
// bound to the main connection's session by ATTACH_SESSION, so the node
// sees the same client id (one partition duplicate window, one consumer
// group member) and the main connection's session is not fenced. When a
// node's connection breaks, its requests are resent on the main
// connection with their request numbers, that node is left alone for
// 4 × PartitionMapMinInterval, and the map is read again.
//
// Routing is on only against a cluster (the metadata read after login
// lists more than one node, so not with ClusterPolicy.DisableRedirect)
// and turns itself off, silently, until the next login when the server
// does not serve the map or the attachment (a single node, the reference
// server).
//
// Goroutines: at most one map read at a time and one dial per node being
// dialed (both tracked by Client.wg and ended by Close), and each node
// connection's reader, writer and monitor (conn.go). The router's state is
// guarded by router.mu; a node connection that closes hands its calls to
// router.adopt from its reader.

// routingEnabled reports whether WithPartitionRouting left routing on.
func (o *options) routingEnabled() bool { return !o.noRouting }

// WithPartitionRouting turns partition routing on (the default) or off.
// Off, every request goes to the node the client is connected to (the
// cluster leader), which serves or forwards partition requests itself.
func WithPartitionRouting(on bool) Option { return func(o *options) { o.noRouting = !on } }

// Partition-map defaults (ClusterPolicy).
const (
	DefaultPartitionMapMaxAge      = 30 * time.Second
	DefaultPartitionMapMinInterval = 250 * time.Millisecond
)

// mapFetchTimeout bounds one read of the partition map.
const mapFetchTimeout = 5 * time.Second

// router holds the partition map and the node connections of a Client.
//
// Lock order: router.mu before Client.mu (pick reads the main address,
// goTracked checks closed); nothing holds Client.mu or a conn's mu while
// taking router.mu.
type router struct {
	c *Client
	// on mirrors activeLocked for the fast path of pick: a client that
	// does not route takes no lock for it.
	on atomic.Bool

	mu        sync.Mutex
	clustered bool                 // guarded by mu: the last metadata read listed several nodes
	off       bool                 // guarded by mu: the server lacks the map or attachment; until the next login
	table     *routeTable          // guarded by mu: nil until a map was read
	readAt    time.Time            // guarded by mu: when table was read
	lastFetch time.Time            // guarded by mu: start of the last read
	stale     bool                 // guarded by mu: read again as soon as the interval allows
	fetching  bool                 // guarded by mu
	nodes     map[string]*nodeConn // guarded by mu: by addrKey
	gen       uint64               // guarded by mu: bumped by reset; late reads and dials are dropped
}

// nodeConn is the connection to one node, by address.
type nodeConn struct {
	addr    string
	cn      *conn     // nil while dialing or after a failure
	dialing bool      // a dial goroutine runs
	retryAt time.Time // no new dial before
}

// activeLocked reports whether routing may be used. Caller holds r.mu.
func (r *router) activeLocked() bool {
	return r.c.opts.routingEnabled() && r.clustered && !r.off
}

// updateLocked refreshes on after a change of clustered or off. Caller
// holds r.mu.
func (r *router) updateLocked() { r.on.Store(r.activeLocked()) }

// setClustered records whether the last cluster metadata read listed
// several nodes.
func (r *router) setClustered(clustered bool) {
	r.mu.Lock()
	r.clustered = clustered
	r.updateLocked()
	r.mu.Unlock()
}

// loggedIn runs after each successful login: a server that did not serve
// the map before is asked again.
func (r *router) loggedIn() {
	r.mu.Lock()
	r.off = false
	r.updateLocked()
	r.mu.Unlock()
}

// pick returns the connection for a partition request with route rk: the
// connection to the partition's leader when the map names one at another
// address than the main connection's and that connection is up; nil for
// the main connection. It starts what is missing (a map read, a dial) in
// the background.
func (r *router) pick(rk *routeKey) *conn {
	if rk.kind == routeNone || !r.on.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.activeLocked() {
		return nil
	}
	r.refreshLocked()
	if r.table == nil {
		return nil
	}
	addr, ok := r.table.leaderAddr(rk)
	if !ok || sameAddr(addr, r.c.Addr()) {
		return nil
	}
	return r.nodeLocked(addr)
}

// notLeader handles a 58 answer to a partition request cl: the map is
// stale for that partition (its leader is forgotten) and is read again
// soon; when the answer came from a node connection, the retry takes the
// main connection whatever the new map says, so requests alternate
// between the map's leader and the main connection while they disagree.
// Called by the goroutine that owns cl, after its reply.
func (r *router) notLeader(cl *call) {
	rk := &cl.route
	if rk.kind == routeNone {
		return
	}
	if cl.onNode {
		cl.avoidNode = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.activeLocked() {
		return
	}
	if r.table != nil {
		r.table.forget(rk)
	}
	r.stale = true
	r.refreshLocked()
}

// refreshLocked starts a background read of the map when it is missing,
// stale or old, unless one runs or the last started less than the
// minimum interval ago. Caller holds r.mu.
func (r *router) refreshLocked() {
	p := &r.c.opts.cluster
	now := time.Now()
	due := r.table == nil || r.stale || now.Sub(r.readAt) >= p.PartitionMapMaxAge
	if !due || r.fetching || now.Sub(r.lastFetch) < p.PartitionMapMinInterval {
		return
	}
	gen := r.gen
	if r.c.goTracked(func(ctx context.Context) { r.fetch(ctx, gen) }) {
		r.fetching, r.lastFetch = true, now
	}
}

// fetch reads the map and installs it, unless a reset came in between.
func (r *router) fetch(ctx context.Context, gen uint64) {
	ctx, cancel := context.WithTimeout(ctx, mapFetchTimeout)
	defer cancel()
	var m wire.PartitionMap
	err := r.c.call(ctx, wire.CmdClusterPartitions, &wire.ClusterPartitions{Flags: wire.PartitionMapLeadersOnly}, &m)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetching = false
	if gen != r.gen {
		return
	}
	switch {
	case err == nil:
		r.table, r.readAt, r.stale = newRouteTable(&m, r.c.scheme()), time.Now(), false
	case unsupported(err):
		r.off, r.table = true, nil
		r.updateLocked()
		r.c.opts.logger.Debug("iggy partition routing off: the server does not serve the partition map", "err", err)
	default:
		r.c.opts.logger.Debug("iggy partition map unavailable", "err", err)
	}
}

// unsupported reports whether err says the server does not serve an Iggo
// extension command (a single node, another server): a wire error other
// than a transient or authentication one, or an undecodable reply.
func unsupported(err error) bool {
	if _, ok := errors.AsType[*ProtocolError](err); ok {
		return true
	}
	return errors.Is(err, wire.ErrFeatureUnavailable) || errors.Is(err, wire.ErrInvalidCommand)
}

// nodeRetry is how long a node whose connection failed is left alone.
func (r *router) nodeRetry() time.Duration { return 4 * r.c.opts.cluster.PartitionMapMinInterval }

// nodeLocked returns the live connection to addr, or nil after starting
// its dial (unless one runs or the node is resting after a failure).
// Caller holds r.mu.
func (r *router) nodeLocked(addr string) *conn {
	if r.nodes == nil {
		r.nodes = map[string]*nodeConn{}
	}
	k := addrKey(addr)
	nc := r.nodes[k]
	if nc == nil {
		nc = &nodeConn{addr: addr}
		r.nodes[k] = nc
	}
	if nc.cn != nil {
		return nc.cn
	}
	if nc.dialing || time.Now().Before(nc.retryAt) {
		return nil
	}
	gen := r.gen
	if r.c.goTracked(func(ctx context.Context) { r.dialNode(ctx, nc, gen) }) {
		nc.dialing = true
	}
	return nil
}

// dialNode opens and attaches the connection of nc and publishes it.
func (r *router) dialNode(ctx context.Context, nc *nodeConn, gen uint64) {
	cn, err := r.c.openAttached(ctx, nc.addr)
	r.mu.Lock()
	nc.dialing = false
	if err != nil {
		nc.retryAt = time.Now().Add(r.nodeRetry())
		if unsupported(err) {
			r.off = true
			r.updateLocked()
		}
		r.mu.Unlock()
		r.c.opts.logger.Debug("iggy partition routing: node unavailable, using the main connection", "addr", nc.addr, "err", err)
		return
	}
	if gen != r.gen || r.nodes[addrKey(nc.addr)] != nc {
		r.mu.Unlock()
		cn.shutdown(ErrClosed)
		<-cn.dead
		return
	}
	nc.cn = cn
	r.mu.Unlock()
	r.c.opts.logger.Debug("iggy partition routing: connected to node", "addr", nc.addr, "session", cn.session.Load())
}

// adopt receives the unfinished calls of a node connection that closed:
// the node rests, the partitions it led are forgotten until the map is
// read again, and the calls are submitted again (to the main connection,
// or another node) with their request numbers. The attachment exchange
// itself fails.
func (r *router) adopt(cn *conn, calls []*call, cause error) {
	r.mu.Lock()
	if nc := r.nodes[addrKey(cn.addr)]; nc != nil && nc.cn == cn {
		nc.cn = nil
		nc.retryAt = time.Now().Add(r.nodeRetry())
		if r.table != nil {
			r.table.forgetNode(cn.addr)
		}
		r.stale = true
		if !errors.Is(cause, ErrClosed) {
			r.c.opts.logger.Debug("iggy node connection lost, using the main connection", "addr", cn.addr, "cause", cause)
		}
	}
	r.mu.Unlock()
	for _, cl := range calls {
		if cl.noRetry {
			cl.finish(cause)
			continue
		}
		if err := r.c.submit(cl); err != nil {
			cl.finish(err)
		}
	}
}

// reset forgets the map and closes the node connections (Logout, Login
// as another user, Close).
func (r *router) reset() {
	r.mu.Lock()
	r.gen++
	r.table, r.stale, r.off = nil, false, false
	r.updateLocked()
	var conns []*conn
	for _, nc := range r.nodes {
		if nc.cn != nil {
			conns = append(conns, nc.cn)
		}
	}
	r.nodes = nil
	r.mu.Unlock()
	for _, cn := range conns {
		cn.shutdown(ErrClosed)
		<-cn.dead
	}
}

// goTracked runs f on a goroutine the Client's Close waits for, with a
// context that ends when the Client closes. It reports false (and runs
// nothing) when the Client is closed.
func (c *Client) goTracked(f func(ctx context.Context)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-c.quit:
				cancel()
			case <-done:
			}
		}()
		f(ctx)
	}()
	return true
}
