// Package ws is the WebSocket (and WSS) transport of the Go SDK: it
// carries the binary protocol as one frame per binary WebSocket message
// (../shared/protocol/transports.md §4, §5). Importing it is opt-in, so
// programs that speak TCP only never link a WebSocket library.
//
//	c, err := client.Dial(ctx, "127.0.0.1:8092",
//		client.WithTransport(ws.Transport{}),
//		client.WithCredentials("iggy", "iggy"))
//
// or, with a connection string, client.Dial(ctx,
// "iggy+ws://iggy:iggy@127.0.0.1:8092", client.WithTransport(ws.Transport{})).
// With client.WithTLS (or ?tls=true) the connection is WSS.
package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/iggo-dev/iggo/wire"
)

// Transport dials WebSocket connections; its zero value is ready to use.
// It implements client.Transport.
type Transport struct {
	// Path is the request path (default "/"); the server accepts any.
	Path string
	// MaxFrameSize bounds an accepted reply message (default
	// wire.MaxFrameSize, 64 MiB).
	MaxFrameSize int
}

// Scheme is the connection-string transport name ("ws").
func (Transport) Scheme() string { return "ws" }

// Dial opens a WebSocket connection to addr (host:port): WSS when tlsCfg
// is non-nil (its ServerName defaults to the host of addr), WS otherwise.
// The returned net.Conn sends every complete frame written to it as one
// binary message and reads reply messages back as a byte stream.
func (t Transport) Dial(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	scheme := "ws"
	hc := http.DefaultClient
	if tlsCfg != nil {
		scheme = "wss"
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		cfg.NextProtos = []string{"http/1.1"}
		hc = &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: false}}
	}
	path := t.Path
	if path == "" {
		path = "/"
	}
	url := scheme + "://" + addr + path
	wc, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, CompressionMode: websocket.CompressionDisabled})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("websocket dial %s: %w", url, err)
	}
	limit := t.MaxFrameSize
	if limit <= 0 {
		limit = wire.MaxFrameSize
	}
	nc := websocket.NetConn(context.Background(), wc, websocket.MessageBinary)
	wc.SetReadLimit(int64(limit)) // NetConn lifts the limit; restore it
	return &Conn{Conn: nc, max: limit}, nil
}

// errBadFrame reports bytes written that cannot start a frame.
var errBadFrame = errors.New("ws: written bytes are not a valid frame")

// Conn is a net.Conn over one WebSocket connection. Writes are cut into
// frames by the header's size field, and each frame is sent as one binary
// message; reads return the bytes of reply messages in order.
type Conn struct {
	net.Conn // coder/websocket's NetConn: reads, deadlines, Close

	max int
	mu  sync.Mutex
	buf []byte // guarded by mu: a frame being assembled
}

// Write sends the frames in p. A write holding exactly one whole frame
// (the common case) goes out without a copy; partial frames are buffered
// until complete.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		if len(c.buf) == 0 && len(p) >= wire.HeaderSize {
			size := int(wire.PeekSize(p))
			if size < wire.HeaderSize || size > c.max {
				return n - len(p), errBadFrame
			}
			if len(p) >= size {
				if _, err := c.Conn.Write(p[:size]); err != nil {
					return n - len(p), err
				}
				p = p[size:]
				continue
			}
		}
		need := wire.HeaderSize
		if len(c.buf) >= wire.HeaderSize {
			need = int(wire.PeekSize(c.buf))
		}
		k := min(need-len(c.buf), len(p))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) < wire.HeaderSize {
			continue
		}
		size := int(wire.PeekSize(c.buf))
		if size < wire.HeaderSize || size > c.max {
			c.buf = c.buf[:0]
			return n - len(p), errBadFrame
		}
		if len(c.buf) == size {
			_, err := c.Conn.Write(c.buf)
			c.buf = c.buf[:0]
			if err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}
