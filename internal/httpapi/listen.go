package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts and limits of the HTTP listener (Iggo choices: the reference
// leaves them to its framework).
const (
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxHeaderBytes caps the request line and headers.
	DefaultMaxHeaderBytes = 64 << 10
)

// ListenConfig configures a Listener.
type ListenConfig struct {
	Address string
	// TLS, when set, serves HTTPS with ALPN h2 then http/1.1.
	TLS *tls.Config
	// MaxConnections caps open connections. At the cap a new connection
	// replaces the longest-idle keep-alive connection; when none is idle it
	// is closed at once.
	MaxConnections int
	// HeaderTimeout bounds the TLS handshake plus request headers
	// (message_bus.handshake_grace).
	HeaderTimeout time.Duration
	// ReadTimeout bounds reading one whole request (tcp.frame_read_timeout):
	// a slow client is cut off.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing one reply (tcp.write_timeout).
	WriteTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections (DefaultIdleTimeout
	// when 0).
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// Listener is the bound HTTP(S) listener in front of a Server.
type Listener struct {
	srv  *http.Server
	ln   *limitListener
	tls  bool
	addr net.Addr
}

// Listen binds cfg.Address for h. Serving starts with Serve.
func Listen(cfg ListenConfig, h http.Handler) (*Listener, error) {
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, err
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	if cfg.TLS != nil {
		protos.SetHTTP2(true)
		cfg.TLS = cfg.TLS.Clone()
		cfg.TLS.NextProtos = []string{"h2", "http/1.1"}
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         cfg.TLS,
		Protocols:         &protos,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	l := &limitListener{Listener: ln, max: int64(cfg.MaxConnections), idle: map[net.Conn]time.Time{}}
	srv.ConnState = l.track
	return &Listener{srv: srv, ln: l, tls: cfg.TLS != nil, addr: ln.Addr()}, nil
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.addr }

// TLS reports whether the listener serves HTTPS.
func (l *Listener) TLS() bool { return l.tls }

// Connections is the number of open connections.
func (l *Listener) Connections() int { return int(l.ln.open.Load()) }

// Serve serves until Shutdown; it returns nil after a shutdown.
func (l *Listener) Serve() error {
	var err error
	if l.tls {
		err = l.srv.ServeTLS(l.ln, "", "")
	} else {
		err = l.srv.Serve(l.ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("http serve: %w", err)
	}
	return nil
}

// Shutdown stops accepting, lets requests in progress finish until ctx
// ends, then closes every connection.
func (l *Listener) Shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	if err != nil {
		_ = l.srv.Close()
	}
	_ = l.ln.Close()
	return err
}

// limitListener caps open connections at max: at the cap a new
// connection replaces the longest-idle keep-alive one, else it is closed.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64

	mu   sync.Mutex
	idle map[net.Conn]time.Time // keep-alive connections between requests; guarded by mu
}

// track is the http.Server ConnState hook: it keeps the idle set.
func (l *limitListener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		l.idle[c] = time.Now()
		return
	}
	delete(l.idle, c)
}

// evictIdle closes the longest-idle connection; false when none is idle.
func (l *limitListener) evictIdle() bool {
	l.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(l.idle, oldest)
	}
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Close()
	return true
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max > 0 && l.open.Load() >= l.max && !l.evictIdle() {
			_ = c.Close()
			continue
		}
		l.open.Add(1)
		return &countedConn{Conn: c, l: l}, nil
	}
}

type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
