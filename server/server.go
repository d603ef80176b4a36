// Package server embeds an Iggo broker in a Go program or a test:
//
//	cfg := server.DefaultConfig()
//	cfg.TCP.Address = "127.0.0.1:0"
//	cfg.QUIC.Enabled, cfg.WebSocket.Enabled = false, false // or ports 0
//	cfg.System.Path = dir
//	srv, err := server.New(cfg)
//	...
//	go srv.Run(ctx)
//	addr := srv.Addr()
//	...
//	srv.Shutdown(ctx)
//
// New validates the configuration, prepares the data directory, creates
// the root user (IGGY_ROOT_USERNAME/IGGY_ROOT_PASSWORD, else iggy/iggy) and
// binds the listeners, so Addr is valid as soon as New returns. QUIC
// (UDP 127.0.0.1:8080) and WebSocket (127.0.0.1:8092) are on by default,
// as in the reference: a program or test that runs several servers must
// disable them or give them port 0.
package server

import (
	"context"
	"log/slog"
	"net"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
)

// Config is the server configuration: the TOML schema of the reference
// server (see DefaultConfig for the defaults).
type Config = config.Config

// DefaultConfig returns the shipped defaults: data in ./local_data, TCP on
// 127.0.0.1:8090, QUIC on UDP 127.0.0.1:8080, WebSocket on
// 127.0.0.1:8092, heartbeat every 30 s, 64 MiB frames.
func DefaultConfig() Config { return config.Default() }

// LoadConfig reads the TOML file at path (none when empty) over the
// defaults, then applies IGGY_* variables from environ (os.Environ form).
// Unknown keys are logged to logger at warn level.
func LoadConfig(path string, environ []string, logger *slog.Logger) (Config, error) {
	cfg, notices, err := config.Load(path, environ)
	if logger == nil {
		logger = slog.Default()
	}
	for _, n := range notices {
		if n.Warn {
			logger.Warn(n.Message)
		} else {
			logger.Debug(n.Message)
		}
	}
	return cfg, err
}

// Option configures a Server.
type Option func(*[]broker.Option)

// WithLogger sets the structured logger (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option {
	return func(o *[]broker.Option) { *o = append(*o, broker.WithLogger(l)) }
}

// WithRootCredentials sets the root user's credentials instead of reading
// IGGY_ROOT_USERNAME/IGGY_ROOT_PASSWORD.
func WithRootCredentials(username, password string) Option {
	return func(o *[]broker.Option) { *o = append(*o, broker.WithRootCredentials(username, password)) }
}

// Server is an embedded broker.
type Server struct {
	b *broker.Broker
}

// New builds a server from cfg and binds its listener.
func New(cfg Config, opts ...Option) (*Server, error) {
	var bo []broker.Option
	for _, o := range opts {
		o(&bo)
	}
	b, err := broker.New(cfg, bo...)
	if err != nil {
		return nil, err
	}
	return &Server{b: b}, nil
}

// Run serves clients until ctx ends (then it shuts down gracefully and
// returns nil) or Shutdown is called.
func (s *Server) Run(ctx context.Context) error { return s.b.Run(ctx) }

// Addr is the bound TCP address.
func (s *Server) Addr() net.Addr { return s.b.Addr() }

// QUICAddr is the bound QUIC (UDP) address, nil when QUIC is disabled.
func (s *Server) QUICAddr() net.Addr { return s.b.QUICAddr() }

// WebSocketAddr is the bound WebSocket address, nil when disabled.
func (s *Server) WebSocketAddr() net.Addr { return s.b.WebSocketAddr() }

// Shutdown stops accepting, finishes in-flight requests, flushes replies
// and closes connections; ctx bounds the wait.
func (s *Server) Shutdown(ctx context.Context) error { return s.b.Shutdown(ctx) }
