package tcp

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/transport/connset"
)

// Config configures the listener.
type Config struct {
	// Address is host:port to listen on (port 0 picks a free one).
	Address string
	// TLS, when non-nil, wraps every connection in TLS.
	TLS *tls.Config
	// MaxConnections caps open connections.
	MaxConnections int
	// MaxFrameSize is the largest accepted frame, header included.
	MaxFrameSize uint32
	// FrameReadTimeout bounds the time from a frame's first byte to its last.
	FrameReadTimeout time.Duration
	// WriteTimeout bounds one vectored write.
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// Server accepts connections and runs them.
type Server struct {
	cfg      Config
	d        *dispatch.Dispatcher
	sessions *session.Manager
	ln       net.Listener
	log      *slog.Logger

	conns connset.Set[*conn]
}

// Listen binds the listener; Serve accepts on it.
func Listen(cfg Config, d *dispatch.Dispatcher) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, d: d, sessions: d.Sessions(), ln: ln, log: cfg.Logger}, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Connections is the number of open connections.
func (s *Server) Connections() int { return s.conns.Len() }

// Serve accepts connections until Shutdown; it then returns nil.
func (s *Server) Serve() error {
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Temporary failures (EMFILE and the like): back off and retry.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		if s.conns.Full(s.cfg.MaxConnections) {
			s.log.Debug("connection refused: limit reached", "addr", nc.RemoteAddr().String(), "limit", s.cfg.MaxConnections)
			nc.Close()
			continue
		}
		if c := s.track(nc); c != nil {
			go c.run()
		}
	}
}

// track registers a new connection; nil (and nc closed) after Shutdown.
func (s *Server) track(nc net.Conn) *conn {
	c, ok := s.conns.Add(0, func() *conn { return newConn(s, nc) })
	if !ok {
		nc.Close()
		return nil
	}
	return c
}

func (s *Server) remove(c *conn) { s.conns.Remove(c) }

// Shutdown stops accepting, lets every connection finish the request it is
// serving and flush its replies, then closes them. Sessions are kept (no
// Logout is committed) so they can survive a restart. When ctx ends first,
// the remaining connections are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.conns.Shutdown(ctx, func() error {
		if err := s.ln.Close(); !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
}

func (s *Server) stopping() bool { return s.conns.Stopping() }
