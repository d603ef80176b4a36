package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/iggo-dev/iggo/internal/transport/bufpool"
	"github.com/iggo-dev/iggo/internal/transport/connset"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
)

// Config configures the listener.
type Config struct {
	// Address is the TCP host:port to bind (port 0 picks a free one).
	Address string
	// TLS, when non-nil, serves WSS instead of WS on Address.
	TLS *tls.Config
	// MaxFrameSize is the largest accepted request frame (and message),
	// header included.
	MaxFrameSize uint32
	// MaxWireFrame is the largest outbound WebSocket frame; larger answers
	// are split into continuation frames.
	MaxWireFrame int
	// HandshakeTimeout bounds TLS plus the upgrade.
	HandshakeTimeout time.Duration
	// CloseGrace bounds the close handshake the server starts.
	CloseGrace time.Duration
	// FrameReadTimeout bounds the time from a message's first frame to
	// its last byte.
	FrameReadTimeout time.Duration
	// WriteTimeout bounds the write of one answer.
	WriteTimeout time.Duration
	// MaxConnections caps open connections; later upgrades get 503.
	MaxConnections int
	Logger         *slog.Logger
}

// Server accepts WebSocket connections and serves them.
type Server struct {
	cfg      Config
	d        *dispatch.Dispatcher
	sessions *session.Manager
	ln       net.Listener
	http     *http.Server
	log      *slog.Logger
	pools    bufpool.Pools

	conns connset.Set[*conn]
}

// connKey is the request-context key of the accepted net.Conn.
type connKey struct{}

// Listen binds the TCP listener; Serve accepts on it.
func Listen(cfg Config, d *dispatch.Dispatcher) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxWireFrame <= 0 {
		cfg.MaxWireFrame = 16 << 20
	}
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, d: d, sessions: d.Sessions(), ln: ln, log: cfg.Logger}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: cfg.HandshakeTimeout,
		// No HTTP/2: the upgrade is HTTP/1.1 only.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ConnContext:  func(ctx context.Context, nc net.Conn) context.Context { return context.WithValue(ctx, connKey{}, nc) },
		ErrorLog:     slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	s.http.SetKeepAlivesEnabled(false)
	if cfg.TLS != nil {
		t := cfg.TLS.Clone()
		t.NextProtos = []string{"http/1.1"}
		s.ln = tls.NewListener(ln, t)
	}
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Connections is the number of open WebSocket connections.
func (s *Server) Connections() int { return s.conns.Len() }

// Serve accepts connections until Shutdown; it then returns nil.
func (s *Server) Serve() error {
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("websocket serve: %w", err)
	}
	return nil
}

// ServeHTTP upgrades the request and serves the connection until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	nc, _ := r.Context().Value(connKey{}).(net.Conn)
	if nc == nil || s.stopping() || s.conns.Full(s.cfg.MaxConnections) {
		http.Error(w, "server unavailable", http.StatusServiceUnavailable)
		return
	}
	// The upgrade must finish within the handshake budget too.
	nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	wc, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // no Origin check (the reference has none)
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.log.Debug("websocket upgrade failed", "addr", r.RemoteAddr, "err", err)
		return
	}
	nc.SetDeadline(time.Time{})
	wc.SetReadLimit(int64(s.cfg.MaxFrameSize))
	c := s.track(wc, nc, r.RemoteAddr)
	if c == nil {
		wc.CloseNow()
		return
	}
	c.run()
}

// track registers a new connection; nil after Shutdown or when the
// connection cap is reached (the check before the upgrade is only a fast
// path: Add counts concurrent upgrades under its lock).
func (s *Server) track(wc *websocket.Conn, nc net.Conn, addr string) *conn {
	c, ok := s.conns.Add(s.cfg.MaxConnections, func() *conn { return newConn(s, wc, nc, addr) })
	if !ok {
		return nil
	}
	return c
}

func (s *Server) remove(c *conn) { s.conns.Remove(c) }

func (s *Server) stopping() bool { return s.conns.Stopping() }

// Shutdown stops accepting, lets every connection finish the request it
// is serving, then closes them (Close frame, bounded by CloseGrace).
// Sessions are kept, as on TCP. When ctx ends first, the remaining
// connections are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	// Closing the http.Server closes the listener and the connections
	// still in the upgrade.
	return s.conns.Shutdown(ctx, s.http.Close)
}
