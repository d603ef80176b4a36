package itest

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// fakeCreateStream registers a CREATE_STREAM handler that commits a reply
// carrying the request number, counting executions. When gate is non-nil
// the handler waits on it after signalling started.
func fakeCreateStream(s *Server, runs *atomic.Int64, started chan<- struct{}, gate <-chan struct{}) {
	s.Broker.Dispatcher().Handle(wire.CmdCreateStream, func(x *dispatch.Exchange) {
		runs.Add(1)
		if gate != nil {
			started <- struct{}{}
			<-gate
		}
		body := wire.AppendResultOK(x.Scratch())
		body = append(body, byte(x.Header.Request), byte(runs.Load()))
		x.Commit(1000+x.Header.Request, body)
	})
}

func TestSessionEpochs(t *testing.T) {
	s := Start(t)
	var runs atomic.Int64
	fakeCreateStream(s, &runs, nil, nil)
	a := s.Dial(t)
	ra := a.LoginRoot()
	// Same client id registers again on another connection: a higher epoch.
	b := s.Dial(t)
	b.ID = a.ID
	rb := b.LoginRoot()
	if rb.Session <= ra.Session {
		t.Fatalf("epochs %d then %d", ra.Session, rb.Session)
	}
	// The zombie (old epoch) is fenced on the metadata plane.
	ExpectEviction(t, a.Do(a.Header(wire.OpCreateStream, 0), nil), wire.EvictSessionTooLow)
	// An epoch the server never issued.
	h := b.Header(wire.OpCreateStream, 0)
	h.Session = rb.Session + 100
	ExpectEviction(t, b.Do(h, nil), wire.EvictSessionError)
	// That eviction ended b's session; a fresh login works, and the zombie's
	// eviction did not end the newer session.
	c := s.Dial(t)
	c.ID = a.ID
	rc := c.LoginRoot()
	f := c.Do(c.Header(wire.OpCreateStream, 0), nil)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || f.Reply.Op != 1001 {
		t.Fatalf("create answered %v", f)
	}
	if epoch, ok := s.Broker.Sessions().Table().Epoch(a.ID); !ok || epoch != rc.Session {
		t.Fatalf("table epoch %d %v, want %d", epoch, ok, rc.Session)
	}
	// A login on a bound connection answers the existing session.
	if again := c.LoginRoot(); again.Session != rc.Session {
		t.Fatalf("re-login on a bound connection: session %d, want %d", again.Session, rc.Session)
	}
}

func TestMetadataDedup(t *testing.T) {
	s := Start(t)
	var runs atomic.Int64
	fakeCreateStream(s, &runs, nil, nil)
	c := s.Dial(t)
	c.LoginRoot()
	body := []byte("stream-a")
	stamp := wire.Uint128{Lo: xxh3.Hash(body)}
	h1 := c.Header(wire.OpCreateStream, 0)
	h1.RequestChecksum = stamp
	first := c.Do(h1, body)
	if first.Reply.Status != 0 || runs.Load() != 1 {
		t.Fatalf("first: %v runs %d", first, runs.Load())
	}
	// A retry with the same bytes gets the cached reply verbatim.
	again := c.Do(h1, body)
	if runs.Load() != 1 || !bytes.Equal(again.Body, first.Body) || again.Reply != first.Reply {
		t.Fatalf("retry re-executed or differs: %v vs %v (runs %d)", again, first, runs.Load())
	}
	// Same request number, different body: refused, not replayed.
	other := []byte("stream-b")
	h1b := h1
	h1b.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(other)}
	ExpectStatus(t, c.Do(h1b, other), wire.ErrInvalidFormat.Code)
	// Gaps are allowed; after ReplyRingSize newer commits the first reply
	// has aged out and the retry is "already applied", never re-executed.
	c.Next += 10
	for range 5 {
		if f := c.Do(c.Header(wire.OpCreateStream, 0), nil); f.Reply.Status != 0 {
			t.Fatalf("create: %v", f)
		}
	}
	before := runs.Load()
	ExpectResult(t, c.Do(h1, body), wire.ErrRequestAlreadyApplied.Code)
	if runs.Load() != before {
		t.Fatal("aged-out retry was executed")
	}
	// Requests denied before commit leave no in-flight mark behind.
	s.Broker.Dispatcher().Handle(wire.CmdDeleteStream, nil)
	ExpectStatus(t, c.Do(c.Header(wire.OpDeleteStream, 0), nil), wire.ErrFeatureUnavailable.Code)
	ExpectStatus(t, c.Do(c.Header(wire.OpDeleteStream, 0), nil), wire.ErrFeatureUnavailable.Code)
}

func TestMetadataInFlight(t *testing.T) {
	s := Start(t)
	var runs atomic.Int64
	started, gate := make(chan struct{}, 1), make(chan struct{})
	fakeCreateStream(s, &runs, started, gate)
	a := s.Dial(t)
	a.LoginRoot()
	h := a.Header(wire.OpCreateStream, 0)
	if err := a.Send(h, nil); err != nil {
		t.Fatal(err)
	}
	<-started
	// The same client's retry from another connection while the first is
	// being committed: transient 57 (the SDK replays later).
	b := s.Dial(t)
	b.LoginRoot()
	ExpectResult(t, b.Do(h, nil), wire.ErrTransientNotCommitted.Code)
	close(gate)
	if f := a.MustRecv(); f.Reply.Status != 0 || len(f.Body) != 6 {
		t.Fatalf("first answered %v", f)
	}
	// Now it replays.
	if f := b.Do(h, nil); f.Reply.Status != 0 || len(f.Body) != 6 || runs.Load() != 1 {
		t.Fatalf("replay answered %v, runs %d", f, runs.Load())
	}
}

func TestClientTableCapacity(t *testing.T) {
	s := Start(t, WithConfig(func(c *config.Config) { c.Metadata.ClientsTableMax = 2 }))
	var runs atomic.Int64
	fakeCreateStream(s, &runs, nil, nil)
	first := s.Dial(t)
	first.LoginRoot()
	s.Dial(t).LoginRoot()
	s.Dial(t).LoginRoot() // evicts the first client's slot (oldest)
	first.Ping()          // reads still work on the bound connection
	ExpectEviction(t, first.Do(first.Header(wire.OpCreateStream, 0), nil), wire.EvictNoSession)
}
