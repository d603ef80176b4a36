package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/transport/quic"
	"github.com/iggo-dev/iggo/internal/transport/ws"
)

// listenTransports binds the QUIC and WebSocket listeners that are
// enabled. They feed the same dispatcher as TCP. On error nothing stays
// bound.
func (b *Broker) listenTransports() error {
	cfg := &b.cfg
	if cfg.QUIC.Enabled {
		if c := cfg.QUIC.Certificate; c.SelfSigned && (c.CertFile != "" || c.KeyFile != "") {
			b.log.Warn("quic.certificate.self_signed is true: cert_file and key_file are ignored")
		}
		tlsCfg, err := quicTLS(cfg.QUIC.Certificate, b.opts.now)
		if err != nil {
			return fmt.Errorf("quic.certificate: %w", err)
		}
		b.quic, err = quic.Listen(quic.Config{
			Address:             cfg.QUIC.Address,
			TLS:                 tlsCfg,
			MaxStreams:          int64(cfg.QUIC.MaxConcurrentBidiStreams),
			InitialPacketSize:   uint16(cfg.QUIC.InitialMTU),
			ReceiveWindow:       uint64(cfg.QUIC.ReceiveWindow),
			StreamReceiveWindow: uint64(cfg.QUIC.StreamReceiveWindow),
			KeepAlive:           cfg.QUIC.KeepAliveInterval.Std(),
			IdleTimeout:         cfg.QUIC.MaxIdleTimeout.Std(),
			HandshakeTimeout:    cfg.MessageBus.HandshakeGrace.Std(),
			MaxConnections:      cfg.TCP.MaxConnections,
			MaxFrameSize:        uint32(cfg.MessageBus.MaxMessageSize),
			FrameReadTimeout:    cfg.TCP.FrameReadTimeout.Std(),
			WriteTimeout:        cfg.TCP.WriteTimeout.Std(),
			Logger:              b.log.With("component", "quic"),
		}, b.disp)
		if err != nil {
			return fmt.Errorf("quic: listen on %s: %w", cfg.QUIC.Address, err)
		}
	}
	if cfg.WebSocket.Enabled {
		var tlsCfg *tls.Config
		if cfg.WebSocket.TLS.Enabled {
			var err error
			if tlsCfg, err = loadTLS(cfg.WebSocket.TLS, b.opts.now); err != nil {
				b.closeTransports()
				return fmt.Errorf("websocket.tls: %w", err)
			}
		}
		var err error
		b.ws, err = ws.Listen(ws.Config{
			Address:          cfg.WebSocket.Address,
			TLS:              tlsCfg,
			MaxFrameSize:     uint32(cfg.EffectiveMaxMessageSize()),
			MaxWireFrame:     int(cfg.EffectiveMaxFrameSize()),
			HandshakeTimeout: cfg.MessageBus.HandshakeGrace.Std(),
			CloseGrace:       cfg.MessageBus.CloseGrace.Std(),
			FrameReadTimeout: cfg.TCP.FrameReadTimeout.Std(),
			WriteTimeout:     cfg.TCP.WriteTimeout.Std(),
			MaxConnections:   cfg.TCP.MaxConnections,
			Logger:           b.log.With("component", "websocket"),
		}, b.disp)
		if err != nil {
			b.closeTransports()
			return fmt.Errorf("websocket: listen on %s: %w", cfg.WebSocket.Address, err)
		}
	}
	if !cfg.TCP.Enabled && b.quic == nil && b.ws == nil {
		b.log.Warn("tcp, quic and websocket are all disabled: no transport is serving clients")
	}
	return nil
}

// quicTLS returns the QUIC certificate (transports.md §6): with
// self_signed always a fresh ECDSA P-256 certificate for localhost (the
// files are ignored, with a warning when they are set); otherwise the PEM
// pair, which must exist.
func quicTLS(c config.QUICCertificateConfig, now func() time.Time) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if c.SelfSigned {
		cert, err = SelfSigned(now(), "localhost")
		if err != nil {
			return nil, fmt.Errorf("generate self-signed certificate: %w", err)
		}
	} else if cert, err = tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
		return nil, fmt.Errorf("load certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}, nil
}

// closeTransports releases listeners bound by listenTransports (used when
// New fails after binding them).
func (b *Broker) closeTransports() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.quic != nil {
		b.quic.Shutdown(ctx)
		b.quic = nil
	}
	if b.ws != nil {
		b.ws.Shutdown(ctx)
		b.ws = nil
	}
}

// QUICAddr is the bound QUIC (UDP) address, nil when QUIC is disabled.
func (b *Broker) QUICAddr() net.Addr {
	if b.quic == nil {
		return nil
	}
	return b.quic.Addr()
}

// WebSocketAddr is the bound WebSocket address, nil when disabled.
func (b *Broker) WebSocketAddr() net.Addr {
	if b.ws == nil {
		return nil
	}
	return b.ws.Addr()
}

// boundTransports writes the bound QUIC and WebSocket addresses into c
// (the effective configuration written at start).
func (b *Broker) boundTransports(c *config.Config) {
	if b.quic != nil {
		c.QUIC.Address = b.quic.Addr().String()
	}
	if b.ws != nil {
		c.WebSocket.Address = b.ws.Addr().String()
	}
}

// transportConnections counts the open QUIC and WebSocket connections.
func (b *Broker) transportConnections() int {
	n := 0
	if b.quic != nil {
		n += b.quic.Connections()
	}
	if b.ws != nil {
		n += b.ws.Connections()
	}
	return n
}

// serveTransports starts serving QUIC and WebSocket; each Serve result is
// sent on errs.
func (b *Broker) serveTransports(errs chan<- error) {
	if b.quic != nil {
		b.log.Info("iggo server listening", "transport", "quic", "address", b.quic.Addr().String())
		go func() { errs <- b.quic.Serve() }()
	}
	if b.ws != nil {
		name := "websocket"
		if b.cfg.WebSocket.TLS.Enabled {
			name = "websocket+tls"
		}
		b.log.Info("iggo server listening", "transport", name, "address", b.ws.Addr().String())
		go func() { errs <- b.ws.Serve() }()
	}
}

// shutdownTransports shuts the QUIC and WebSocket listeners down.
func (b *Broker) shutdownTransports(ctx context.Context) []error {
	var errs []error
	if b.quic != nil {
		if err := b.quic.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("quic shutdown: %w", err))
		}
	}
	if b.ws != nil {
		if err := b.ws.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("websocket shutdown: %w", err))
		}
	}
	return errs
}
