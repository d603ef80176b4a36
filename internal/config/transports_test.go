package config

import (
	"strings"
	"testing"
	"time"
)

func TestTransportDefaults(t *testing.T) {
	c := Default()
	if !c.QUIC.Enabled || c.QUIC.Address != "127.0.0.1:8080" || c.QUIC.MaxConcurrentBidiStreams != 1 ||
		c.QUIC.InitialMTU != 1200 || c.QUIC.ReceiveWindow != 64<<20 || c.QUIC.KeepAliveInterval.Std() != 10*time.Second ||
		c.QUIC.MaxIdleTimeout.Std() != 30*time.Second || !c.QUIC.Certificate.SelfSigned {
		t.Fatalf("quic defaults %+v", c.QUIC)
	}
	if !c.WebSocket.Enabled || c.WebSocket.Address != "127.0.0.1:8092" || c.WebSocket.TLS.Enabled || !c.WebSocket.TLS.SelfSigned {
		t.Fatalf("websocket defaults %+v", c.WebSocket)
	}
	if c.EffectiveMaxMessageSize() != 64<<20 || c.EffectiveMaxFrameSize() != 16<<20 {
		t.Fatalf("websocket limits %s %s", c.EffectiveMaxMessageSize(), c.EffectiveMaxFrameSize())
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTransportEnvAndFile(t *testing.T) {
	data := []byte("[quic]\nenabled = false\ninitial_mtu = \"1400 B\"\n[quic.certificate]\nself_signed = false\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\n[websocket]\nmax_message_size = \"1 MiB\"\n[websocket.tls]\nenabled = true\n")
	c, notices, err := Parse(data)
	if err != nil || len(notices) != 0 {
		t.Fatalf("parse: %v %+v", err, notices)
	}
	if c.QUIC.Enabled || c.QUIC.InitialMTU != 1400 || c.QUIC.Certificate.CertFile != "c.pem" || c.WebSocket.MaxMessageSize != 1<<20 || !c.WebSocket.TLS.Enabled {
		t.Fatalf("parsed %+v %+v", c.QUIC, c.WebSocket)
	}
	c, _, err = Load("", []string{"IGGY_QUIC_ADDRESS=127.0.0.1:1", "IGGY_WEBSOCKET_ENABLED=false", "IGGY_QUIC_MAX_IDLE_TIMEOUT=5 s", "IGGY_MESSAGE_BUS_HANDSHAKE_GRACE=3 s"})
	if err != nil {
		t.Fatal(err)
	}
	if c.QUIC.Address != "127.0.0.1:1" || c.WebSocket.Enabled || c.QUIC.MaxIdleTimeout.Std() != 5*time.Second || c.MessageBus.HandshakeGrace.Std() != 3*time.Second {
		t.Fatalf("env: %+v %+v %+v", c.QUIC, c.WebSocket, c.MessageBus)
	}
	// A typo under [quic] is a warning now that the section is known.
	_, notices, _ = Parse([]byte("[quic]\nenabeld = true\n"))
	if len(notices) != 1 || !notices[0].Warn {
		t.Fatalf("typo notices %+v", notices)
	}
}

func TestTransportValidation(t *testing.T) {
	for _, tc := range []struct {
		key  string
		edit func(*Config)
	}{
		{"quic.address", func(c *Config) { c.QUIC.Address = "nope" }},
		{"quic.max_concurrent_bidi_streams", func(c *Config) { c.QUIC.MaxConcurrentBidiStreams = 0 }},
		{"quic.max_concurrent_bidi_streams", func(c *Config) { c.QUIC.MaxConcurrentBidiStreams = 1 << 32 }},
		{"quic.initial_mtu", func(c *Config) { c.QUIC.InitialMTU = 1199 }},
		{"quic.initial_mtu", func(c *Config) { c.QUIC.InitialMTU = 65536 }},
		{"quic.receive_window", func(c *Config) { c.QUIC.ReceiveWindow = 1 << 32 }},
		{"quic.stream_receive_window", func(c *Config) { c.QUIC.StreamReceiveWindow = c.QUIC.ReceiveWindow + 1 }},
		{"quic.certificate", func(c *Config) { c.QUIC.Certificate.SelfSigned = false }},
		{"websocket.address", func(c *Config) { c.WebSocket.Address = "x" }},
		{"websocket.max_message_size", func(c *Config) { c.WebSocket.MaxMessageSize = c.MessageBus.MaxMessageSize + 1 }},
		{"websocket.max_frame_size", func(c *Config) { c.WebSocket.MaxMessageSize = 1 << 20; c.WebSocket.MaxFrameSize = 2 << 20 }},
		{"websocket.max_write_buffer_size", func(c *Config) { c.WebSocket.WriteBufferSize = 10; c.WebSocket.MaxWriteBufferSize = 10 }},
		{"websocket.accept_unmasked_frames", func(c *Config) { c.WebSocket.AcceptUnmaskedFrames = true }},
		{"websocket.tls", func(c *Config) { c.WebSocket.TLS = TLSConfig{Enabled: true} }},
		{"message_bus.handshake_grace", func(c *Config) { c.MessageBus.HandshakeGrace = 0 }},
	} {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: Validate = %v", tc.key, err)
		}
	}
	// Disabled transports skip their address check.
	c := Default()
	c.QUIC.Enabled, c.QUIC.Address = false, "nope"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
