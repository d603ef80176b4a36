// Package itest is the integration-test harness: Start runs a real broker
// on a free loopback port with a temporary data directory, and Dial opens a
// raw-frame client built on package wire for protocol-level tests.
//
// Set IGGO_TEST_LOG=1 to see the broker's debug log on standard error.
package itest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/catalog/catalogtest"
	"github.com/iggo-dev/iggo/internal/config"
)

// Root credentials of every test broker.
const (
	RootUsername = "iggy"
	RootPassword = "iggy"
)

// TestPasswordParams keep Argon2id cheap so tests can log in thousands of
// times; verification still runs the real algorithm.
var TestPasswordParams = auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}

// Option adjusts a test broker.
type Option func(*settings)

type settings struct {
	cfg    config.Config
	broker []broker.Option
	tls    bool
	dir    string
	// transport is the listener Dial uses: "" (TCP), "quic" or "ws".
	transport string
	catalog   func(*catalogtest.Topics)
}

// WithCatalog gives the broker an in-memory topic catalog
// (catalogtest.Topics) instead of the metadata plane's, and calls setup
// with it before serving, so setup can add topics (their partitions are
// created at once).
func WithCatalog(setup func(*catalogtest.Topics)) Option {
	return func(s *settings) { s.catalog = setup }
}

// WithDir uses dir as the data directory instead of a new temporary one
// (a restart test starts a second broker on the first one's directory).
func WithDir(dir string) Option { return func(s *settings) { s.dir = dir } }

// WithConfig edits the configuration before the broker starts.
func WithConfig(f func(*config.Config)) Option { return func(s *settings) { f(&s.cfg) } }

// WithBrokerOptions passes options to broker.New.
func WithBrokerOptions(o ...broker.Option) Option {
	return func(s *settings) { s.broker = append(s.broker, o...) }
}

// WithTLS enables TLS with a self-signed certificate generated at start;
// Dial then speaks TLS and trusts that certificate.
func WithTLS() Option {
	return func(s *settings) {
		s.tls = true
		s.cfg.TCP.TLS.Enabled = true
		s.cfg.TCP.TLS.SelfSigned = true
	}
}

// Server is a running test broker.
type Server struct {
	Broker *broker.Broker
	// Addr is the bound "127.0.0.1:port".
	Addr string
	// Dir is the data directory.
	Dir string
	// ClientTLS is set when the broker serves TLS.
	ClientTLS *tls.Config
	// Catalog is the in-memory catalog of WithCatalog (nil otherwise).
	Catalog *catalogtest.Topics
	// Transport is the transport Dial uses ("tcp" or empty, "quic", "ws") and
	// TransportAddr its listener's address (transport.go).
	Transport     string
	TransportAddr string

	stop func()
}

// Stop shuts the broker down gracefully and waits for it; the test
// cleanup does the same for a broker still running.
func (s *Server) Stop() { s.stop() }

// Start runs a broker on 127.0.0.1:0 in t.TempDir() with root iggy/iggy;
// it is shut down (and waited for) by t.Cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := settings{cfg: config.Default()}
	s.cfg.TCP.Address = "127.0.0.1:0"
	s.noExtraTransports() // transport.go
	s.transportFromEnv()  // transport.go
	for _, o := range opts {
		o(&s)
	}
	dir := s.dir
	if dir == "" {
		dir = t.TempDir()
	}
	s.cfg.System.Path = dir
	var cat *catalogtest.Topics
	if s.catalog != nil {
		s.broker = append(s.broker, broker.WithTopics(func(d catalog.Data) catalog.Topics {
			cat = catalogtest.New(d)
			return cat
		}))
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("IGGO_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bo := append([]broker.Option{
		broker.WithLogger(logger),
		broker.WithPasswordParams(TestPasswordParams),
		broker.WithRootCredentials(RootUsername, RootPassword),
	}, s.broker...)
	if s.tls {
		// A missing cert file with self_signed generates the certificate;
		// write one here instead so the client can trust it.
		cert, err := broker.SelfSigned(time.Now(), "localhost")
		if err != nil {
			t.Fatal(err)
		}
		certFile, keyFile := writePEM(t, dir, cert)
		s.cfg.TCP.TLS.CertFile, s.cfg.TCP.TLS.KeyFile = certFile, keyFile
	}
	s.enableTransport() // transport.go
	b, err := broker.New(s.cfg, bo...)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	if cat != nil {
		s.catalog(cat)
	}
	srv := &Server{Broker: b, Addr: b.Addr().String(), Dir: dir, Catalog: cat}
	srv.setTransport(s.transport) // transport.go
	if s.tls {
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(s.cfg.TCP.TLS.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(pem)
		srv.ClientTLS = &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	srv.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("broker Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("broker did not stop within 30 s")
			}
		})
	}
	t.Cleanup(srv.stop)
	return srv
}
