package itest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPipelinedRepliesInOrder(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	const n = 500
	var frames []byte
	for i := range n {
		h := c.Header(wire.OpNonReplicated, wire.CmdPing)
		h.Request = uint64(i + 1)
		if i%7 == 3 {
			h.Code = wire.CmdGetStats // denied with 5 until GET_STATS exists, or served
		}
		frames = append(frames, EncodeRequest(h, nil)...)
	}
	go c.Write(frames)
	for i := range n {
		f := c.MustRecv()
		if f.Kind != wire.KindReply || f.Reply.Request != uint64(i+1) {
			t.Fatalf("reply %d: %v", i, f)
		}
	}
}

func TestConnectionFlood(t *testing.T) {
	const limit = 5
	s := Start(t, WithConfig(func(c *config.Config) { c.TCP.MaxConnections = limit }))
	var kept []*Client
	for range limit {
		c := s.Dial(t)
		c.Ping()
		kept = append(kept, c)
	}
	waitFor(t, "connections registered", func() bool { return s.Broker.Connections() == limit })
	for range 3 * limit {
		c := s.Dial(t)
		if frames := c.ExpectClosed(); len(frames) != 0 {
			t.Fatalf("refused connection got frames %v", frames)
		}
	}
	for _, c := range kept {
		c.LoginRoot()
		c.Ping()
	}
	// Closing one frees a slot.
	kept[0].Conn.Close()
	waitFor(t, "slot freed", func() bool { return s.Broker.Connections() == limit-1 })
	s.Dial(t).Ping()
}

func TestClientStopsReading(t *testing.T) {
	s := Start(t, WithConfig(shortTimeouts))
	stuck := s.Dial(t)
	stuck.LoginRoot()
	// Pipeline PINGs without reading any reply until the server gives up.
	frame := EncodeRequest(stuck.Header(wire.OpNonReplicated, wire.CmdPing), nil)
	batch := make([]byte, 0, 256*len(frame))
	for range 256 {
		batch = append(batch, frame...)
	}
	writeErr := make(chan error, 1)
	go func() {
		for {
			stuck.Conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := stuck.Conn.Write(batch); err != nil {
				writeErr <- err
				return
			}
		}
	}()
	other := s.Dial(t)
	other.LoginRoot()
	select {
	case err := <-writeErr:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server never closed the stalled connection")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server never closed the stalled connection")
	}
	other.Ping()
	waitFor(t, "stalled connection removed", func() bool { return s.Broker.Connections() == 1 })
}

func TestTLS(t *testing.T) {
	s := Start(t, WithTLS(), WithConfig(shortTimeouts))
	c := s.Dial(t)
	c.Ping()
	r := c.LoginRoot()
	if r.Session == 0 {
		t.Fatal("no session over TLS")
	}
	c.Ping()
	if me := getMe(t, c); me.Transport != wire.TransportTCP || me.Address != c.Conn.LocalAddr().String() {
		t.Fatalf("GET_ME over TLS: %+v", me)
	}
	// Pipelined requests over TLS come back in order.
	var frames []byte
	for i := range 50 {
		h := c.Header(wire.OpNonReplicated, wire.CmdPing)
		h.Request = uint64(100 + i)
		frames = append(frames, EncodeRequest(h, nil)...)
	}
	if err := c.Write(frames); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if f := c.MustRecv(); f.Reply.Request != uint64(100+i) {
			t.Fatalf("TLS reply %d: %v", i, f)
		}
	}
	// Bad input over TLS gets the same answers.
	bad := s.Dial(t)
	ExpectEviction(t, bad.Do(wire.RequestHeader{Client: bad.ID, Operation: 64, Request: 1, Session: 1}, nil), wire.EvictInvalidRequestOperation)
	h := wire.RequestHeader{Client: bad.ID, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
	if err := bad.Write(rawHeader(h, 100)); err != nil {
		t.Fatal(err)
	}
	if frames := bad.ExpectClosed(); len(frames) != 1 || frames[0].Eviction.Reason != wire.EvictInvalidRequestBodySize {
		t.Fatalf("TLS bad size: %v", frames)
	}
	// A plain-TCP client cannot speak to the TLS listener.
	plain, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.Write(EncodeRequest(wire.RequestHeader{Client: NewClientID(), Operation: wire.OpNonReplicated, Code: wire.CmdPing}, nil))
	plain.SetReadDeadline(time.Now().Add(ReadTimeout))
	if b, err := io.ReadAll(plain); err == nil && len(b) >= wire.HeaderSize && wire.PeekKind(b) == wire.KindReply {
		t.Fatal("plain client was served by the TLS listener")
	}
	// A client that never finishes the handshake is dropped.
	idle, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetReadDeadline(time.Now().Add(ReadTimeout))
	if _, err := io.ReadAll(idle); err != nil {
		t.Fatalf("stalled handshake not closed: %v", err)
	}
	c.Ping()
}

func TestTLSSelfSignedWithoutFiles(t *testing.T) {
	s := Start(t, WithConfig(func(c *config.Config) {
		c.TCP.TLS = config.TLSConfig{Enabled: true, SelfSigned: true, CertFile: "missing.pem", KeyFile: "missing.key"}
	}))
	s.ClientTLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the ephemeral certificate cannot be pinned
	c := s.Dial(t)
	c.LoginRoot()
	c.Ping()
}

func TestStaleClientEviction(t *testing.T) {
	var member sync.Map
	s := Start(t,
		WithConfig(func(c *config.Config) { c.Heartbeat.Interval = config.Duration(50 * time.Millisecond) }),
		WithBrokerOptions(broker.WithGroupMembership(func(id wire.Uint128) bool { _, ok := member.Load(id); return ok })),
	)
	bystander := s.Dial(t)
	bystander.LoginRoot() // idle too, but in no consumer group: left alone
	stale := s.Dial(t)
	member.Store(stale.ID, true)
	stale.LoginRoot()
	frames := stale.ExpectClosed()
	if len(frames) != 1 {
		t.Fatalf("want one eviction then close, got %v", frames)
	}
	ExpectEviction(t, frames[0], wire.EvictStaleClient)
	if _, ok := s.Broker.Sessions().Table().Epoch(stale.ID); ok {
		t.Fatal("stale client's session is still in the client table")
	}
	bystander.Ping()
	bystander.Do(bystander.Header(wire.OpNonReplicated, wire.CmdGetMe), nil)
	if _, ok := s.Broker.Sessions().Table().Epoch(bystander.ID); !ok {
		t.Fatal("bystander lost its session")
	}
}

func TestDisconnectLogsOut(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	if s.Broker.Sessions().Table().Len() != 1 {
		t.Fatal("no session after login")
	}
	c.Conn.Close()
	waitFor(t, "logout on disconnect", func() bool { return s.Broker.Sessions().Table().Len() == 0 })
}

func TestGracefulShutdown(t *testing.T) {
	s := Start(t)
	started, release := make(chan struct{}), make(chan struct{})
	s.Broker.Dispatcher().Handle(wire.CmdGetStats, func(x *dispatch.Exchange) {
		close(started)
		<-release
		x.Reply([]byte("done"))
	})
	busy := s.Dial(t)
	busy.LoginRoot()
	idle := s.Dial(t)
	idle.LoginRoot()
	if err := busy.Send(busy.Header(wire.OpNonReplicated, wire.CmdGetStats), nil); err != nil {
		t.Fatal(err)
	}
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- s.Broker.Shutdown(context.Background()) }()
	// New connections are refused once shutdown has begun.
	waitFor(t, "listener closed", func() bool {
		nc, err := net.Dial("tcp", s.Addr)
		if err == nil {
			nc.Close()
		}
		return err != nil
	})
	close(release)
	frames := busy.ExpectClosed()
	if len(frames) != 1 || string(frames[0].Body) != "done" {
		t.Fatalf("in-flight request answered %v", frames)
	}
	idle.ExpectClosed()
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	// Sessions are kept for a restart: no Logout was committed.
	if s.Broker.Sessions().Table().Len() != 2 {
		t.Fatalf("client table has %d entries after shutdown", s.Broker.Sessions().Table().Len())
	}
}
