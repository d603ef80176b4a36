package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/iggo-dev/iggo/internal/transport/bufpool"
	"github.com/iggo-dev/iggo/internal/transport/connset"
	"log/slog"
	"net"
	"time"

	qgo "github.com/quic-go/quic-go"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
)

// Application close codes (transports.md §3).
const (
	// CodeShutdown ends a connection the server no longer serves.
	CodeShutdown qgo.ApplicationErrorCode = 0x1003
	// CodeZeroRTT is the reference's code for a stream that arrived in
	// 0-RTT; Iggo refuses early data in TLS instead and never sends it.
	CodeZeroRTT qgo.ApplicationErrorCode = 0x1004
)

// Config configures the listener.
type Config struct {
	// Address is the UDP host:port to bind (port 0 picks a free one).
	Address string
	// TLS holds the server certificate; NextProtos is cleared and TLS 1.3
	// required.
	TLS *tls.Config
	// MaxStreams is quic.max_concurrent_bidi_streams: the requests a client
	// may have in flight. The stream credit granted is one more (see
	// quicConfig); streams are still served one at a time.
	MaxStreams int64
	// InitialPacketSize is quic.initial_mtu.
	InitialPacketSize uint16
	// ReceiveWindow and StreamReceiveWindow are the connection and stream
	// receive credit.
	ReceiveWindow       uint64
	StreamReceiveWindow uint64
	// KeepAlive is the QUIC PING period (0: none); IdleTimeout the idle
	// timeout (0: 30 s).
	KeepAlive   time.Duration
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a handshake (message_bus.handshake_grace).
	HandshakeTimeout time.Duration
	// MaxConnections caps open connections; later ones are closed at once.
	MaxConnections int
	// MaxFrameSize is the largest accepted frame, header included.
	MaxFrameSize uint32
	// FrameReadTimeout bounds the time from accepting a stream to having
	// its whole frame.
	FrameReadTimeout time.Duration
	// WriteTimeout bounds the write of one answer.
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// Server accepts QUIC connections and serves their streams.
type Server struct {
	cfg      Config
	d        *dispatch.Dispatcher
	sessions *session.Manager
	udp      net.PacketConn
	tr       *qgo.Transport
	ln       *qgo.Listener
	log      *slog.Logger
	pools    bufpool.Pools

	conns connset.Set[*conn]
}

// Listen binds the UDP socket and the QUIC listener; Serve accepts on it.
// A busy port fails (no address reuse), as the reference.
func Listen(cfg Config, d *dispatch.Dispatcher) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TLS == nil {
		return nil, errors.New("quic: a TLS configuration is required")
	}
	udp, err := net.ListenPacket("udp", cfg.Address)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, d: d, sessions: d.Sessions(), udp: udp, log: cfg.Logger}
	s.tr = &qgo.Transport{Conn: udp}
	ln, err := s.tr.Listen(serverTLS(cfg.TLS), quicConfig(cfg))
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("quic listen: %w", err)
	}
	s.ln = ln
	return s, nil
}

// serverTLS copies c for QUIC: TLS 1.3, no ALPN, no client certificates.
func serverTLS(c *tls.Config) *tls.Config {
	t := c.Clone()
	t.MinVersion = tls.VersionTLS13
	t.NextProtos = nil
	t.ClientAuth = tls.NoClientCert
	return t
}

// quicConfig maps cfg onto quic-go. The bidirectional stream credit is
// MaxStreams + 1 (an Iggo choice): a served stream's credit comes back only
// once the client has acknowledged the reply's FIN, which a client sends
// after its ACK delay (25 ms in quinn, the Rust SDK's QUIC stack), so with
// a credit of exactly 1 a lockstep client waited that long before every
// request (measured with the Rust SDK: 29 ms for two polls, 1 ms with the
// extra credit). The extra stream only waits in the accept queue: a
// connection's streams are still served in turn.
func quicConfig(cfg Config) *qgo.Config {
	hs := cfg.HandshakeTimeout / 2 // quic-go aborts a handshake at twice this
	if hs <= 0 {
		hs = 5 * time.Second
	}
	return &qgo.Config{
		HandshakeIdleTimeout:           hs,
		MaxIdleTimeout:                 cfg.IdleTimeout,
		KeepAlivePeriod:                cfg.KeepAlive,
		InitialPacketSize:              cfg.InitialPacketSize,
		InitialStreamReceiveWindow:     cfg.StreamReceiveWindow,
		MaxStreamReceiveWindow:         cfg.StreamReceiveWindow,
		InitialConnectionReceiveWindow: cfg.ReceiveWindow,
		MaxConnectionReceiveWindow:     cfg.ReceiveWindow,
		MaxIncomingStreams:             max(cfg.MaxStreams, 1) + 1,
		MaxIncomingUniStreams:          -1,
		Allow0RTT:                      false,
		EnableDatagrams:                false,
	}
}

// Addr is the bound UDP address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Connections is the number of open connections.
func (s *Server) Connections() int { return s.conns.Len() }

// Serve accepts connections until Shutdown; it then returns nil.
func (s *Server) Serve() error {
	for {
		qc, err := s.ln.Accept(context.Background())
		if err != nil {
			if errors.Is(err, qgo.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("quic accept: %w", err)
		}
		if s.conns.Full(s.cfg.MaxConnections) {
			s.log.Debug("quic connection refused: limit reached", "addr", qc.RemoteAddr().String(), "limit", s.cfg.MaxConnections)
			qc.CloseWithError(CodeShutdown, "connection limit")
			continue
		}
		if c := s.track(qc); c != nil {
			go c.run()
		}
	}
}

// track registers a new connection; nil (and qc closed) after Shutdown.
func (s *Server) track(qc *qgo.Conn) *conn {
	c, ok := s.conns.Add(0, func() *conn { return newConn(s, qc) })
	if !ok {
		qc.CloseWithError(CodeShutdown, "shutdown")
		return nil
	}
	return c
}

func (s *Server) remove(c *conn) { s.conns.Remove(c) }

func (s *Server) stopping() bool { return s.conns.Stopping() }

// Shutdown stops accepting, lets every connection finish the stream it is
// serving, then closes them with 0x1003 "shutdown". Sessions are kept (no
// Logout is committed), as on TCP. When ctx ends first, the remaining
// connections are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.conns.Shutdown(ctx, func() error {
		if err := s.ln.Close(); !errors.Is(err, net.ErrClosed) && !errors.Is(err, qgo.ErrServerClosed) {
			return err
		}
		return nil
	})
	s.tr.Close() // does not close a socket it did not create
	if cerr := s.udp.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && err == nil {
		err = cerr
	}
	return err
}
