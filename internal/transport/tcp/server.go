package tcp

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
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

	active atomic.Int64
	wg     sync.WaitGroup

	mu       sync.Mutex
	conns    map[*conn]struct{} // guarded by mu
	shutdown bool               // guarded by mu
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
	return &Server{cfg: cfg, d: d, sessions: d.Sessions(), ln: ln, log: cfg.Logger, conns: map[*conn]struct{}{}}, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Connections is the number of open connections.
func (s *Server) Connections() int { return int(s.active.Load()) }

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
		if s.active.Load() >= int64(s.cfg.MaxConnections) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		nc.Close()
		return nil
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.active.Add(1)
	s.wg.Add(1)
	return c
}

func (s *Server) remove(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Add(-1)
	s.wg.Done()
}

// Shutdown stops accepting, lets every connection finish the request it is
// serving and flush its replies, then closes them. Sessions are kept (no
// Logout is committed) so they can survive a restart. When ctx ends first,
// the remaining connections are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	for _, c := range conns {
		c.stop()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		for _, c := range conns {
			c.nc.Close()
		}
		<-done
		return ctx.Err()
	}
}

func (s *Server) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown
}
