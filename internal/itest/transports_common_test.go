package itest

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// withAllTransports enables QUIC and WebSocket on free ports.
func withAllTransports(c *config.Config) {
	c.QUIC.Enabled, c.WebSocket.Enabled, c.HTTP.Enabled = true, true, true
}

func portOf(t *testing.T, addr string) uint16 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(n)
}

func clusterNode(t *testing.T, c *Client) wire.ClusterNode {
	t.Helper()
	var m wire.ClusterMetadata
	if err := m.Decode(ExpectPlain(t, c.Call(wire.CmdGetClusterMetadata, nil))); err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes) != 1 {
		t.Fatalf("cluster metadata %+v", m)
	}
	return m.Nodes[0]
}

// TestClusterMetadataPorts: each enabled transport's port, 0 when off.
func TestClusterMetadataPorts(t *testing.T) {
	s := Start(t, WithConfig(withAllTransports))
	c := s.Dial(t)
	c.LoginRoot()
	n := clusterNode(t, c)
	q, w, h := s.Broker.QUICAddr().String(), s.Broker.WebSocketAddr().String(), s.Broker.HTTPAddr().String()
	if n.TCPPort != portOf(t, s.Addr) || n.QUICPort != portOf(t, q) || n.WebSocketPort != portOf(t, w) || n.HTTPPort != portOf(t, h) {
		t.Fatalf("node %+v; tcp %s quic %s ws %s http %s", n, s.Addr, q, w, h)
	}
	// The effective configuration holds the bound addresses.
	data, err := os.ReadFile(filepath.Join(s.Dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	eff, _, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if eff.QUIC.Address != q || eff.WebSocket.Address != w || !eff.QUIC.Enabled || !eff.WebSocket.Enabled {
		t.Fatalf("current_config.toml: quic %+v websocket %+v", eff.QUIC, eff.WebSocket)
	}

	off := Start(t)
	oc := off.Dial(t)
	oc.LoginRoot()
	if n := clusterNode(t, oc); n.QUICPort != 0 || n.WebSocketPort != 0 || n.HTTPPort != 0 || n.TCPPort == 0 {
		t.Fatalf("disabled transports reported: %+v", n)
	}
}

// TestTransportByte: GET_ME reports 2 over QUIC and 4 over WebSocket and
// WSS, with the connection's address.
func TestTransportByte(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []Option
		transport wire.Transport
	}{
		{"quic", []Option{WithTransport(TransportQUIC)}, wire.TransportQUIC},
		{"ws", []Option{WithTransport(TransportWS)}, wire.TransportWebSocket},
		{"wss", []Option{WithTransport(TransportWS), WithTLS()}, wire.TransportWebSocket},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, tc.opts...)
			c := s.Dial(t)
			c.LoginRoot()
			me := getMe(t, c)
			if me.Transport != tc.transport || me.Address == "" {
				t.Fatalf("GET_ME: %+v", me)
			}
		})
	}
}

// TestBusyTransportPortFailsBoot: like the reference, a busy QUIC or
// WebSocket port refuses boot, and nothing stays bound.
func TestBusyTransportPortFailsBoot(t *testing.T) {
	s := Start(t, WithConfig(withAllTransports))
	q, w := s.Broker.QUICAddr().String(), s.Broker.WebSocketAddr().String()
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"quic", func(c *config.Config) { c.QUIC.Enabled, c.QUIC.Address = true, q }},
		{"websocket", func(c *config.Config) { c.WebSocket.Enabled, c.WebSocket.Address = true, w }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.System.Path = t.TempDir()
			cfg.TCP.Address = "127.0.0.1:0"
			cfg.QUIC.Enabled, cfg.WebSocket.Enabled = false, false
			tc.edit(&cfg)
			b, err := newTestBroker(cfg)
			if err == nil {
				b.Shutdown(t.Context())
				t.Fatal("boot succeeded on a busy port")
			}
			if !strings.Contains(err.Error(), tc.name+": listen on") {
				t.Fatalf("boot failed for another reason: %v", err)
			}
		})
	}
}

// newTestBroker builds (without running) a broker on cfg with the test
// credentials and cheap hashing.
func newTestBroker(cfg config.Config) (*broker.Broker, error) {
	return broker.New(cfg,
		broker.WithLogger(slog.New(slog.DiscardHandler)),
		broker.WithPasswordParams(TestPasswordParams),
		broker.WithRootCredentials(RootUsername, RootPassword))
}
