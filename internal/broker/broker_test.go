package broker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/config"
)

func testConfig(t *testing.T) config.Config {
	c := config.Default()
	c.TCP.Address = "127.0.0.1:0"
	c.QUIC.Address, c.WebSocket.Address = "127.0.0.1:0", "127.0.0.1:0" // on, but off the fixed default ports
	c.HTTP.Address = "127.0.0.1:0"
	c.System.Path = t.TempDir()
	return c
}

var cheap = WithPasswordParams(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32})

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"invalid value", func(c *config.Config) { c.Metadata.ClientsTableMax = 0 }, "clients_table_max"},
		{"tls without files", func(c *config.Config) {
			c.TCP.TLS = config.TLSConfig{Enabled: true, CertFile: filepath.Join(c.System.Path, "none.pem"), KeyFile: "k"}
		}, "tcp.tls"},
		{"address in use", nil, "listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(t)
			if tc.mutate != nil {
				tc.mutate(&c)
			} else {
				first, err := New(c, cheap, WithRootCredentials("iggy", "iggy"))
				if err != nil {
					t.Fatal(err)
				}
				defer first.Shutdown(context.Background())
				c.TCP.Address = first.Addr().String()
			}
			_, err := New(c, cheap, WithRootCredentials("iggy", "iggy"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestRunAndShutdown(t *testing.T) {
	b, err := New(testConfig(t), cheap, WithRootCredentials("admin", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := b.Users().UserByName("admin")
	if !ok || u.ID != auth.RootUserID || !u.Active() {
		t.Fatalf("root user %+v %v", u, ok)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background()) }()
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := b.Run(context.Background()); err == nil {
		t.Fatal("second Run accepted")
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}
