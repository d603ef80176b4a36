package itest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"time"

	clientquic "github.com/iggo-dev/iggo/client/quic"
	clientws "github.com/iggo-dev/iggo/client/ws"
)

// Transports Dial can use.
const (
	TransportTCP  = "tcp"
	TransportQUIC = "quic"
	TransportWS   = "ws"
)

// EnvTransport selects the transport of every test broker's Dial when a
// test does not pass WithTransport: tcp (default), quic or ws. A test
// that runs the TCP scenarios over another transport sets it with
// t.Setenv.
const EnvTransport = "IGGO_ITEST_TRANSPORT"

// WithTransport makes the broker serve QUIC or WebSocket on a free
// loopback port besides TCP, and Dial connect over it (raw frames through
// client/quic or client/ws). With WithTLS and "ws" the listener is WSS.
func WithTransport(name string) Option { return func(s *settings) { s.transport = name } }

// noExtraTransports keeps test brokers off the fixed default QUIC and
// WebSocket ports: both listeners are off unless a test asks for one,
// and then bind port 0.
func (s *settings) noExtraTransports() {
	s.cfg.QUIC.Enabled, s.cfg.QUIC.Address = false, "127.0.0.1:0"
	s.cfg.WebSocket.Enabled, s.cfg.WebSocket.Address = false, "127.0.0.1:0"
	s.cfg.HTTP.Enabled, s.cfg.HTTP.Address = false, "127.0.0.1:0"
}

func (s *settings) transportFromEnv() {
	if v := os.Getenv(EnvTransport); v != "" && v != TransportTCP {
		s.transport = v
	}
}

// enableTransport turns on the listener of the chosen transport.
func (s *settings) enableTransport() {
	switch s.transport {
	case TransportQUIC:
		s.cfg.QUIC.Enabled = true
	case TransportWS:
		s.cfg.WebSocket.Enabled = true
		if s.tls {
			s.cfg.WebSocket.TLS = s.cfg.TCP.TLS
		}
	}
}

// setTransport records the transport Dial uses and its address. With TLS
// and WebSocket the TCP certificate files (written by Start) serve WSS.
func (srv *Server) setTransport(name string) {
	srv.Transport, srv.TransportAddr = TransportTCP, srv.Addr
	switch name {
	case TransportQUIC:
		srv.Transport, srv.TransportAddr = name, srv.Broker.QUICAddr().String()
	case TransportWS:
		srv.Transport, srv.TransportAddr = name, srv.Broker.WebSocketAddr().String()
	}
}

// dialTransport connects over QUIC or WebSocket.
func (srv *Server) dialTransport() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch srv.Transport {
	case TransportQUIC:
		return clientquic.Transport{}.Dial(ctx, srv.TransportAddr, nil)
	case TransportWS:
		var cfg *tls.Config
		if srv.ClientTLS != nil {
			cfg = srv.ClientTLS.Clone()
		}
		return clientws.Transport{}.Dial(ctx, srv.TransportAddr, cfg)
	}
	return nil, fmt.Errorf("itest: unknown transport %q", srv.Transport)
}
