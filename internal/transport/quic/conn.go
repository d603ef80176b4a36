package quic

import (
	"context"
	"errors"
	"fmt"
	"github.com/iggo-dev/iggo/internal/transport/bufpool"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	qgo "github.com/quic-go/quic-go"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// coalesceLimit is the largest reply body copied behind its header so the
// reply goes out in one stream write.
const coalesceLimit = 64 << 10

// conn is one QUIC connection: one goroutine serves its streams in turn.
type conn struct {
	s      *Server
	qc     *qgo.Conn
	sess   *session.Conn
	ctx    context.Context // ends at Shutdown: stops AcceptStream
	cancel context.CancelFunc

	stopFlag atomic.Bool
	hdr      [wire.HeaderSize]byte // owned by run

	mu       sync.Mutex
	evict    wire.EvictionHeader // guarded by mu
	evicting bool                // guarded by mu: evict holds an eviction
}

func newConn(s *Server, qc *qgo.Conn) *conn {
	c := &conn{s: s, qc: qc}
	c.ctx, c.cancel = context.WithCancel(qc.Context())
	c.sess = s.sessions.Open(session.TransportQUIC, qc.RemoteAddr().String(), c)
	return c
}

// Stop implements connset.Conn.
func (c *conn) Stop() { c.stop() }

// Abort implements connset.Conn: close with 0x1003 "shutdown".
func (c *conn) Abort() { c.qc.CloseWithError(CodeShutdown, "shutdown") }

// stop asks run to finish after the stream it is serving.
func (c *conn) stop() {
	c.stopFlag.Store(true)
	c.cancel()
}

// Evict implements session.Sink. The eviction waits for the client's next
// stream and becomes its answer (transports.md §3); the connection stays.
func (c *conn) Evict(client wire.Uint128, reason wire.EvictionReason) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.evicting {
		c.evict, c.evicting = wire.EvictionHeader{Client: client, Reason: reason}, true
	}
}

// takeEviction returns the waiting eviction, if any, and clears it.
func (c *conn) takeEviction() (wire.EvictionHeader, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.evict, c.evicting
	c.evicting = false
	return e, ok
}

func (c *conn) run() {
	defer func() {
		c.cancel()
		c.qc.CloseWithError(CodeShutdown, "shutdown")
		c.s.sessions.Close(c.sess, c.s.stopping())
		c.s.remove(c)
	}()
	for !c.stopFlag.Load() {
		st, err := c.qc.AcceptStream(c.ctx)
		if err != nil {
			return
		}
		if !c.serve(st) {
			return
		}
	}
}

// drop abandons a stream whose frame could not be read: STOP_SENDING and
// a FIN with no data; the connection stays.
func drop(st *qgo.Stream) {
	st.CancelRead(0)
	st.Close()
}

// serve answers one stream; false means the connection is done.
func (c *conn) serve(st *qgo.Stream) bool {
	cfg := &c.s.cfg
	st.SetReadDeadline(time.Now().Add(cfg.FrameReadTimeout))
	x := c.s.pools.Exchange()
	defer c.s.pools.PutExchange(x)
	body, err := readFrame(st, &c.hdr, x, cfg.MaxFrameSize, &c.s.pools)
	if body != nil {
		defer c.s.pools.PutBody(body)
	}
	if err != nil {
		c.s.log.Debug("quic stream dropped", "addr", c.sess.Addr, "stream", st.StreamID(), "err", err)
		drop(st)
		return true
	}
	st.CancelRead(0) // the frame is complete; anything after it is ignored
	if e, ok := c.takeEviction(); ok {
		e.Encode(x.Head[:])
		x.Answered = true
	} else {
		x.Conn = c.sess
		c.s.d.Serve(x)
		x.Body = nil
	}
	if err := c.reply(st, x); err != nil {
		st.CancelWrite(0)
		if isTimeout(err) {
			c.s.log.Debug("closing quic connection: reply not read in time", "addr", c.sess.Addr, "err", err)
			return false
		}
		// The client reset or stopped the stream: only this answer is lost.
		c.s.log.Debug("quic reply not delivered", "addr", c.sess.Addr, "err", err)
		return !isConnGone(err)
	}
	return true
}

// errBadFrame is a stream whose bytes do not start with a request frame.
var errBadFrame = errors.New("not a request frame of a valid size")

// readFrame reads one request frame from r into x (header decoded, Body
// set) using hdr as header scratch; bytes after the frame are not read.
// The returned body buffer, when non-nil, goes back to p after use.
func readFrame(r io.Reader, hdr *[wire.HeaderSize]byte, x *dispatch.Exchange, maxFrame uint32, p *bufpool.Pools) (*[]byte, error) {
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if wire.PeekKind(hdr[:]) != wire.KindRequest {
		return nil, errBadFrame
	}
	size := wire.PeekSize(hdr[:])
	if size < wire.HeaderSize || size > maxFrame {
		return nil, errBadFrame
	}
	_ = x.Header.Decode(hdr[:]) // cannot fail: full header, kind checked
	if size == wire.HeaderSize {
		return nil, nil
	}
	body := p.Body(int(size - wire.HeaderSize))
	if _, err := io.ReadFull(r, *body); err != nil {
		return body, fmt.Errorf("body of %d bytes: %w", size, err)
	}
	x.Body = *body
	return body, nil
}

// reply writes the answer of x on st and finishes the stream. A small
// body is copied behind the header so the answer is one stream write; a
// Tail (stored messages of a poll) is written as it is, without
// re-encoding.
func (c *conn) reply(st *qgo.Stream, x *dispatch.Exchange) error {
	st.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if len(x.Out) <= coalesceLimit {
		p := c.s.pools.Scratch()
		b := append(append((*p)[:0], x.Head[:]...), x.Out...)
		_, err := st.Write(b)
		*p = b
		c.s.pools.PutScratch(p, 2*coalesceLimit)
		if err != nil {
			return err
		}
	} else {
		if _, err := st.Write(x.Head[:]); err != nil {
			return err
		}
		if _, err := st.Write(x.Out); err != nil {
			return err
		}
	}
	if x.Tail != nil {
		if _, err := x.Tail.WriteTo(st); err != nil {
			return err
		}
	}
	return st.Close()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// isConnGone reports whether err says the whole connection is closed.
func isConnGone(err error) bool {
	var app *qgo.ApplicationError
	var tr *qgo.TransportError
	var idle *qgo.IdleTimeoutError
	return errors.As(err, &app) || errors.As(err, &tr) || errors.As(err, &idle)
}
