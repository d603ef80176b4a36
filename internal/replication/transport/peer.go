package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/rawio"
)

// peer is the state for one remote node: its send queue, its current
// connection, and (when this node dials it) the dial loop.
type peer struct {
	t  *Transport
	id NodeID

	mu      sync.Mutex // guards everything below
	addr    string
	queue   []Envelope
	conn    net.Conn
	raw     *rawio.Conn // conn's large reads and vectored writes
	gen     uint64      // bumped whenever conn changes
	running bool
	stopped bool
	// lastAttach and lastWarn time the duplicate-id warning (attach).
	lastAttach, lastWarn time.Time

	wake     chan struct{} // cap 1: queue became non-empty
	connDown chan struct{} // cap 1: the current connection ended
	done     chan struct{}
	ctx      context.Context // cancelled by stop; bounds dials
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func newPeer(t *Transport, id NodeID, addr string) *peer {
	ctx, cancel := context.WithCancel(context.Background())
	return &peer{
		t: t, id: id, addr: addr,
		wake: make(chan struct{}, 1), connDown: make(chan struct{}, 1), done: make(chan struct{}),
		ctx: ctx, cancel: cancel,
	}
}

func (p *peer) setAddr(addr string) {
	p.mu.Lock()
	p.addr = addr
	p.mu.Unlock()
}

func (p *peer) dials() bool { return p.id > p.t.cfg.Self }

// start launches the writer and, for a higher id, the dial loop. Caller
// holds t.mu.
func (p *peer) start() {
	p.mu.Lock()
	if p.running || p.stopped {
		p.mu.Unlock()
		return
	}
	p.running = true
	// Start the goroutines under mu: stop sets stopped under mu before it
	// waits, so no goroutine joins the WaitGroup once Wait has begun.
	p.wg.Go(p.writeLoop)
	if p.dials() {
		p.wg.Go(p.dialLoop)
	}
	p.mu.Unlock()
}

func (p *peer) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	c := p.conn
	p.conn, p.raw = nil, nil
	p.gen++
	q := p.queue
	p.queue = nil
	p.mu.Unlock()
	close(p.done)
	p.cancel()
	if c != nil {
		c.Close()
	}
	p.wg.Wait()
	p.t.drop(p.id, q)
	if c != nil {
		p.t.disconnected(p.id)
	}
}

func (p *peer) connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// enqueue appends envs to the bounded queue; what does not fit, or
// everything while there is no connection, is dropped and reported.
func (p *peer) enqueue(envs []Envelope) {
	p.mu.Lock()
	if p.conn == nil || p.stopped {
		p.mu.Unlock()
		p.t.drop(p.id, envs)
		return
	}
	room := p.t.cfg.QueueEnvelopes - len(p.queue)
	var rest []Envelope
	if room < len(envs) {
		rest = envs[max(room, 0):]
		envs = envs[:max(room, 0)]
	}
	p.queue = append(p.queue, envs...)
	p.mu.Unlock()
	signal(p.wake)
	p.t.drop(p.id, rest)
}

// attach makes c the peer's connection (replacing and closing any older
// one) and starts its reader.
func (p *peer) attach(c net.Conn) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		c.Close()
		return
	}
	old := p.conn
	p.conn = c
	p.raw = rawio.NewConn(c)
	p.gen++
	gen := p.gen
	// A new connection while the previous one is still open and less
	// than a second old: either a quick reconnect or two processes that
	// claim the same replica id and keep displacing each other. Say so
	// (at most every 10 s) so the operator checks --replica-id.
	now := time.Now()
	warn := old != nil && now.Sub(p.lastAttach) < time.Second && now.Sub(p.lastWarn) > 10*time.Second
	if warn {
		p.lastWarn = now
	}
	p.lastAttach = now
	// The reader joins the WaitGroup under mu, like start's goroutines.
	raw := p.raw
	p.wg.Go(func() { p.readLoop(c, raw, gen) })
	p.mu.Unlock()
	if warn {
		p.t.log.Warn("replica connection replaced its predecessor within a second: two nodes may claim this replica id (check --replica-id and the roster on every node)",
			"peer", uint64(p.id), "remote", c.RemoteAddr().String())
	}
	if old != nil {
		old.Close()
		p.t.disconnected(p.id)
	}
}

// detach clears the connection if it is still generation gen.
func (p *peer) detach(c net.Conn, gen uint64) {
	p.mu.Lock()
	var q []Envelope
	current := p.gen == gen
	if current {
		p.conn, p.raw = nil, nil
		p.gen++
		q = p.queue
		p.queue = nil
	}
	p.mu.Unlock()
	c.Close()
	p.t.drop(p.id, q)
	if current {
		p.t.disconnected(p.id)
	}
	signal(p.connDown)
}

func (p *peer) readLoop(c net.Conn, raw *rawio.Conn, gen uint64) {
	defer p.detach(c, gen)
	r := bufio.NewReaderSize(raw, readBufferBytes)
	var buf []byte
	for {
		ft, payload, nb, err := readFrame(r, buf, p.t.cfg.MaxFrameBytes)
		buf = nb
		if err != nil {
			if errors.Is(err, errGarbage) {
				p.t.stats.garbage.Add(1)
				p.t.log.Warn("replica peer sent garbage, closing", "peer", uint64(p.id), "err", err)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				p.t.log.Info("replica connection lost", "peer", uint64(p.id), "err", err)
			}
			return
		}
		if ft != frameBatch {
			p.t.stats.garbage.Add(1)
			p.t.log.Warn("replica peer sent an unexpected frame, closing", "peer", uint64(p.id), "type", uint8(ft))
			return
		}
		envs, aliased, err := decodeBatchAlias(payload, vecMinBytes)
		if err != nil {
			p.t.stats.garbage.Add(1)
			p.t.log.Warn("replica peer sent a malformed batch, closing", "peer", uint64(p.id), "err", err)
			return
		}
		p.t.stats.framesRecv.Add(1)
		p.t.stats.envelopesRecv.Add(uint64(len(envs)))
		p.t.handler.Deliver(p.id, envs)
		if aliased || cap(buf) > maxRetainedBuffer {
			// Large data was handed over in place; otherwise decoding
			// copied the data out: do not pin a snapshot's frame.
			buf = nil
		}
	}
}

// maxRetainedBuffer bounds the encode buffer a writer keeps between
// flushes, and the frame buffer a reader keeps between frames. The limit is a choice: far above a flush of 1 MiB appends,
// well below a snapshot frame.
const maxRetainedBuffer = 16 << 20

// readBufferBytes sizes the reader's buffer: small frames (heartbeats,
// acknowledgements) take one read call for many, a large body bypasses it.
const readBufferBytes = 64 << 10

// writeLoop flushes everything queued in one write per wake-up, encoding
// into a buffer it reuses.
func (p *peer) writeLoop() {
	var buf []byte
	for {
		select {
		case <-p.done:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		q, c, raw, gen := p.queue, p.conn, p.raw, p.gen
		p.queue = nil
		p.mu.Unlock()
		if len(q) == 0 {
			continue
		}
		if c == nil {
			p.t.drop(p.id, q)
			continue
		}
		var frames int
		var dropped []Envelope
		var ext []extData
		buf, ext, frames, dropped = p.encodeVec(buf[:0], q, vecMinBytes)
		p.t.drop(p.id, dropped)
		if frames == 0 {
			continue
		}
		if len(dropped) > 0 {
			q = encodable(q, dropped)
		}
		if err := c.SetWriteDeadline(time.Now().Add(p.t.cfg.WriteTimeout)); err == nil {
			sent := len(buf)
			if len(ext) == 0 {
				_, err = raw.Write(buf)
			} else {
				v := vectors(buf, ext)
				for _, x := range ext {
					sent += len(x.data)
				}
				_, err = raw.WriteBuffers(v)
			}
			if cap(buf) > maxRetainedBuffer {
				buf = nil // one huge flush (a snapshot) does not pin its buffer
			}
			if err == nil {
				p.t.stats.framesSent.Add(uint64(frames))
				p.t.stats.envelopesSent.Add(uint64(len(q)))
				p.t.stats.bytesSent.Add(uint64(sent))
				continue
			}
			p.t.log.Info("replica write failed", "peer", uint64(p.id), "err", err)
		}
		// Data envelopes may have reached the peer before the write
		// failed: detach announces their loss as a disconnection.
		p.t.drop(p.id, withoutData(q))
		p.detach(c, gen)
	}
}

// dialLoop keeps one connection to a higher-id peer, redialing with
// exponential backoff and jitter.
func (p *peer) dialLoop() {
	backoff := p.t.cfg.BackoffMin
	for {
		select {
		case <-p.done:
			return
		default:
		}
		c, err := p.dial()
		if err != nil {
			p.t.stats.handshakeFailures.Add(1)
			var he *HandshakeError
			if errors.As(err, &he) {
				p.t.log.Warn("replica handshake refused", "peer", uint64(p.id), "err", err)
			} else {
				p.t.log.Debug("replica dial failed", "peer", uint64(p.id), "err", err)
			}
			wait := backoff/2 + rand.N(backoff/2+1)
			backoff = min(2*backoff, p.t.cfg.BackoffMax)
			select {
			case <-p.done:
				return
			case <-time.After(wait):
			}
			continue
		}
		backoff = p.t.cfg.BackoffMin
		p.t.log.Info("replica connected", "peer", uint64(p.id), "remote", c.RemoteAddr().String())
		select {
		case <-p.connDown:
		default:
		}
		p.attach(c)
		select {
		case <-p.done:
			return
		case <-p.connDown:
		}
	}
}

func (p *peer) dial() (net.Conn, error) {
	p.mu.Lock()
	addr := p.addr
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.ctx, p.t.cfg.HandshakeTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := raw
	if p.t.cfg.TLS != nil {
		tc := p.t.cfg.TLS
		if tc.ServerName == "" {
			// Peers are verified against their roster address.
			tc = tc.Clone()
			tc.ServerName, _, _ = net.SplitHostPort(addr)
		}
		c = tls.Client(raw, tc)
	}
	// Closing the connection aborts a handshake blocked in a read when
	// the peer is stopped.
	stopAbort := context.AfterFunc(ctx, func() { c.Close() })
	err = p.t.dialHandshake(c, p.id)
	if !stopAbort() || err != nil {
		c.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return c, nil
}

// reset aborts the current connection, if any: what it still held
// unsent or unacknowledged is discarded (linger 0: the kernel sends a
// reset instead of retransmitting it later), the queue is dropped and
// reported, the loss of the connection announced, and a dialer redials.
// It does not block: the close runs on a goroutine of the peer's.
func (p *peer) reset() {
	p.mu.Lock()
	c, gen := p.conn, p.gen
	if c == nil || p.stopped {
		p.mu.Unlock()
		return
	}
	// The reader joins the WaitGroup under mu, as in attach.
	p.wg.Go(func() {
		abortConn(c)
		p.detach(c, gen)
	})
	p.mu.Unlock()
}

// abortConn closes c so that nothing it still buffers is ever sent.
func abortConn(c net.Conn) {
	raw := c
	if tc, ok := c.(*tls.Conn); ok {
		raw = tc.NetConn() // no close_notify: it would queue behind the stale data
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	raw.Close()
}
