package tcp

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/rawio"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// Queue and batch bounds between a connection's reader and writer.
const (
	// queueDepth is the number of answers that may wait for the writer;
	// when full, the reader stops reading (back-pressure on the client).
	queueDepth = 64
	// maxBatch is the number of answers written in one vectored write.
	maxBatch = 64
)

// item is one queued answer.
type item struct {
	x *dispatch.Exchange
	// close ends the connection after the answer is written.
	close bool
}

// conn is one client connection.
type conn struct {
	s    *Server
	nc   net.Conn
	raw  *rawio.Conn // nc's reads and (plain TCP) writes, without thread hand-offs
	tls  bool
	sess *session.Conn

	out        chan item
	readerDone chan struct{} // closed when the reader exits
	writerDone chan struct{} // closed when the writer exits
	stopFlag   atomic.Bool   // set by Shutdown
	closeOnce  sync.Once

	hdr [wire.HeaderSize]byte // reader-owned

	// wmu is held by whoever writes to nc: the writer goroutine, or the
	// reader sending an answer itself (answer).
	wmu  sync.Mutex
	vec  [][]byte    // guarded by wmu: backing array for bufs
	bufs net.Buffers // guarded by wmu
	// queued counts the answers handed to the writer and not yet written.
	queued atomic.Int64
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, out: make(chan item, queueDepth), readerDone: make(chan struct{}), writerDone: make(chan struct{})}
	if s.cfg.TLS != nil {
		c.nc = tls.Server(nc, s.cfg.TLS)
		c.tls = true
	}
	c.raw = rawio.NewConn(c.nc)
	c.sess = s.sessions.Open(session.TransportTCP, nc.RemoteAddr().String(), c)
	return c
}

// close closes the socket once.
func (c *conn) close() { c.closeOnce.Do(func() { c.nc.Close() }) }

// Stop implements connset.Conn.
func (c *conn) Stop() { c.stop() }

// Abort implements connset.Conn.
func (c *conn) Abort() { c.nc.Close() }

// stop asks the reader to finish after the frame it is serving.
func (c *conn) stop() {
	c.stopFlag.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

// Evict implements session.Sink: queue an eviction and close after it.
func (c *conn) Evict(client wire.Uint128, reason wire.EvictionReason) {
	x := getExchange()
	e := wire.EvictionHeader{Client: client, Reason: reason}
	e.Encode(x.Head[:])
	x.Answered = true
	c.queued.Add(1)
	select {
	case c.out <- item{x: x, close: true}:
	default:
		c.queued.Add(-1)
		putExchange(x)
		c.close()
	}
}

// run is the reader goroutine; it starts the writer and cleans up after both.
func (c *conn) run() {
	go c.write()
	c.read()
	close(c.readerDone)
	<-c.writerDone
	c.close()
	c.s.sessions.Close(c.sess, c.s.stopping())
	c.s.remove(c)
}

// enqueue hands an answer to the writer; false when the writer is gone.
func (c *conn) enqueue(it item) bool {
	c.queued.Add(1)
	select {
	case c.out <- it:
		return true
	case <-c.writerDone:
		c.queued.Add(-1)
		putExchange(it.x)
		return false
	}
}

// answer sends the answer of a served request; false means the
// connection is done. When no earlier answer waits for the writer and no
// write is in progress, the reader writes the answer itself, so a client
// that waits for each reply before its next request costs no hand-off to
// the writer goroutine (a wake-up, often of another thread) per request.
// Otherwise the answer is queued behind the others: answers always leave
// in request order, because the reader writes only while queued is zero
// under wmu, and the writer decrements queued only after writing.
func (c *conn) answer(x *dispatch.Exchange) bool {
	if c.queued.Load() != 0 || !c.wmu.TryLock() {
		return c.enqueue(item{x: x})
	}
	if c.queued.Load() != 0 {
		c.wmu.Unlock()
		return c.enqueue(item{x: x})
	}
	one := [1]item{{x: x}}
	err := c.flush(one[:])
	c.wmu.Unlock()
	putExchange(x)
	if err != nil {
		c.s.log.Debug("closing connection: write failed", "addr", c.sess.Addr, "err", err)
		c.close()
		return false
	}
	return true
}

// evictFrame queues an eviction for a framing failure and ends reading.
func (c *conn) evictFrame(client wire.Uint128, reason wire.EvictionReason) {
	if client.IsZero() {
		return
	}
	x := getExchange()
	e := wire.EvictionHeader{Client: client, Reason: reason}
	e.Encode(x.Head[:])
	x.Answered = true
	c.enqueue(item{x: x, close: true})
}

func (c *conn) read() {
	cfg := &c.s.cfg
	if c.tls {
		c.nc.SetDeadline(time.Now().Add(cfg.FrameReadTimeout))
		if err := c.nc.(*tls.Conn).Handshake(); err != nil {
			c.s.log.Debug("tls handshake failed", "addr", c.sess.Addr, "err", err)
			return
		}
		c.nc.SetDeadline(time.Time{})
	}
	for first := true; !c.stopFlag.Load(); first = false {
		// Idle wait: no deadline until the first byte of a frame.
		n, err := c.raw.Read(c.hdr[:])
		if err != nil {
			return
		}
		deadline := false
		if n < wire.HeaderSize {
			c.nc.SetReadDeadline(time.Now().Add(cfg.FrameReadTimeout))
			deadline = true
			if first {
				n, err = c.readFirst(n) // legacy.go
			} else {
				_, err = io.ReadFull(c.raw, c.hdr[n:])
			}
			if err != nil {
				return
			}
		}
		if first && c.refuseLegacy(n) {
			return
		}
		if wire.PeekKind(c.hdr[:]) != wire.KindRequest {
			c.s.log.Debug("closing connection: not a request frame", "addr", c.sess.Addr, "command", uint8(wire.PeekKind(c.hdr[:])))
			return
		}
		x := getExchange()
		_ = x.Header.Decode(c.hdr[:]) // cannot fail: full header, kind checked
		size := wire.PeekSize(c.hdr[:])
		if size < wire.HeaderSize || size > cfg.MaxFrameSize {
			c.s.log.Debug("closing connection: bad frame size", "addr", c.sess.Addr, "size", size)
			client := x.Header.Client
			putExchange(x)
			c.evictFrame(client, wire.EvictInvalidRequestBodySize)
			return
		}
		var body *[]byte
		if size > wire.HeaderSize {
			if !deadline {
				c.nc.SetReadDeadline(time.Now().Add(cfg.FrameReadTimeout))
				deadline = true
			}
			body, err = c.readBody(int(size - wire.HeaderSize))
			if err != nil {
				client := x.Header.Client
				putExchange(x)
				if isTimeout(err) && !c.stopFlag.Load() {
					c.s.log.Debug("closing connection: frame body not received in time", "addr", c.sess.Addr, "size", size)
					c.evictFrame(client, wire.EvictInvalidRequestBodySize)
				}
				return
			}
			x.Body = *body
		}
		if deadline {
			c.nc.SetReadDeadline(time.Time{})
		}
		x.Conn = c.sess
		c.s.d.Serve(x)
		if body != nil {
			putBody(body)
			x.Body = nil
		}
		if !c.answer(x) {
			return
		}
	}
}

// readBody reads n body bytes: small bodies into a pooled buffer, large
// ones in chunks so memory tracks the bytes that actually arrive.
func (c *conn) readBody(n int) (*[]byte, error) {
	p := getBody(n)
	if len(*p) == n {
		if _, err := io.ReadFull(c.raw, *p); err != nil {
			putBody(p)
			return nil, err
		}
		return p, nil
	}
	b := *p
	for len(b) < n {
		step := min(n-len(b), readChunk)
		if cap(b)-len(b) < step {
			// Double (capacities stay powers of two, so the final
			// buffer fits a pool class); past the pooled range, grow
			// to exactly n.
			c := max(2*cap(b), len(b)+step)
			if n > maxLargeBody {
				c = min(n, c)
			}
			nb := make([]byte, len(b), c)
			copy(nb, b)
			b = nb
		}
		m, err := io.ReadFull(c.raw, b[len(b):len(b)+step])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	*p = b
	return p, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// write is the writer goroutine: it sends queued answers in order, each
// batch in one vectored write, until the reader is done and the queue is
// drained, or a write fails.
func (c *conn) write() {
	defer close(c.writerDone)
	defer c.close()
	var batch [maxBatch]item
	for {
		var n int
		select {
		case it := <-c.out:
			batch[0], n = it, 1
		case <-c.readerDone:
			// Drain what the reader queued before it stopped.
			select {
			case it := <-c.out:
				batch[0], n = it, 1
			default:
				return
			}
		}
	fill:
		for n < maxBatch {
			select {
			case it := <-c.out:
				batch[n] = it
				n++
			default:
				break fill
			}
		}
		c.wmu.Lock()
		err := c.flush(batch[:n])
		c.queued.Add(-int64(n))
		c.wmu.Unlock()
		closeAfter := false
		for i := range n {
			closeAfter = closeAfter || batch[i].close
			putExchange(batch[i].x)
			batch[i] = item{}
		}
		if err != nil {
			c.s.log.Debug("closing connection: write failed", "addr", c.sess.Addr, "err", err)
			return
		}
		if closeAfter {
			return
		}
	}
}

// flush writes the answers of items in one vectored write (coalesced into
// one buffer under TLS, so they become one record). An answer with a Tail
// (file extents of a poll reply) ends the current write; the Tail then
// writes itself to the socket (sendfile on plain TCP).
func (c *conn) flush(items []item) error {
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if c.tls {
		p := coalesce.Get().(*[]byte)
		b := (*p)[:0]
		var err error
		for _, it := range items {
			b = append(append(b, it.x.Head[:]...), it.x.Out...)
			if it.x.Tail != nil {
				if _, err = c.nc.Write(b); err != nil {
					break
				}
				b = b[:0]
				if _, err = it.x.Tail.WriteTo(c.nc); err != nil {
					break
				}
			}
		}
		if err == nil && len(b) > 0 {
			_, err = c.nc.Write(b)
		}
		if cap(b) <= 1<<20 {
			*p = b[:0]
			coalesce.Put(p)
		}
		return err
	}
	c.vec = c.vec[:0]
	for _, it := range items {
		c.vec = append(c.vec, it.x.Head[:])
		if len(it.x.Out) > 0 {
			c.vec = append(c.vec, it.x.Out)
		}
		if it.x.Tail != nil {
			if err := c.writeVec(); err != nil {
				return err
			}
			if _, err := it.x.Tail.WriteTo(c.nc); err != nil {
				return err
			}
		}
	}
	return c.writeVec()
}

// writeVec writes the buffered vector in one vectored write and empties it.
func (c *conn) writeVec() error {
	if len(c.vec) == 0 {
		return nil
	}
	c.bufs = c.vec
	_, err := c.raw.WriteBuffers(c.bufs)
	clear(c.vec)
	c.vec = c.vec[:0]
	return err
}
