package client

import (
	"context"
	"crypto/tls"
	"net"
)

// Transport carries the protocol over something other than plain TCP or
// TLS. The QUIC and WebSocket transports live in the subpackages
// client/quic and client/ws, so that only programs importing them link
// their libraries (transports.md §8).
type Transport interface {
	// Scheme is the transport's connection-string name: "quic" for
	// iggy+quic://, "ws" for iggy+ws://.
	Scheme() string
	// Dial opens a connection to addr ("host:port") and returns it as a
	// byte stream of frames. tlsCfg is the WithTLS configuration (nil
	// when none); the transport applies it itself.
	Dial(ctx context.Context, addr string, tlsCfg *tls.Config) (net.Conn, error)
}

// WithTransport makes the client connect with t instead of TCP. WithTLS
// is handed to t (WSS for client/ws; certificate verification for
// client/quic) rather than layered over it; WithDialer is ignored. Every
// other option (reconnects, pipelining, heartbeats) works as over TCP.
func WithTransport(t Transport) Option { return func(o *options) { o.transport = t } }

// applyTransport turns a configured Transport into the dial function
// (called by normalize, after every option is known).
func (o *options) applyTransport() {
	if o.transport == nil {
		return
	}
	t, tlsCfg := o.transport, o.tls
	o.dial = func(ctx context.Context, _, addr string) (net.Conn, error) { return t.Dial(ctx, addr, tlsCfg) }
	o.tls = nil
}
