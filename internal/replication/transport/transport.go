package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ALPN is the TLS application protocol of the replica port.
const ALPN = "iggy-replica"

// Defaults for zero Config fields.
const (
	DefaultQueueEnvelopes   = 4096
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
	DefaultBackoffMin       = 50 * time.Millisecond
	DefaultBackoffMax       = 5 * time.Second
)

// Handler receives what the transport reads and what it could not send.
// Both methods are called from transport goroutines and must not block.
type Handler interface {
	// Deliver hands over one decoded batch from peer from.
	Deliver(from NodeID, envs []Envelope)
	// Unreachable reports envelopes for peer to that were dropped (queue
	// full, no connection, write failure, too large). Envelopes whose
	// kind CarriesData are reported only when they were never written.
	Unreachable(to NodeID, envs []Envelope)
}

// ConnHandler is implemented by a Handler that wants to know when a
// peer's connection ends.
type ConnHandler interface {
	// Disconnected reports that a connection to peer id ended: it
	// failed, was closed, or a newer one replaced it. Whatever was
	// written on it and not answered may be lost. Called from transport
	// goroutines; it must not block.
	Disconnected(id NodeID)
}

// Config configures a Transport.
type Config struct {
	// ClusterName is hashed into the cluster id checked by the handshake.
	ClusterName string
	// Self is this node's replica id.
	Self NodeID
	// ListenAddr is the replica listener (host:port; port 0 picks one).
	ListenAddr string
	// Secret is the shared secret (empty when cluster.auth is off: the
	// MAC then only proves both sides run with auth off).
	Secret []byte
	// PreviousSecret is accepted when verifying a peer, and its MAC is
	// offered next to the current one so nodes not yet rotated accept
	// this one (a rolling rotation needs both directions to succeed).
	PreviousSecret []byte
	// TLS, when set, wraps every connection in TLS 1.3 with ALPN
	// iggy-replica. It must hold a certificate (both sides present one)
	// and the trust settings for dialing.
	TLS *tls.Config
	// QueueEnvelopes bounds each peer's send queue.
	QueueEnvelopes int
	// MaxFrameBytes bounds one frame, read and written.
	MaxFrameBytes int
	// HandshakeTimeout bounds dial plus handshake.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one flush.
	WriteTimeout time.Duration
	// BackoffMin and BackoffMax bound the reconnect delay (doubling).
	BackoffMin, BackoffMax time.Duration
	Logger                 *slog.Logger
}

// Stats are cumulative counters.
type Stats struct {
	FramesSent, EnvelopesSent, BytesSent uint64
	FramesReceived, EnvelopesReceived    uint64
	Dropped                              uint64
	HandshakeFailures, GarbageFrames     uint64
}

type counters struct {
	framesSent, envelopesSent, bytesSent atomic.Uint64
	framesRecv, envelopesRecv            atomic.Uint64
	dropped                              atomic.Uint64
	handshakeFailures, garbage           atomic.Uint64
}

// Transport owns the replica listener and one peer per other node.
type Transport struct {
	cfg       Config
	handler   Handler
	log       *slog.Logger
	clusterID [clusterIDBytes]byte
	keys      [][]byte
	ln        net.Listener
	stats     counters
	crcs      crcCache // entry checksums shared by the peers' writers

	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex // guards peers, started, closed, inbound
	peers   map[NodeID]*peer
	started bool
	closed  bool
	inbound map[net.Conn]struct{} // connections still in their handshake
}

// New validates cfg and binds the listener; Start begins accepting and
// dialing.
func New(cfg Config, h Handler) (*Transport, error) {
	if h == nil {
		return nil, errors.New("transport: nil handler")
	}
	if cfg.QueueEnvelopes <= 0 {
		cfg.QueueEnvelopes = DefaultQueueEnvelopes
	}
	if cfg.MaxFrameBytes <= 0 {
		cfg.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = DefaultBackoffMin
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = max(cfg.BackoffMin, DefaultBackoffMax)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TLS != nil {
		c := cfg.TLS.Clone()
		c.MinVersion = tls.VersionTLS13
		c.NextProtos = []string{ALPN}
		cfg.TLS = c
	}
	t := &Transport{
		cfg:       cfg,
		handler:   h,
		log:       cfg.Logger.With("component", "replica-transport", "replica", uint64(cfg.Self)),
		clusterID: ClusterID(cfg.ClusterName),
		keys:      [][]byte{cfg.Secret},
		done:      make(chan struct{}),
		peers:     map[NodeID]*peer{},
		inbound:   map[net.Conn]struct{}{},
	}
	if len(cfg.PreviousSecret) > 0 {
		t.keys = append(t.keys, cfg.PreviousSecret)
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("replica listener %s: %w", cfg.ListenAddr, err)
	}
	t.ln = ln
	return t, nil
}

// Addr is the bound replica listener address.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// AddPeer registers (or re-addresses) peer id at addr. Only peers with a
// higher id than Self are dialed; lower ids dial us.
func (t *Transport) AddPeer(id NodeID, addr string) {
	if id == t.cfg.Self {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if p, ok := t.peers[id]; ok {
		p.setAddr(addr)
		return
	}
	p := newPeer(t, id, addr)
	t.peers[id] = p
	if t.started {
		p.start()
	}
}

// RemovePeer forgets peer id and closes its connection.
func (t *Transport) RemovePeer(id NodeID) {
	t.mu.Lock()
	p := t.peers[id]
	delete(t.peers, id)
	t.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// Start begins accepting connections and dialing the peers.
func (t *Transport) Start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || t.closed {
		return
	}
	t.started = true
	for _, p := range t.peers {
		p.start()
	}
	t.wg.Go(t.acceptLoop)
}

// Send queues envs for peer to; it never blocks. Envelopes that cannot be
// queued are reported through Handler.Unreachable.
func (t *Transport) Send(to NodeID, envs []Envelope) {
	if len(envs) == 0 {
		return
	}
	t.mu.Lock()
	p := t.peers[to]
	t.mu.Unlock()
	if p == nil {
		t.drop(to, envs)
		return
	}
	p.enqueue(envs)
}

// Reset aborts the connection to peer id: whatever it still buffers is
// discarded rather than delivered late, the envelopes queued for id are
// dropped and reported, the loss of the connection is announced
// (ConnHandler.Disconnected), and the dialing side connects again. The
// host calls it when it declares id dead: the requests it wrote to a
// silent peer (the calls it has already failed) must not reach that
// peer seconds later, when the network heals and TCP retransmits them.
// It never blocks.
func (t *Transport) Reset(id NodeID) {
	t.mu.Lock()
	p := t.peers[id]
	t.mu.Unlock()
	if p != nil {
		p.reset()
	}
}

// Connected reports whether a handshaken connection to peer id is up.
func (t *Transport) Connected(id NodeID) bool {
	t.mu.Lock()
	p := t.peers[id]
	t.mu.Unlock()
	return p != nil && p.connected()
}

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	s := &t.stats
	return Stats{
		FramesSent: s.framesSent.Load(), EnvelopesSent: s.envelopesSent.Load(), BytesSent: s.bytesSent.Load(),
		FramesReceived: s.framesRecv.Load(), EnvelopesReceived: s.envelopesRecv.Load(),
		Dropped: s.dropped.Load(), HandshakeFailures: s.handshakeFailures.Load(), GarbageFrames: s.garbage.Load(),
	}
}

// Close stops the listener, every peer and waits for all goroutines.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	peers := make([]*peer, 0, len(t.peers))
	for _, p := range t.peers {
		peers = append(peers, p)
	}
	for c := range t.inbound {
		c.Close()
	}
	t.mu.Unlock()
	close(t.done)
	err := t.ln.Close()
	for _, p := range peers {
		p.stop()
	}
	t.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("close replica listener: %w", err)
	}
	return nil
}

// disconnected tells the handler, when it wants to know, that a
// connection to peer id ended.
func (t *Transport) disconnected(id NodeID) {
	if ch, ok := t.handler.(ConnHandler); ok {
		ch.Disconnected(id)
	}
}

func (t *Transport) drop(to NodeID, envs []Envelope) {
	if len(envs) == 0 {
		return
	}
	t.stats.dropped.Add(uint64(len(envs)))
	t.handler.Unreachable(to, envs)
}

func (t *Transport) acceptLoop() {
	for {
		c, err := t.ln.Accept()
		if err != nil {
			select {
			case <-t.done:
				return
			default:
			}
			t.log.Warn("replica accept", "err", err)
			select {
			case <-t.done:
				return
			case <-time.After(t.cfg.BackoffMin):
			}
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.inbound[c] = struct{}{}
		t.mu.Unlock()
		t.wg.Go(func() { t.serveInbound(c) })
	}
}

// serveInbound runs the acceptor side of the handshake and, on success,
// hands the connection to its peer.
func (t *Transport) serveInbound(raw net.Conn) {
	defer func() {
		t.mu.Lock()
		delete(t.inbound, raw)
		t.mu.Unlock()
	}()
	c := raw
	if t.cfg.TLS != nil {
		c = tls.Server(raw, t.cfg.TLS)
	}
	from, err := t.acceptHandshake(c)
	if err != nil {
		t.stats.handshakeFailures.Add(1)
		t.log.Warn("replica connection refused", "remote", raw.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	t.mu.Lock()
	p := t.peers[from]
	t.mu.Unlock()
	if p == nil {
		c.Close()
		return
	}
	t.log.Info("replica connected", "peer", uint64(from), "remote", raw.RemoteAddr().String())
	p.attach(c)
}
