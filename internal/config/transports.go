package config

import (
	"fmt"
	"time"
)

// QUICConfig is [quic]: the binary protocol over QUIC, one request per
// client-opened bidirectional stream (../shared/protocol/transports.md §2,
// §3). The listener also applies the Iggo extensions of [tcp]:
// tcp.max_connections caps its connections, tcp.frame_read_timeout bounds
// the time a stream may take to deliver its frame, and tcp.write_timeout
// bounds the write of one reply.
type QUICConfig struct {
	Enabled bool `toml:"enabled"`
	// Address is the UDP bind address (port 0 picks a free one).
	Address string `toml:"address"`
	// MaxConcurrentBidiStreams is the stream limit granted to a client
	// (1..=u32::MAX). Streams are served one at a time per connection, as
	// the reference does.
	MaxConcurrentBidiStreams uint64 `toml:"max_concurrent_bidi_streams"`
	// InitialMTU is the starting packet size (1200..=65535); path MTU
	// discovery stays on.
	InitialMTU Size `toml:"initial_mtu"`
	// SendWindow is accepted and range-checked but unused: quic-go has no
	// such knob.
	SendWindow Size `toml:"send_window"`
	// ReceiveWindow is the connection-level receive credit (<= u32::MAX).
	ReceiveWindow Size `toml:"receive_window"`
	// StreamReceiveWindow is the per-stream receive credit
	// (1..=receive_window).
	StreamReceiveWindow Size `toml:"stream_receive_window"`
	// KeepAliveInterval is the QUIC PING period; 0 sends none.
	KeepAliveInterval Duration `toml:"keep_alive_interval"`
	// MaxIdleTimeout closes a silent connection; 0 leaves the stack
	// default of 30 s (it does not disable the timer).
	MaxIdleTimeout Duration              `toml:"max_idle_timeout"`
	Certificate    QUICCertificateConfig `toml:"certificate"`
}

// QUICCertificateConfig is [quic.certificate]. QUIC always runs TLS 1.3.
type QUICCertificateConfig struct {
	// SelfSigned always generates an ephemeral ECDSA P-256 certificate for
	// localhost and ignores the files, as the reference does.
	SelfSigned bool `toml:"self_signed"`
	// CertFile and KeyFile are the PEM pair read when SelfSigned is false;
	// a missing or empty file refuses boot.
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// WebSocketConfig is [websocket]: the binary protocol over WebSocket (or
// WSS when TLS.Enabled), one frame per binary message
// (../shared/protocol/transports.md §4, §5). The size keys are optional in
// the reference; here 0 means unset and takes the default the comment
// gives (the reference refuses an explicit 0). The listener also applies
// tcp.max_connections, tcp.frame_read_timeout (from a message's first
// frame to its last byte) and tcp.write_timeout (one reply).
type WebSocketConfig struct {
	Enabled bool `toml:"enabled"`
	// Address is the TCP bind address of WS, or of WSS with TLS.
	Address string `toml:"address"`
	// ReadBufferSize, WriteBufferSize and MaxWriteBufferSize are accepted
	// and checked but unused (the library sizes its own buffers).
	ReadBufferSize     Size `toml:"read_buffer_size"`
	WriteBufferSize    Size `toml:"write_buffer_size"`
	MaxWriteBufferSize Size `toml:"max_write_buffer_size"`
	// MaxMessageSize is the largest inbound message after reassembly
	// (default and upper bound message_bus.max_message_size).
	MaxMessageSize Size `toml:"max_message_size"`
	// MaxFrameSize is the largest single WebSocket frame the server sends
	// (default 16 MiB); larger replies go out as continuation frames of
	// this size. Inbound frames are bounded by MaxMessageSize only (the
	// library has no per-frame limit).
	MaxFrameSize Size `toml:"max_frame_size"`
	// AcceptUnmaskedFrames must stay false: RFC 6455 requires masked
	// client frames.
	AcceptUnmaskedFrames bool      `toml:"accept_unmasked_frames"`
	TLS                  TLSConfig `toml:"tls"`
}

// Defaults and limits of the QUIC and WebSocket keys.
const (
	DefaultQUICAddress      = "127.0.0.1:8080"
	DefaultWebSocketAddress = "127.0.0.1:8092"
	// DefaultWebSocketMaxFrameSize is the reference's (tungstenite's)
	// largest WebSocket frame.
	DefaultWebSocketMaxFrameSize = 16 << 20
	minQUICMTU                   = 1200
	maxQUICMTU                   = 65535
	maxQUICStreams               = 1<<32 - 1
	maxQUICSendWindow            = 1<<62 - 1
	maxQUICReceiveWindow         = 1<<32 - 1
)

func defaultQUIC() QUICConfig {
	return QUICConfig{
		Enabled:                  true,
		Address:                  DefaultQUICAddress,
		MaxConcurrentBidiStreams: 1,
		InitialMTU:               1200,
		SendWindow:               64 << 20,
		ReceiveWindow:            64 << 20,
		StreamReceiveWindow:      64 << 20,
		KeepAliveInterval:        Duration(10 * time.Second),
		MaxIdleTimeout:           Duration(30 * time.Second),
		Certificate:              QUICCertificateConfig{SelfSigned: true},
	}
}

func defaultWebSocket() WebSocketConfig {
	return WebSocketConfig{
		Enabled: true,
		Address: DefaultWebSocketAddress,
		TLS: TLSConfig{
			SelfSigned: true,
			CertFile:   "core/certs/iggy_cert.pem",
			KeyFile:    "core/certs/iggy_key.pem",
		},
	}
}

// EffectiveMaxMessageSize is the largest inbound WebSocket message:
// websocket.max_message_size when set, else message_bus.max_message_size.
func (c *Config) EffectiveMaxMessageSize() Size {
	if s := c.WebSocket.MaxMessageSize; s != 0 {
		return s
	}
	return c.MessageBus.MaxMessageSize
}

// EffectiveMaxFrameSize is the largest outbound WebSocket frame.
func (c *Config) EffectiveMaxFrameSize() Size {
	if s := c.WebSocket.MaxFrameSize; s != 0 {
		return s
	}
	return DefaultWebSocketMaxFrameSize
}

// validateTransports checks [quic], [websocket] and the message_bus
// graces (transports.md §2: out-of-range values refuse boot).
func (c *Config) validateTransports() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	q := &c.QUIC
	if q.Enabled {
		if err := checkAddress(q.Address); err != nil {
			bad("quic.address", "%v", err)
		}
	}
	if q.MaxConcurrentBidiStreams < 1 || q.MaxConcurrentBidiStreams > maxQUICStreams {
		bad("quic.max_concurrent_bidi_streams", "%d is outside 1..=%d", q.MaxConcurrentBidiStreams, uint64(maxQUICStreams))
	}
	if q.InitialMTU < minQUICMTU || q.InitialMTU > maxQUICMTU {
		bad("quic.initial_mtu", "%s is outside %d..=%d bytes", q.InitialMTU, minQUICMTU, maxQUICMTU)
	}
	if q.SendWindow > maxQUICSendWindow {
		bad("quic.send_window", "%s is larger than 2^62-1 bytes", q.SendWindow)
	}
	if q.ReceiveWindow < 1 || q.ReceiveWindow > maxQUICReceiveWindow {
		bad("quic.receive_window", "%s is outside 1..=%d bytes", q.ReceiveWindow, uint64(maxQUICReceiveWindow))
	}
	if q.StreamReceiveWindow < 1 || q.StreamReceiveWindow > q.ReceiveWindow {
		bad("quic.stream_receive_window", "%s is outside 1 B..=quic.receive_window", q.StreamReceiveWindow)
	}
	if q.KeepAliveInterval < 0 {
		bad("quic.keep_alive_interval", "must not be negative")
	}
	if q.MaxIdleTimeout < 0 {
		bad("quic.max_idle_timeout", "must not be negative")
	}
	if q.Enabled && !q.Certificate.SelfSigned && (q.Certificate.CertFile == "" || q.Certificate.KeyFile == "") {
		bad("quic.certificate", "cert_file and key_file are required when self_signed is false")
	}
	w := &c.WebSocket
	if w.Enabled {
		if err := checkAddress(w.Address); err != nil {
			bad("websocket.address", "%v", err)
		}
	}
	if w.MaxMessageSize != 0 && (w.MaxMessageSize < 256 || w.MaxMessageSize > c.MessageBus.MaxMessageSize) {
		bad("websocket.max_message_size", "%s is outside 256 B..=message_bus.max_message_size (%s)", w.MaxMessageSize, c.MessageBus.MaxMessageSize)
	}
	if w.MaxFrameSize != 0 && w.MaxFrameSize > c.EffectiveMaxMessageSize() {
		bad("websocket.max_frame_size", "%s is larger than the largest message (%s)", w.MaxFrameSize, c.EffectiveMaxMessageSize())
	}
	if w.MaxWriteBufferSize != 0 && w.MaxWriteBufferSize <= w.WriteBufferSize {
		bad("websocket.max_write_buffer_size", "must be greater than write_buffer_size")
	}
	if w.AcceptUnmaskedFrames {
		bad("websocket.accept_unmasked_frames", "unmasked client frames break RFC 6455 and are not supported")
	}
	if w.Enabled && w.TLS.Enabled && !w.TLS.SelfSigned && (w.TLS.CertFile == "" || w.TLS.KeyFile == "") {
		bad("websocket.tls", "cert_file and key_file are required when self_signed is false")
	}
	if c.MessageBus.HandshakeGrace <= 0 {
		bad("message_bus.handshake_grace", "must be positive")
	}
	if c.MessageBus.CloseGrace <= 0 {
		bad("message_bus.close_grace", "must be positive")
	}
	return errs
}
