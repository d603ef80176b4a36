package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/iggo-dev/iggo/client"
	clientquic "github.com/iggo-dev/iggo/client/quic"
	clientws "github.com/iggo-dev/iggo/client/ws"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/server"
)

// shutdownTimeout bounds the embedded broker's graceful stop.
const shutdownTimeout = 30 * time.Second

// target is the server a run talks to.
type target struct {
	addr    string
	tls     *tls.Config
	label   string // for the result file: the address or "embedded"
	dataDir string // the embedded broker's data directory
	stop    func() error
}

// startTarget connects to cfg.Addr or starts an embedded broker.
func startTarget(cfg *Config) (*target, error) {
	if cfg.Addr != "" {
		t := &target{addr: cfg.Addr, label: cfg.Addr, stop: func() error { return nil }}
		if cfg.TLS {
			tc, err := clientTLS(cfg)
			if err != nil {
				return nil, err
			}
			t.tls = tc
		}
		return t, nil
	}
	return startEmbedded(cfg)
}

// clientTLS builds the client TLS configuration from the flags.
func clientTLS(cfg *Config) (*tls.Config, error) {
	tc := &tls.Config{ServerName: cfg.TLSServerName, InsecureSkipVerify: cfg.TLSInsecure, MinVersion: tls.VersionTLS12}
	if cfg.TLSCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("read TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA file %s: no certificate", cfg.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// startEmbedded runs a broker in-process on a loopback port, with its data
// in cfg.DataPath or a temporary directory removed at stop. With TLS it
// uses an ephemeral self-signed certificate, which the client does not
// verify.
func startEmbedded(cfg *Config) (*target, error) {
	dir, temp := cfg.DataPath, false
	if dir == "" {
		d, err := os.MkdirTemp("", "iggo-bench-*")
		if err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		dir, temp = d, true
	}
	sc := server.DefaultConfig()
	sc.TCP.Address = "127.0.0.1:0"
	sc.System.Path = dir
	// QUIC and WebSocket default to fixed ports; bind free ones.
	sc.QUIC.Address, sc.WebSocket.Address = "127.0.0.1:0", "127.0.0.1:0"
	sc.HTTP.Address = "127.0.0.1:0"
	if cfg.RetentionInterval > 0 {
		sc.DataMaintenance.Messages.Interval = config.Duration(cfg.RetentionInterval)
	}
	if cfg.TLS {
		// A certificate path that does not exist selects the generated one.
		tc := &sc.TCP.TLS
		if cfg.Transport == "ws" {
			tc = &sc.WebSocket.TLS
		}
		tc.Enabled, tc.SelfSigned = true, true
		tc.CertFile = filepath.Join(dir, "bench-cert.pem")
		tc.KeyFile = filepath.Join(dir, "bench-key.pem")
	}
	logOut := cfg.Log
	if logOut == nil {
		logOut = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(sc, server.WithLogger(logger), server.WithRootCredentials(cfg.Username, cfg.Password))
	if err != nil {
		if temp {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("start embedded broker: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t := &target{addr: srv.Addr().String(), label: "embedded", dataDir: dir}
	switch cfg.Transport {
	case "quic":
		t.addr = srv.QUICAddr().String()
	case "ws":
		t.addr = srv.WebSocketAddr().String()
	}
	if cfg.TLS {
		t.tls = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	}
	t.stop = func() error {
		sctx, scancel := context.WithTimeout(context.Background(), shutdownTimeout)
		err := srv.Shutdown(sctx)
		scancel()
		cancel()
		if rerr := <-done; rerr != nil && !errors.Is(rerr, context.Canceled) && err == nil {
			err = rerr
		}
		if temp {
			if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
				err = rerr
			}
		}
		if err != nil {
			return fmt.Errorf("stop embedded broker: %w", err)
		}
		return nil
	}
	return t, nil
}

// dial opens one connection, logged in.
func (t *target) dial(ctx context.Context, cfg *Config) (*client.Client, error) {
	opts := []client.Option{client.WithCredentials(cfg.Username, cfg.Password), client.WithPartitionRouting(!cfg.NoPartitionRouting)}
	if t.tls != nil {
		opts = append(opts, client.WithTLS(t.tls))
	}
	switch cfg.Transport {
	case "quic":
		opts = append(opts, client.WithTransport(clientquic.Transport{}))
	case "ws":
		opts = append(opts, client.WithTransport(clientws.Transport{}))
	}
	c, err := client.Dial(ctx, t.addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", t.addr, err)
	}
	return c, nil
}
