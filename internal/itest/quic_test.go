package itest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	qgo "github.com/quic-go/quic-go"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// TestQUICScenarios runs the TCP scenario set through real QUIC
// connections (client/quic).
func TestQUICScenarios(t *testing.T) { runScenarios(t, TransportQUIC) }

// quicTLS is what the reference SDK offers: no ALPN, any certificate.
func quicTLS() *tls.Config {
	return &tls.Config{ServerName: "localhost", InsecureSkipVerify: true, MinVersion: tls.VersionTLS13} //nolint:gosec // ephemeral server certificate
}

// dialRawQUIC opens a QUIC connection for stream-level tests.
func dialRawQUIC(t *testing.T, s *Server, tc *tls.Config) *qgo.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	qc, err := qgo.DialAddr(ctx, s.TransportAddr, tc, &qgo.Config{})
	if err != nil {
		t.Fatalf("quic dial: %v", err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	return qc
}

// streamDo writes raw on a new stream (finishing it when fin), and
// returns every byte the server sent back before its FIN.
func streamDo(t *testing.T, qc *qgo.Conn, raw []byte, fin bool) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	if _, err := st.Write(raw); err != nil {
		t.Fatalf("stream write: %v", err)
	}
	if fin {
		st.Close()
	}
	st.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(st)
	if err != nil {
		t.Fatalf("stream read: %v", err)
	}
	return got
}

func pingFrame(id wire.Uint128, request uint64) []byte {
	return EncodeRequest(wire.RequestHeader{Client: id, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: request}, nil)
}

// expectPong checks raw is exactly a PING reply to request.
func expectPong(t *testing.T, raw []byte, request uint64) {
	t.Helper()
	var h wire.ReplyHeader
	if len(raw) != wire.HeaderSize || wire.PeekKind(raw) != wire.KindReply || h.Decode(raw) != nil || h.Status != 0 || h.Request != request {
		t.Fatalf("PING %d answered with %d bytes (%x...)", request, len(raw), raw[:min(len(raw), 64)])
	}
}

// TestQUICBadInput: what transports.md §3 gives each hostile stream; the
// connection and others keep working after every case.
func TestQUICBadInput(t *testing.T) {
	s := Start(t, WithTransport(TransportQUIC), WithConfig(func(c *config.Config) {
		c.TCP.FrameReadTimeout = config.Duration(300 * time.Millisecond)
		c.MessageBus.MaxMessageSize = 1 << 20
	}))
	qc := dialRawQUIC(t, s, quicTLS())
	other := s.Dial(t)
	other.LoginRoot()
	id := NewClientID()
	header := func(size uint32) []byte {
		return rawHeader(wire.RequestHeader{Client: id, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, size)
	}
	notRequest := pingFrame(id, 1)
	notRequest[60] = byte(wire.KindReply)
	cases := []struct {
		name string
		raw  []byte
	}{
		{"size below a header", header(100)},
		{"size over the limit", header(1<<20 + 1)},
		{"not a request", notRequest},
		{"finished before the body", header(wire.HeaderSize + 1000)},
		{"finished inside the header", pingFrame(id, 1)[:100]},
		{"empty stream", nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := streamDo(t, qc, tc.raw, true); len(got) != 0 {
				t.Fatalf("dropped stream answered with %d bytes", len(got))
			}
			expectPong(t, streamDo(t, qc, pingFrame(id, uint64(10+i)), true), uint64(10+i))
			other.Ping()
		})
	}
	t.Run("never finished but complete", func(t *testing.T) {
		// The frame is read by its size: no FIN needed.
		expectPong(t, streamDo(t, qc, pingFrame(id, 30), false), 30)
	})
	t.Run("never delivers its body", func(t *testing.T) {
		start := time.Now()
		if got := streamDo(t, qc, header(wire.HeaderSize+10), false); len(got) != 0 {
			t.Fatalf("stalled stream answered with %d bytes", len(got))
		}
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Fatalf("stalled stream dropped after %v, before the frame read timeout", d)
		}
		expectPong(t, streamDo(t, qc, pingFrame(id, 31), true), 31)
	})
	t.Run("trailing bytes after the frame", func(t *testing.T) {
		raw := append(pingFrame(id, 32), make([]byte, 5000)...)
		expectPong(t, streamDo(t, qc, raw, true), 32)
	})
	t.Run("unidirectional stream refused", func(t *testing.T) {
		if _, err := qc.OpenUniStream(); err == nil {
			t.Fatal("the server granted a unidirectional stream")
		}
		expectPong(t, streamDo(t, qc, pingFrame(id, 33), true), 33)
	})
}

// TestQUICManyStreams: thousands of streams opened at once are queued by
// the stream limit and all answered, in order per stream.
func TestQUICManyStreams(t *testing.T) {
	s := Start(t, WithTransport(TransportQUIC), WithConfig(func(c *config.Config) { c.QUIC.MaxConcurrentBidiStreams = 100 }))
	qc := dialRawQUIC(t, s, quicTLS())
	id := NewClientID()
	const n = 2000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			st, err := qc.OpenStreamSync(ctx)
			if err != nil {
				errs <- err
				return
			}
			st.Write(pingFrame(id, uint64(i+1)))
			st.Close()
			st.SetReadDeadline(time.Now().Add(30 * time.Second))
			got, err := io.ReadAll(st)
			var h wire.ReplyHeader
			if err == nil && (len(got) != wire.HeaderSize || h.Decode(got) != nil || h.Request != uint64(i+1)) {
				err = errors.New("wrong reply")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed == 0 {
			t.Errorf("stream: %v", err)
		}
		failed++
	}
	if failed > 0 {
		t.Fatalf("%d of %d streams failed", failed, n)
	}
}

// TestQUICZeroRTTRefused: a resumed connection that tries 0-RTT is
// served only after the full handshake (early data is refused).
func TestQUICZeroRTTRefused(t *testing.T) {
	s := Start(t, WithTransport(TransportQUIC))
	tc := quicTLS()
	tc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	first := dialRawQUIC(t, s, tc)
	id := NewClientID()
	expectPong(t, streamDo(t, first, pingFrame(id, 1), true), 1)
	first.CloseWithError(0, "")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	early, err := qgo.DialAddrEarly(ctx, s.TransportAddr, tc, &qgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer early.CloseWithError(0, "")
	expectPong(t, streamDo(t, early, pingFrame(id, 2), true), 2)
	if early.ConnectionState().Used0RTT {
		t.Fatal("the server accepted 0-RTT data")
	}
}

// TestQUICClientNeverReads: a reply the client does not read blocks the
// server's write; after the write timeout the connection is closed, and
// other connections are served throughout.
func TestQUICClientNeverReads(t *testing.T) {
	s := startWithTopic(t, 1, wire.DefaultTopicSettings(), WithTransport(TransportQUIC), WithConfig(func(c *config.Config) {
		c.TCP.WriteTimeout = config.Duration(300 * time.Millisecond)
	}))
	c := s.Dial(t)
	c.LoginRoot()
	for i := range 12 {
		c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, uint64(i*10+1), Payloads(10, 100<<10, "big")...))
	}
	// A raw connection asks for everything (about 12 MiB) and never reads.
	qc := dialRawQUIC(t, s, quicTLS())
	raw := dialAs(t, s, qc)
	poll := pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 1000, false)
	st, err := qc.OpenStreamSync(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.Write(EncodeRequest(raw.Header(wire.OpNonReplicated, wire.CmdPollMessages), poll.AppendTo(nil)))
	st.Close()
	select {
	case <-qc.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection of a client that never reads still open after 10 s")
	}
	c.Ping()
}

// dialAs logs in on qc through a one-stream-per-request raw client.
func dialAs(t *testing.T, s *Server, qc *qgo.Conn) *Client {
	t.Helper()
	c := &Client{ID: NewClientID(), Next: 1, t: t}
	h := c.Header(wire.OpRegister, wire.CmdLoginRegister)
	h.Session, h.Request = 0, 0
	got := streamDo(t, qc, EncodeRequest(h, LoginBody(RootUsername, RootPassword)), true)
	var rh wire.ReplyHeader
	if len(got) < wire.HeaderSize || rh.Decode(got) != nil || rh.Status != 0 {
		t.Fatalf("login over a raw stream answered %d bytes", len(got))
	}
	c.Session = rh.Op
	return c
}

// TestQUICStaleEvictionOnNextStream: an eviction raised while no stream
// is open waits for the next stream and becomes its answer; the
// connection stays and serves the following streams.
func TestQUICStaleEvictionOnNextStream(t *testing.T) {
	var member sync.Map
	s := Start(t, WithTransport(TransportQUIC),
		WithConfig(func(c *config.Config) { c.Heartbeat.Interval = config.Duration(50 * time.Millisecond) }),
		WithBrokerOptions(broker.WithGroupMembership(func(id wire.Uint128) bool { _, ok := member.Load(id); return ok })),
	)
	stale := s.Dial(t)
	member.Store(stale.ID, true)
	stale.LoginRoot()
	waitFor(t, "the verifier to end the session", func() bool { return s.Broker.Sessions().Table().Len() == 0 })
	ExpectEviction(t, stale.Call(wire.CmdGetMe, nil), wire.EvictStaleClient)
	// Unbound again, on the same connection: PING is served, GET_ME refused.
	stale.Ping()
	ExpectStatus(t, stale.Call(wire.CmdGetMe, nil), wire.ErrUnauthenticated.Code)
}
