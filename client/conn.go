package client

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// readBufferSize is the buffered reader in front of the socket: replies
// to sends are 280 bytes, so many are read per system call.
const readBufferSize = 64 << 10

// errResponseTimeout breaks a connection whose oldest request waited
// longer than the response timeout.
var errResponseTimeout = errors.New("no reply within the response timeout")

// conn is one transport connection. Requests are pipelined: the writer
// sends queued frames in order and the reader matches each reply to the
// oldest request sent, checking the echoed request number (our broker and
// the reference server answer in order; framing.md).
//
// With WithLockstep only one request is in flight at a time, as the
// official SDKs do.
//
// Goroutines: reader (owner: it shuts the connection down, waits for the
// others and hands unfinished calls back to the Client), writer, and
// monitor (response timeout and heartbeat).
type conn struct {
	cl      *Client
	nc      net.Conn
	addr    string        // the address dialed
	node    bool          // a partition-routing connection to a node (route.go), not the main one
	session atomic.Uint64 // epoch of the login on this connection, 0 before
	// login is the reply of the last login on this connection.
	login atomic.Pointer[wire.LoginRegisterReply]
	// lastWrite is the UnixNano time of the last frame written.
	lastWrite atomic.Int64

	mu     sync.Mutex
	queue  []*call     // guarded by mu: submitted, not yet written
	sent   []*call     // guarded by mu: written, awaiting a reply, in wire order
	sentAt []time.Time // guarded by mu: write time of sent[i]
	closed bool        // guarded by mu
	cause  error       // guarded by mu: why the connection closed

	kick chan struct{} // wakes the writer; capacity 1
	quit chan struct{} // closed by shutdown
	dead chan struct{} // closed when every goroutine exited and calls were handed off
	wg   sync.WaitGroup
}

func newConn(cl *Client, nc net.Conn, addr string) *conn {
	return &conn{cl: cl, nc: nc, addr: addr, kick: make(chan struct{}, 1), quit: make(chan struct{}), dead: make(chan struct{})}
}

// start runs the connection's goroutines.
func (cn *conn) start() {
	cn.lastWrite.Store(time.Now().UnixNano())
	cn.cl.wg.Add(1) // the reader; it waits for the other two
	cn.wg.Add(2)
	go cn.writeLoop()
	go cn.monitor()
	go cn.readLoop()
}

// enqueue submits c for writing. It returns false when the connection is
// closing; the call is then untouched.
func (cn *conn) enqueue(c *call) bool {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return false
	}
	cn.queue = append(cn.queue, c)
	cn.mu.Unlock()
	cn.wake()
	return true
}

// wake tells the writer there may be frames to write.
func (cn *conn) wake() {
	select {
	case cn.kick <- struct{}{}:
	default:
	}
}

// shutdown closes the connection with cause (first cause wins).
func (cn *conn) shutdown(cause error) {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return
	}
	cn.closed, cn.cause = true, cause
	cn.mu.Unlock()
	close(cn.quit)
	cn.nc.Close()
}

// writeLoop writes every queued frame, in queue order, with one vectored
// write per wake-up. Request numbers are assigned here, under mu, so the
// wire order of requests is the order of their numbers.
func (cn *conn) writeLoop() {
	defer cn.wg.Done()
	var bufs net.Buffers
	for {
		select {
		case <-cn.kick:
		case <-cn.quit:
			return
		}
		cn.mu.Lock()
		if cn.closed {
			cn.mu.Unlock()
			return
		}
		now := time.Now()
		session := cn.session.Load()
		bufs = bufs[:0]
		taken := 0
		for _, c := range cn.queue {
			if cn.cl.opts.lockstep && len(cn.sent) > 0 {
				break // lockstep: the next frame waits for the reply
			}
			taken++
			if c.abandoned.Load() && !c.internal {
				continue
			}
			if !c.numbered {
				c.setRequest(cn.cl.nextRequest(c.numbering))
			}
			c.setSession(session)
			cn.sent = append(cn.sent, c)
			cn.sentAt = append(cn.sentAt, now)
			bufs = append(bufs, c.frame)
		}
		rest := copy(cn.queue, cn.queue[taken:])
		clear(cn.queue[rest:])
		cn.queue = cn.queue[:rest]
		cn.mu.Unlock()
		if len(bufs) == 0 {
			continue
		}
		if _, err := bufs.WriteTo(cn.nc); err != nil {
			cn.shutdown(err)
			return
		}
		cn.lastWrite.Store(time.Now().UnixNano())
	}
}

// monitorTick is how often the monitor looks at the connection: a quarter
// of the shortest interval it enforces, kept within [10 ms, 1 s].
func monitorTick(responseTimeout, heartbeat time.Duration) time.Duration {
	d := time.Second
	for _, v := range []time.Duration{responseTimeout, heartbeat} {
		if v > 0 && v/4 < d {
			d = v / 4
		}
	}
	return max(d, 10*time.Millisecond)
}

// monitor breaks the connection when the oldest request has waited longer
// than the response timeout, and sends a PING after heartbeat of idleness
// on a logged-in connection.
func (cn *conn) monitor() {
	defer cn.wg.Done()
	rt, hb := cn.cl.opts.responseTimeout, cn.cl.opts.heartbeat
	if rt <= 0 && hb <= 0 {
		<-cn.quit
		return
	}
	t := time.NewTicker(monitorTick(rt, hb))
	defer t.Stop()
	for {
		select {
		case <-cn.quit:
			return
		case now := <-t.C:
			if rt > 0 {
				cn.mu.Lock()
				late := len(cn.sentAt) > 0 && now.Sub(cn.sentAt[0]) > rt
				cn.mu.Unlock()
				if late {
					cn.shutdown(errResponseTimeout)
					return
				}
			}
			if hb > 0 && cn.session.Load() != 0 && now.Sub(time.Unix(0, cn.lastWrite.Load())) >= hb {
				ping := newCall(wire.CmdPing, 0)
				ping.seal(cn.cl.id)
				ping.internal = true
				cn.enqueue(ping)
			}
		}
	}
}

// readLoop reads frames until the connection breaks, then hands the
// unfinished calls back to the Client.
func (cn *conn) readLoop() {
	err := cn.read()
	cn.shutdown(err)
	cn.wg.Wait()
	cn.handoff()
	close(cn.dead)
	cn.cl.wg.Done()
}

// err returns why the connection closed (nil while open).
func (cn *conn) err() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.cause
}

// read implements the client decode order of framing.md, steps 1 to 3:
// an eviction ends the session, a reply is matched to the oldest request
// sent and must echo its request number.
func (cn *conn) read() error {
	br := bufio.NewReaderSize(cn.nc, readBufferSize)
	var hdr [wire.HeaderSize]byte
	maxFrame := uint32(cn.cl.opts.maxFrame)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return err
		}
		switch kind := wire.PeekKind(hdr[:]); kind {
		case wire.KindEviction:
			var eh wire.EvictionHeader
			if err := eh.Decode(hdr[:]); err != nil {
				return &ProtocolError{Reason: "malformed eviction header"}
			}
			return eh.Err()
		case wire.KindReply:
		default:
			return &ProtocolError{Reason: "unexpected frame kind " + kind.String()}
		}
		size := wire.PeekSize(hdr[:])
		if size < wire.HeaderSize || size > maxFrame {
			return &ProtocolError{Reason: "reply size " + strconv.FormatUint(uint64(size), 10) + " out of bounds"}
		}
		var body []byte
		if size > wire.HeaderSize {
			body = cn.replyBody(int(size - wire.HeaderSize))
			if _, err := io.ReadFull(br, body); err != nil {
				return err
			}
		}
		var rh wire.ReplyHeader
		if err := rh.Decode(hdr[:]); err != nil {
			return &ProtocolError{Reason: "malformed reply header"}
		}
		cn.mu.Lock()
		if len(cn.sent) == 0 {
			cn.mu.Unlock()
			return &ProtocolError{Reason: "reply without a request in flight"}
		}
		c := cn.sent[0]
		if rh.Request != c.request {
			cn.mu.Unlock()
			return &ProtocolError{Reason: "reply to request " + strconv.FormatUint(rh.Request, 10) +
				" while request " + strconv.FormatUint(c.request, 10) + " is in flight"}
		}
		cn.sent[0] = nil
		cn.sent = cn.sent[1:]
		cn.sentAt = cn.sentAt[1:]
		more := len(cn.queue) > 0
		cn.mu.Unlock()
		if more && cn.cl.opts.lockstep {
			cn.wake()
		}
		if c.internal || c.abandoned.Load() {
			continue
		}
		c.reply, c.body = rh, body
		c.finish(nil)
	}
}

// replyBody returns the buffer for a reply body of n bytes: the oldest
// request's replyBuf when it fits (the reply answers that request, or the
// connection fails right after), otherwise a new one.
func (cn *conn) replyBody(n int) []byte {
	cn.mu.Lock()
	var buf []byte
	if len(cn.sent) > 0 {
		buf = cn.sent[0].replyBuf
	}
	cn.mu.Unlock()
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]byte, n)
}

// handoff runs after every goroutine of the connection exited. Requests
// that were sent but not answered get the eviction or protocol error that
// closed the connection; after a transport failure they, like the
// requests never written, go back to the Client to be resent on the next
// connection with their numbers. A node connection (partition routing)
// hands every unfinished call to the router instead.
func (cn *conn) handoff() {
	cn.mu.Lock()
	sent, queue, cause := cn.sent, cn.queue, cn.cause
	cn.sent, cn.queue, cn.sentAt = nil, nil, nil
	cn.mu.Unlock()
	if cn.node {
		// A node connection's calls go back to the router, which submits
		// them again elsewhere, whatever ended the connection.
		var calls []*call
		for _, c := range append(sent, queue...) {
			if !c.internal && !c.abandoned.Load() {
				calls = append(calls, c)
			}
		}
		cn.cl.router.adopt(cn, calls, cause)
		return
	}
	_, evicted := errors.AsType[*wire.EvictionError](cause)
	_, protocol := errors.AsType[*ProtocolError](cause)
	var retry []*call
	for _, c := range sent {
		switch {
		case c.internal || c.abandoned.Load():
		case c.noRetry || evicted || protocol:
			c.finish(cause)
		default:
			retry = append(retry, c)
		}
	}
	for _, c := range queue {
		switch {
		case c.internal || c.abandoned.Load():
		case c.noRetry:
			c.finish(cause)
		default:
			retry = append(retry, c)
		}
	}
	cn.cl.adopt(cn, retry, cause)
}
