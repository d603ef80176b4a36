package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/console"
	"github.com/iggo-dev/iggo/internal/httpapi"
)

// WithHTTPMetrics replaces the handler served at http.metrics.endpoint
// (behind bearer auth; the broker's metrics registry otherwise, see
// observe.go).
func WithHTTPMetrics(h http.Handler) Option { return func(o *options) { o.httpMetrics = h } }

// WithHTTPObserve replaces the per-request hook of the HTTP API (route
// pattern, method, status, duration; the metrics registry's otherwise).
func WithHTTPObserve(f func(route, method string, status int, d time.Duration)) Option {
	return func(o *options) { o.httpObserve = f }
}

// WithWebUI replaces the console files served under /ui when http.web_ui
// is on (the embedded console otherwise).
func WithWebUI(f fs.FS) Option { return func(o *options) { o.webUI = f } }

// httpOptions are the HTTP API's broker options (kept in options).
type httpOptions struct {
	httpMetrics http.Handler
	httpObserve func(route, method string, status int, d time.Duration)
	webUI       fs.FS
}

// listenHTTP binds the HTTP API when [http] is enabled. It runs after the
// metadata store recovered, so the first request sees recovered state
// (http-api.md §9).
func (b *Broker) listenHTTP() error {
	cfg := &b.cfg.HTTP
	if !cfg.Enabled {
		return nil
	}
	ui := b.opts.webUI
	if ui == nil {
		ui = console.FS()
	}
	opts := httpapi.Options{
		Config:          *cfg,
		Dispatcher:      b.disp,
		Authenticator:   auth.NewAuthenticator(b.meta, b.hasher, b.opts.now),
		DataDir:         b.cfg.System.Path,
		ClientsTableMax: b.cfg.Metadata.ClientsTableMax,
		Now:             b.opts.now,
		Logger:          b.log.With("component", "http"),
		Metrics:         b.metricsHandler(),
		Observe:         b.metricsObserve(),
		WebUI:           ui,
		WebUICSP:        console.ContentSecurityPolicy,
		EffectiveConfig: b.boundConfig,
		TokenLog:        b.meta,
		PartitionTiers:  b.tier != nil,
	}
	b.httpClusterOptions(&opts)
	api, err := httpapi.New(opts)
	if err != nil {
		return fmt.Errorf("http: %w", err)
	}
	var tlsCfg *tls.Config
	if cfg.TLS.Enabled {
		cert, err := tls.LoadX509KeyPair(cfg.TLS.CertFile, cfg.TLS.KeyFile)
		if err != nil {
			return fmt.Errorf("http.tls: load certificate: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	b.http, err = httpapi.Listen(httpapi.ListenConfig{
		Address:        cfg.Address,
		TLS:            tlsCfg,
		MaxConnections: b.cfg.TCP.MaxConnections,
		HeaderTimeout:  b.cfg.MessageBus.HandshakeGrace.Std(),
		ReadTimeout:    b.cfg.TCP.FrameReadTimeout.Std(),
		WriteTimeout:   b.cfg.TCP.WriteTimeout.Std(),
		Logger:         b.log.With("component", "http"),
	}, api)
	if err != nil {
		return fmt.Errorf("http: listen on %s: %w", cfg.Address, err)
	}
	b.httpAPI = api
	return nil
}

// boundConfig is the effective configuration with the bound listen
// addresses (port 0 resolved): what runtime/current_config.toml holds and
// what GET /config shows.
func (b *Broker) boundConfig() config.Config {
	c := b.cfg
	if b.tcp != nil {
		c.TCP.Address = b.tcp.Addr().String()
	}
	b.boundTransports(&c)
	if b.http != nil {
		c.HTTP.Address = b.http.Addr().String()
	}
	return c
}

// HTTPAddr is the bound HTTP API address, nil when disabled.
func (b *Broker) HTTPAddr() net.Addr {
	if b.http == nil {
		return nil
	}
	return b.http.Addr()
}

// HTTPAPI is the HTTP API handler, nil when disabled.
func (b *Broker) HTTPAPI() *httpapi.Server { return b.httpAPI }

// serveHTTP starts serving the HTTP API; the Serve result goes to errs.
func (b *Broker) serveHTTP(errs chan<- error) {
	if b.http == nil {
		return
	}
	name := "http"
	if b.http.TLS() {
		name = "https"
	}
	ui := consoleOff
	if b.cfg.HTTP.WebUI {
		ui = consoleURL(b.http.Addr(), b.http.TLS())
	}
	b.log.Info("iggo server listening", "transport", name, "address", b.http.Addr().String(), "console", ui)
	go func() { errs <- b.http.Serve() }()
}

// shutdownHTTP stops the HTTP API listener.
func (b *Broker) shutdownHTTP(ctx context.Context) error {
	if b.http == nil {
		return nil
	}
	if err := b.http.Shutdown(ctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	return nil
}

// HTTPConnections is the number of open HTTP API connections.
func (b *Broker) HTTPConnections() int {
	if b.http == nil {
		return 0
	}
	return b.http.Connections()
}
