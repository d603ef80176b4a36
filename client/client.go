package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Client is a connection to an Iggy server speaking binary protocol
// 0.11.0 over TCP or TLS. It is safe for concurrent use: requests from
// many goroutines are pipelined on one connection and replies are matched
// in order. Metadata operations are serialized (one in flight at a time),
// so their request numbers reach the server in increasing order and a
// retry never overtakes a newer request.
//
// Request numbering follows upstream-framing.md: one counter, starting at
// 1, is advanced by metadata operations, partition operations
// (SendMessages, Store/DeleteConsumerOffset), Logout and DeleteSegments;
// reads reuse its current value; Register uses 0. The counter and the
// client id live as long as the Client, across reconnects, so a request
// resent after a reconnect carries the same client id and request number
// and the server's deduplication (metadata client table, partition
// windows) recognizes it.
type Client struct {
	opts    options
	seeds   []string // configured addresses, in order (Dial's addr, then WithServerAddresses)
	id      wire.Uint128
	counter atomic.Uint64 // next request number

	// metaSem serializes metadata-plane requests (capacity 1).
	metaSem chan struct{}

	mu           sync.Mutex
	cn           *conn         // guarded by mu: the live connection, nil while reconnecting
	pending      []*call       // guarded by mu: calls waiting for a connection, in submission order
	reconnecting bool          // guarded by mu
	cycleDone    chan struct{} // guarded by mu: closed when the running reconnect cycle ends
	cycleErr     error         // guarded by mu: why the last cycle failed
	creds        *credentials  // guarded by mu: login used on (re)connect
	addr         string        // guarded by mu: address of the live (or last) connection
	next         string        // guarded by mu: leader the next reconnect dials first, "" for none
	roster       []string      // guarded by mu: healthy cluster nodes of the last metadata read
	closed       bool          // guarded by mu
	quit         chan struct{} // closed by Close
	wg           sync.WaitGroup

	// frames keeps SendBatch frame buffers for reuse.
	frames framePool

	// router sends partition requests to their leaders (route.go).
	router router
}

// Dial connects to addr ("host:port") and, when credentials are given
// (WithCredentials, WithToken), logs in. addr may list several seeds
// separated by commas ("10.0.0.1:8090,10.0.0.2:8090"), and
// WithServerAddresses adds more: they are tried in order, each once, and
// the first that connects (and logs in) is used. A refused login is not
// tried elsewhere. The connection attempts are not retried: an unreachable
// server or refused login is returned as the error (a refused login as a
// *wire.EvictionError matching, for example, wire.ErrInvalidCredentials;
// with several seeds, the errors of all of them joined).
//
// After the login the client follows the cluster leader (ClusterPolicy):
// against a cluster, Dial returns connected to the leader.
//
// addr may also be a connection string (iggy://, iggy+quic://, iggy+ws://;
// see ConnectionString): its credentials and options apply first, opts
// after them. QUIC and WebSocket need WithTransport (client/quic,
// client/ws).
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	if IsConnectionString(addr) { // connstring.go
		return dialConnectionString(ctx, addr, opts)
	}
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	o.normalize()
	var seeds []string
	if addr != "" {
		var err error
		if seeds, err = parseAddrList(addr); err != nil {
			return nil, err
		}
	}
	seeds = uniqueAddrs(seeds, o.seeds)
	if len(seeds) == 0 {
		return nil, errNoAddress
	}
	c := &Client{opts: o, seeds: seeds, addr: seeds[0], id: o.clientID, metaSem: make(chan struct{}, 1), quit: make(chan struct{})}
	c.router.c = c
	if c.id.IsZero() {
		c.id = newClientID()
	}
	c.counter.Store(1)
	c.creds = o.creds
	var errs []error
	for _, a := range seeds {
		cn, err := c.connect(ctx, a, c.creds)
		if err == nil {
			c.mu.Lock()
			alive := cn.err() == nil // a connection that died while settling is not published
			if alive {
				c.cn, c.addr = cn, cn.addr
			}
			c.mu.Unlock()
			if alive {
				return c, nil
			}
			<-cn.dead
			err = &ConnError{Err: cn.err()}
		}
		if len(seeds) == 1 || terminalLoginError(err) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, fmt.Errorf("%s: %w", a, err))
	}
	return nil, errors.Join(errs...)
}

// newClientID mints a random non-zero client id.
func newClientID() wire.Uint128 {
	var b [16]byte
	for {
		rand.Read(b[:])
		if id := wire.GetUint128(b[:]); !id.IsZero() {
			return id
		}
	}
}

// ID returns the protocol client id (request header bytes 128..144).
func (c *Client) ID() wire.Uint128 { return c.id }

// Addr returns the address of the current connection (after a redirect,
// the cluster leader's), or of the last one while reconnecting.
func (c *Client) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addr
}

// Session returns the session epoch of the current connection's login,
// or 0 when not logged in or not connected.
func (c *Client) Session() uint64 {
	c.mu.Lock()
	cn := c.cn
	c.mu.Unlock()
	if cn == nil {
		return 0
	}
	return cn.session.Load()
}

// Close closes the connection without logging out (the server ends the
// session when the transport closes, semantics.md §1.9) and fails every
// request still waiting with ErrClosed. It waits for the client's
// goroutines to exit. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return nil
	}
	c.closed = true
	close(c.quit)
	cn, pending := c.cn, c.pending
	c.cn, c.pending = nil, nil
	c.mu.Unlock()
	for _, p := range pending {
		p.finish(ErrClosed)
	}
	if cn != nil {
		cn.shutdown(ErrClosed)
		<-cn.dead
	}
	c.router.reset()
	c.wg.Wait()
	return nil
}

// nextRequest returns the request number for a call with rule n. Called
// by connection writers under their lock, so numbers reach the wire in
// order.
func (c *Client) nextRequest(n numbering) uint64 {
	switch n {
	case numberZero:
		return 0
	case numberCurrent:
		return c.counter.Load()
	}
	return c.counter.Add(1) - 1
}

// dial opens the transport to addr: TCP, then TLS when configured.
func (c *Client) dial(ctx context.Context, addr string) (net.Conn, error) {
	if c.opts.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.dialTimeout)
		defer cancel()
	}
	dial := c.opts.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if c.opts.tls == nil {
		return nc, nil
	}
	cfg := c.opts.tls.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// connect opens a connection to addr and, with credentials, logs in on
// it and settles on the cluster leader (leader.go), so the returned
// connection may be to another address (its addr). It is not yet
// published.
func (c *Client) connect(ctx context.Context, addr string, cr *credentials) (*conn, error) {
	cn, err := c.open(ctx, addr, cr)
	if err != nil || cr == nil {
		return cn, err
	}
	return c.settle(ctx, cn, cr), nil
}

// open dials addr and, with credentials, logs in.
func (c *Client) open(ctx context.Context, addr string, cr *credentials) (*conn, error) {
	nc, err := c.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	cn := newConn(c, nc, addr)
	cn.start()
	if cr != nil {
		if _, err := c.register(ctx, cn, cr); err != nil {
			cn.shutdown(err)
			<-cn.dead
			return nil, err
		}
	}
	return cn, nil
}

// submit hands c to the connection of its partition's leader (route.go),
// else to the live connection, or parks it until a reconnect publishes
// one.
func (c *Client) submit(cl *call) error {
	if !cl.avoidNode {
		if cn := c.router.pick(&cl.route); cn != nil {
			cl.onNode = true
			if cn.enqueue(cl) {
				return nil
			}
		}
	}
	cl.onNode, cl.avoidNode = false, false
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return ErrClosed
		}
		cn := c.cn
		if cn == nil {
			if c.opts.reconnect.Disabled {
				err := c.cycleErr
				c.mu.Unlock()
				return &ConnError{Err: err}
			}
			c.pending = append(c.pending, cl)
			c.startReconnect()
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		if cn.enqueue(cl) {
			return nil
		}
		// cn is closing. Until its handoff reaches adopt it is still
		// c.cn: park the call behind the ones adopt will put first.
		c.mu.Lock()
		if c.cn == cn && !c.closed {
			c.pending = append(c.pending, cl)
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
	}
}

// adopt receives the unfinished calls of a connection that closed. The
// calls go first in line (they were submitted before anything parked
// since) and a reconnect cycle starts; with reconnection disabled or the
// client closed they fail.
func (c *Client) adopt(cn *conn, calls []*call, cause error) {
	c.mu.Lock()
	live := c.cn == cn
	if live {
		c.cn = nil
	}
	if !live && len(calls) == 0 {
		c.mu.Unlock()
		return
	}
	if c.closed || c.opts.reconnect.Disabled {
		if live {
			c.cycleErr = cause
		}
		pending := c.pending
		c.pending = nil
		err := error(ErrClosed)
		if !c.closed {
			err = &ConnError{Err: cause}
		}
		c.mu.Unlock()
		for _, p := range append(calls, pending...) {
			p.finish(err)
		}
		return
	}
	if live && !errors.Is(cause, errFollowLeader) {
		c.opts.logger.Warn("iggy connection lost", "addr", cn.addr, "cause", cause)
	}
	c.pending = append(calls, c.pending...)
	if len(c.pending) > 0 {
		c.startReconnect()
	}
	c.mu.Unlock()
}

// startReconnect starts a reconnect cycle unless one runs. Caller must
// hold c.mu.
func (c *Client) startReconnect() {
	if c.reconnecting || c.closed {
		return
	}
	c.reconnecting = true
	c.cycleDone = make(chan struct{})
	c.wg.Add(1)
	go c.reconnectLoop(c.cycleDone)
}

// reconnectLoop dials and logs in with backoff until it succeeds, the
// policy runs out, the login is refused for good, or the client closes.
// Attempts rotate through the candidates (reconnectCandidates); the
// backoff pause follows each full round. On success the parked calls are
// queued on the new connection, in order, before anyone else can submit.
func (c *Client) reconnectLoop(done chan struct{}) {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.quit:
			cancel()
		case <-done:
		}
	}()
	p := c.opts.reconnect
	backoff := p.InitialBackoff
	c.mu.Lock()
	cands := c.reconnectCandidates()
	c.mu.Unlock()
	var err error
	for attempt := 1; attempt <= p.MaxAttempts; attempt++ {
		c.mu.Lock()
		cr := c.creds
		c.mu.Unlock()
		addr := cands[(attempt-1)%len(cands)]
		var cn *conn
		cn, err = c.connect(ctx, addr, cr)
		if err == nil {
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				cn.shutdown(ErrClosed)
				<-cn.dead
				break
			}
			if cerr := cn.err(); cerr != nil {
				// It died before it was published: its handoff had
				// nothing to give back; count a failed attempt.
				c.mu.Unlock()
				<-cn.dead
				cn, err = nil, cerr
			}
		}
		if err == nil {
			c.cn, c.addr, c.next = cn, cn.addr, ""
			pending := c.pending
			c.pending = nil
			for i, pc := range pending {
				if pc.abandoned.Load() {
					continue
				}
				if !cn.enqueue(pc) {
					// The new connection died at once; its handoff
					// puts what it took first, the rest waits here.
					c.pending = append([]*call(nil), pending[i:]...)
					break
				}
			}
			c.reconnecting, c.cycleErr = false, nil
			close(done)
			c.mu.Unlock()
			c.opts.logger.Info("iggy connection restored", "addr", cn.addr, "attempt", attempt, "session", cn.session.Load())
			return
		}
		c.opts.logger.Warn("iggy reconnect failed", "addr", addr, "attempt", attempt, "err", err)
		if terminalLoginError(err) || ctx.Err() != nil {
			break
		}
		if attempt == p.MaxAttempts {
			break
		}
		if attempt%len(cands) != 0 {
			continue // the next candidate of this round, at once
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(2*backoff, p.MaxBackoff)
	}
	c.mu.Lock()
	pending := c.pending
	c.pending, c.next = nil, ""
	c.reconnecting = false
	c.cycleErr = err
	closed := c.closed
	close(done)
	c.mu.Unlock()
	fail := error(&ConnError{Err: err})
	if closed {
		fail = ErrClosed
	} else if terminalLoginError(err) {
		fail = err
	}
	for _, pc := range pending {
		pc.finish(fail)
	}
}

// roundTrip submits cl and waits for its reply, resending the identical
// frame after a transient rejection (57, 58) with bounded backoff. It
// returns the typed payload of the reply (result section stripped).
//
// When ctx ends first, the call is abandoned: if it was not yet written
// it never will be; if it was, its outcome is unknown and its reply is
// discarded.
func (c *Client) roundTrip(ctx context.Context, cl *call) ([]byte, error) {
	rp := c.newReplay(false)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.submit(cl); err != nil {
			return nil, err
		}
		select {
		case <-cl.done:
		case <-ctx.Done():
			cl.abandoned.Store(true)
			return nil, ctx.Err()
		}
		if cl.err != nil {
			return nil, cl.err
		}
		payload, err := cl.result()
		if err == nil || !isTransient(err) {
			return payload, err
		}
		pause, recheck, ok := rp.next(err)
		if !ok {
			return payload, err
		}
		if errors.Is(err, wire.ErrTransientNotAccepted) {
			c.router.notLeader(cl)
		}
		if recheck {
			c.recheckLeader(ctx)
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, err
		}
		cl.rearm()
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// appender is a request body.
type appender interface{ AppendTo(dst []byte) []byte }

// validator is implemented by request bodies that can check themselves
// before they are sent.
type validator interface{ Validate() error }

// invoke sends one request with body req (nil for none) and returns the
// reply payload. Metadata-plane requests hold metaSem for the whole
// exchange.
func (c *Client) invoke(ctx context.Context, code wire.Command, req appender) ([]byte, error) {
	if v, ok := req.(validator); ok {
		if err := v.Validate(); err != nil {
			return nil, wrapCmd(code, err)
		}
	}
	cl := newCall(code, 64)
	if req != nil {
		cl.frame = req.AppendTo(cl.frame)
		cl.route = routeOf(req)
	}
	cl.seal(c.id)
	if cl.info.Plane == wire.PlaneMetadata || cl.info.Operation == wire.OpLogout {
		select {
		case c.metaSem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-c.metaSem }()
	}
	payload, err := c.roundTrip(ctx, cl)
	if err != nil {
		return nil, wrapCmd(code, err)
	}
	return payload, nil
}

// call sends a request and decodes the reply payload into out (nil: the
// payload must be empty).
func (c *Client) call(ctx context.Context, code wire.Command, req appender, out wire.Body) error {
	payload, err := c.invoke(ctx, code, req)
	if err != nil {
		return err
	}
	if out == nil {
		out = wire.Empty{}
	}
	return decodeReply(code, payload, out)
}

// errNoLiveConn is returned by current when reconnection is disabled and
// the connection is gone.
var errNoLiveConn = errors.New("no connection")

// current returns the live connection, reconnecting when needed.
func (c *Client) current(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if c.cn != nil {
			cn := c.cn
			c.mu.Unlock()
			return cn, nil
		}
		if c.opts.reconnect.Disabled {
			err := c.cycleErr
			c.mu.Unlock()
			if err == nil {
				err = errNoLiveConn
			}
			return nil, &ConnError{Err: err}
		}
		c.startReconnect()
		done := c.cycleDone
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		cn, err := c.cn, c.cycleErr
		c.mu.Unlock()
		if cn == nil && err != nil {
			if terminalLoginError(err) {
				return nil, err
			}
			return nil, &ConnError{Err: err}
		}
	}
}
