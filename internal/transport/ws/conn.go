package ws

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// retainScratch bounds the answer buffer returned to the pool.
const retainScratch = 1 << 20

// Close statuses of connections closed for bad input.
const (
	statusText      = websocket.StatusUnsupportedData
	statusBadFrame  = websocket.StatusPolicyViolation
	statusEmptyBody = websocket.StatusNoStatusRcvd // sends a Close frame with no payload
)

// Framing errors of a binary message.
var (
	errBadFrame = errors.New("message is not exactly one request frame")
	errTooBig   = errors.New("frame larger than the message limit")
)

// conn is one WebSocket connection, served by the handler goroutine.
type conn struct {
	s    *Server
	wc   *websocket.Conn
	nc   net.Conn // the socket under wc, for deadlines
	sess *session.Conn
	hdr  [wire.HeaderSize]byte // owned by run

	mu      sync.Mutex
	busy    bool // guarded by mu: a request is being served
	stopped bool // guarded by mu: Shutdown asked the connection to end
	closing bool // guarded by mu: the server started the close handshake

	// wmu serialises whole writes (deadline + message): a reply from run
	// and an eviction from the session manager's goroutine.
	wmu sync.Mutex
}

func newConn(s *Server, wc *websocket.Conn, nc net.Conn, addr string) *conn {
	c := &conn{s: s, wc: wc, nc: nc}
	c.sess = s.sessions.Open(session.TransportWebSocket, addr, c)
	return c
}

// Stop implements connset.Conn.
func (c *conn) Stop() { c.stop() }

// Abort implements connset.Conn.
func (c *conn) Abort() { c.nc.Close() }

// stop asks the connection to end once the request it serves (if any) is
// answered.
func (c *conn) stop() {
	c.mu.Lock()
	c.stopped = true
	idle := !c.busy
	c.mu.Unlock()
	if idle {
		go c.close(statusEmptyBody, "")
	}
}

// close starts the close handshake once; after CloseGrace the socket is
// closed regardless.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.mu.Unlock()
	t := time.AfterFunc(c.s.cfg.CloseGrace, func() { c.nc.Close() })
	defer t.Stop()
	c.wc.Close(code, reason)
}

// Evict implements session.Sink: the eviction is written at once as its
// own message, then the connection is closed, as on TCP (semantics.md
// §1.10; the reference keeps the socket open, transports.md §4: the
// session is gone either way and its SDK reconnects).
func (c *conn) Evict(client wire.Uint128, reason wire.EvictionReason) {
	var b [wire.HeaderSize]byte
	e := wire.EvictionHeader{Client: client, Reason: reason}
	e.Encode(b[:])
	go func() {
		if err := c.write(b[:]); err != nil {
			c.s.log.Debug("websocket eviction not delivered", "addr", c.sess.Addr, "err", err)
			c.nc.Close()
			return
		}
		c.close(statusEmptyBody, "")
	}()
}

func (c *conn) run() {
	defer func() {
		c.wc.CloseNow()
		c.nc.Close()
		c.s.sessions.Close(c.sess, c.s.stopping())
		c.s.remove(c)
	}()
	for {
		typ, r, err := c.wc.Reader(context.Background())
		if err != nil {
			return
		}
		if !c.begin() {
			return
		}
		if typ != websocket.MessageBinary {
			c.s.log.Debug("closing websocket: text message", "addr", c.sess.Addr)
			c.close(statusText, "binary messages only")
			return
		}
		if !c.serve(r) {
			return
		}
		if !c.end() {
			c.close(statusEmptyBody, "")
			return
		}
	}
}

// begin marks the connection busy; false when it is stopping.
func (c *conn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return false
	}
	c.busy = true
	return true
}

// end marks the connection idle; false when it should stop.
func (c *conn) end() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = false
	return !c.stopped
}

// serve reads the one frame of a message, dispatches it and writes the
// answer; false means the connection is done.
func (c *conn) serve(r io.Reader) bool {
	cfg := &c.s.cfg
	c.nc.SetReadDeadline(time.Now().Add(cfg.FrameReadTimeout))
	x := c.s.pools.Exchange()
	defer c.s.pools.PutExchange(x)
	body, err := c.readFrame(r, x)
	if body != nil {
		defer c.s.pools.PutBody(body)
	}
	if err != nil {
		c.s.log.Debug("closing websocket: bad message", "addr", c.sess.Addr, "err", err)
		switch {
		case errors.Is(err, errBadFrame):
			c.close(statusBadFrame, "one request frame per message")
		case errors.Is(err, errTooBig):
			c.close(websocket.StatusMessageTooBig, "frame too large")
		}
		return false
	}
	c.nc.SetReadDeadline(time.Time{})
	x.Conn = c.sess
	c.s.d.Serve(x)
	x.Body = nil
	if err := c.reply(x); err != nil {
		c.s.log.Debug("closing websocket: write failed", "addr", c.sess.Addr, "err", err)
		return false
	}
	return true
}

// readFrame reads the message in r into x: header, body (into a pooled
// buffer, returned for release), and checks the message ends there.
func (c *conn) readFrame(r io.Reader, x *dispatch.Exchange) (*[]byte, error) {
	if _, err := io.ReadFull(r, c.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, errBadFrame
		}
		return nil, err
	}
	if wire.PeekKind(c.hdr[:]) != wire.KindRequest {
		return nil, errBadFrame
	}
	size := wire.PeekSize(c.hdr[:])
	if size > c.s.cfg.MaxFrameSize {
		return nil, errTooBig
	}
	if size < wire.HeaderSize {
		return nil, errBadFrame
	}
	_ = x.Header.Decode(c.hdr[:]) // cannot fail: full header, kind checked
	var body *[]byte
	if size > wire.HeaderSize {
		body = c.s.pools.Body(int(size - wire.HeaderSize))
		if _, err := io.ReadFull(r, *body); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return body, errBadFrame
			}
			return body, err
		}
		x.Body = *body
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n != 0 || err == nil {
		return body, errBadFrame // more bytes than the frame
	} else if !errors.Is(err, io.EOF) {
		return body, err
	}
	return body, nil
}

// reply writes the answer of x as one binary message: one frame up to
// MaxWireFrame bytes, continuation frames beyond. Stored messages of a
// poll (the Tail) are copied behind the header as they are.
func (c *conn) reply(x *dispatch.Exchange) error {
	p := c.s.pools.Scratch()
	b := append(append((*p)[:0], x.Head[:]...), x.Out...)
	var err error
	if x.Tail != nil {
		w := appender{b: b}
		_, err = x.Tail.WriteTo(&w)
		b = w.b
	}
	if err == nil {
		err = c.write(b)
	}
	if cap(b) <= retainScratch {
		*p = b[:0]
		c.s.pools.PutScratch(p, retainScratch)
	}
	return err
}

// write sends b as one binary message within the write timeout.
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	max := c.s.cfg.MaxWireFrame
	if len(b) <= max {
		return c.wc.Write(context.Background(), websocket.MessageBinary, b)
	}
	w, err := c.wc.Writer(context.Background(), websocket.MessageBinary)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n := min(len(b), max)
		if _, err := w.Write(b[:n]); err != nil {
			w.Close()
			return err
		}
		b = b[n:]
	}
	return w.Close()
}

// appender is an io.Writer appending to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}
