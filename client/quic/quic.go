// Package quic is the QUIC transport of the Go SDK: every request frame
// goes out on a new bidirectional stream, which the client finishes
// (FIN) after the frame, and the reply is read from the same stream
// (../shared/protocol/transports.md §3). Importing it is opt-in, so
// programs that speak TCP only never link quic-go.
//
//	c, err := client.Dial(ctx, "127.0.0.1:8080",
//		client.WithTransport(quic.Transport{}),
//		client.WithCredentials("iggy", "iggy"))
//
// or client.Dial(ctx, "iggy+quic://iggy:iggy@127.0.0.1:8080",
// client.WithTransport(quic.Transport{})).
//
// TLS: QUIC always runs TLS 1.3. Without client.WithTLS the certificate is
// NOT verified and the server name is "localhost", as the reference SDKs
// do by default (validate_certificate = false); pass a *tls.Config to
// verify it.
package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	qgo "github.com/quic-go/quic-go"

	"github.com/iggo-dev/iggo/wire"
)

// Defaults of the reference SDK (transports.md §3).
const (
	DefaultKeepAlive   = 5 * time.Second
	DefaultIdleTimeout = 10 * time.Second
)

// Transport dials QUIC connections; its zero value uses the defaults. It
// implements client.Transport.
type Transport struct {
	// KeepAlive is the QUIC PING period (DefaultKeepAlive when 0; negative
	// disables).
	KeepAlive time.Duration
	// IdleTimeout closes a silent connection (DefaultIdleTimeout when 0).
	IdleTimeout time.Duration
	// MaxFrameSize bounds a frame written (default wire.MaxFrameSize).
	MaxFrameSize int
}

// Scheme is the connection-string transport name ("quic").
func (Transport) Scheme() string { return "quic" }

// Dial opens a QUIC connection to addr (host:port). tlsCfg, when non-nil,
// is used as is (NextProtos cleared: the server offers no ALPN);
// otherwise the certificate is not verified (see the package comment).
func (t Transport) Dial(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	var cfg *tls.Config
	if tlsCfg != nil {
		cfg = tlsCfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = "localhost"
		}
	} else {
		cfg = &tls.Config{ServerName: "localhost", InsecureSkipVerify: true}
	}
	cfg.NextProtos = nil
	cfg.MinVersion = tls.VersionTLS13
	ka := t.KeepAlive
	if ka == 0 {
		ka = DefaultKeepAlive
	} else if ka < 0 {
		ka = 0
	}
	idle := t.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	qc, err := qgo.DialAddr(ctx, addr, cfg, &qgo.Config{KeepAlivePeriod: ka, MaxIdleTimeout: idle})
	if err != nil {
		return nil, fmt.Errorf("quic dial %s: %w", addr, err)
	}
	max := t.MaxFrameSize
	if max <= 0 {
		max = wire.MaxFrameSize
	}
	return NewConn(qc, max), nil
}

// Errors of a Conn.
var (
	// ErrEmptyReply is returned by Read when the server finished a stream
	// without answering (it could not read the frame); the reference SDK
	// treats this as a broken connection too.
	ErrEmptyReply = errors.New("quic: stream ended without a reply")
	errBadFrame   = errors.New("quic: written bytes are not a valid frame")
	errClosed     = errors.New("quic: connection closed")
)

// Conn is a net.Conn over one QUIC connection. Writes are cut into frames
// by the header's size field; each frame opens a new stream, is written
// to it and the stream is finished. Reads return the replies of those
// streams in the order the streams were opened.
type Conn struct {
	qc  *qgo.Conn
	max int

	wmu  sync.Mutex
	hdr  [wire.HeaderSize]byte // guarded by wmu
	hn   int                   // guarded by wmu: header bytes buffered
	cur  *qgo.Stream           // guarded by wmu: stream of the frame being written
	left int                   // guarded by wmu: body bytes still to write on cur

	rmu  sync.Mutex
	rcur *qgo.Stream // guarded by rmu
	rgot int         // guarded by rmu: bytes read from rcur

	mu        sync.Mutex
	pending   []*qgo.Stream // guarded by mu: opened streams whose reply is unread
	rdeadline time.Time     // guarded by mu
	wdeadline time.Time     // guarded by mu
	reading   *qgo.Stream   // guarded by mu: rcur, for SetReadDeadline
	writing   *qgo.Stream   // guarded by mu: cur, for SetWriteDeadline
	ready     chan struct{} // signalled when pending grows; capacity 1
	closed    chan struct{}
	once      sync.Once
}

// NewConn wraps an established QUIC connection; frames larger than max
// bytes are refused.
func NewConn(qc *qgo.Conn, max int) *Conn {
	return &Conn{qc: qc, max: max, ready: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Write sends the frames in p, opening one stream per frame; a frame may
// span several writes.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if c.cur == nil {
			k := copy(c.hdr[c.hn:], p)
			c.hn += k
			p = p[k:]
			if c.hn < wire.HeaderSize {
				continue
			}
			if err := c.open(); err != nil {
				return n - len(p), err
			}
			continue
		}
		k := min(c.left, len(p))
		if _, err := c.cur.Write(p[:k]); err != nil {
			return n - len(p), err
		}
		p = p[k:]
		c.left -= k
		if c.left == 0 {
			c.cur.Close()
			c.cur = nil
		}
	}
	return n, nil
}

// open starts the stream of the frame whose header is buffered.
func (c *Conn) open() error {
	size := int(wire.PeekSize(c.hdr[:]))
	c.hn = 0
	if size < wire.HeaderSize || size > c.max {
		return errBadFrame
	}
	c.mu.Lock()
	wd := c.wdeadline
	c.mu.Unlock()
	ctx := context.Background()
	if !wd.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, wd)
		defer cancel()
	}
	st, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("quic open stream: %w", err)
	}
	c.mu.Lock()
	st.SetWriteDeadline(c.wdeadline)
	c.pending = append(c.pending, st)
	c.writing = st
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
	if _, err := st.Write(c.hdr[:]); err != nil {
		return err
	}
	c.left = size - wire.HeaderSize
	if c.left == 0 {
		st.Close()
	} else {
		c.cur = st
	}
	return nil
}

// Read reads reply bytes: the current stream's, then the next opened
// stream's.
func (c *Conn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		if c.rcur == nil {
			st, err := c.next()
			if err != nil {
				return 0, err
			}
			c.rcur, c.rgot = st, 0
			c.mu.Lock()
			st.SetReadDeadline(c.rdeadline)
			c.reading = st
			c.mu.Unlock()
		}
		n, err := c.rcur.Read(p)
		c.rgot += n
		if errors.Is(err, io.EOF) {
			empty := c.rgot == 0
			c.rcur.CancelRead(0)
			c.rcur = nil
			if empty {
				return n, ErrEmptyReply
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// next waits for the oldest opened stream whose reply is unread.
func (c *Conn) next() (*qgo.Stream, error) {
	for {
		c.mu.Lock()
		if len(c.pending) > 0 {
			st := c.pending[0]
			c.pending[0] = nil
			c.pending = c.pending[1:]
			c.mu.Unlock()
			return st, nil
		}
		deadline := c.rdeadline
		c.mu.Unlock()
		if err := c.wait(deadline); err != nil {
			return nil, err
		}
	}
}

// wait blocks until a stream is opened or a deadline changes, the
// deadline passes or the connection ends.
func (c *Conn) wait(deadline time.Time) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-c.ready:
		return nil
	case <-c.closed:
		return errClosed
	case <-c.qc.Context().Done():
		return fmt.Errorf("quic connection closed: %w", context.Cause(c.qc.Context()))
	case <-timeout:
		return os.ErrDeadlineExceeded
	}
}

// Close closes the connection (application code 0, no reason, as the
// reference SDK's shutdown).
func (c *Conn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.qc.CloseWithError(0, "")
}

// LocalAddr is the local UDP address.
func (c *Conn) LocalAddr() net.Addr { return c.qc.LocalAddr() }

// RemoteAddr is the server's UDP address.
func (c *Conn) RemoteAddr() net.Addr { return c.qc.RemoteAddr() }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds reads, including the wait for a reply stream.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdeadline = t
	if c.reading != nil {
		c.reading.SetReadDeadline(t)
	}
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}: // wake a waiting reader to see the deadline
	default:
	}
	return nil
}

// SetWriteDeadline bounds writes, including the wait for stream credit.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdeadline = t
	if c.writing != nil {
		c.writing.SetWriteDeadline(t)
	}
	return nil
}
