package dispatch

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// recorder keeps the last Observation and counts calls without
// allocating.
type recorder struct {
	n    int
	last Observation
}

func (r *recorder) Observe(o Observation) { r.n++; r.last = o }

func newObserved(t testing.TB, ob Observer) (*Dispatcher, *session.Conn) {
	t.Helper()
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	table := session.NewClientTable(8, nil)
	m := session.NewManager(auth.NewAuthenticator(store, h, nil), session.NewMemLog(nil, table.Apply), table, session.Options{})
	d := New(m, store, Options{Observer: ob})
	return d, m.Open(session.TransportQUIC, "x", nil)
}

// pingBody is a request body shared by the tests (never written).
var pingBody = []byte{1, 2, 3}

func ping(x *Exchange, c *session.Conn) {
	x.Reset()
	x.Header = wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
	x.Body = pingBody
	x.Conn = c
}

func TestObserverSeesEveryAnswer(t *testing.T) {
	rec := &recorder{}
	d, c := newObserved(t, rec)
	var x Exchange

	ping(&x, c)
	before := time.Now()
	d.Serve(&x)
	o := rec.last
	if rec.n != 1 || o.Code != wire.CmdPing || o.Transport != session.TransportQUIC || o.Status != 0 || o.Evicted {
		t.Fatalf("ping observation %+v", o)
	}
	if o.RequestBytes != wire.HeaderSize+3 || o.ReplyBytes != wire.HeaderSize+len(x.Out) || len(o.Body) != 3 {
		t.Fatalf("ping sizes %+v", o)
	}
	if o.Start.Before(before.Add(-time.Second)) || o.Duration < 0 {
		t.Fatalf("ping timing %+v", o)
	}

	// An unauthenticated read is a status-deny 40.
	ping(&x, c)
	x.Header.Code = wire.CmdGetMe
	d.Serve(&x)
	if rec.last.Status != wire.ErrUnauthenticated.Code || rec.last.Code != wire.CmdGetMe {
		t.Fatalf("deny observation %+v", rec.last)
	}
	var r wire.ReplyHeader
	if err := r.Decode(x.Head[:]); err != nil || r.Status != rec.last.Status {
		t.Fatalf("status offset disagrees with the header codec: %d vs %d (%v)", rec.last.Status, r.Status, err)
	}

	// A replicated operation on an unbound connection is an eviction.
	ping(&x, c)
	x.Header.Operation = wire.OpCreateStream
	x.Header.Session, x.Header.Request = 1, 1
	d.Serve(&x)
	if !rec.last.Evicted || rec.last.Status != 0 || rec.last.Code != wire.CmdCreateStream {
		t.Fatalf("eviction observation %+v", rec.last)
	}
	if rec.n != 3 {
		t.Fatalf("%d observations, want 3", rec.n)
	}
}

// TestServeWithoutObserverAllocatesNothing proves the hook costs no
// allocation, with and without an Observer.
func TestServeWithoutObserverAllocatesNothing(t *testing.T) {
	for _, ob := range []Observer{nil, &recorder{}} {
		d, c := newObserved(t, ob)
		var x Exchange
		ping(&x, c)
		d.Serve(&x)
		if n := testing.AllocsPerRun(1000, func() {
			ping(&x, c)
			d.Serve(&x)
		}); n != 0 {
			t.Fatalf("observer %T: PING allocates %.1f times", ob, n)
		}
	}
}

func TestObserversFanOut(t *testing.T) {
	a, b := &recorder{}, &recorder{}
	Observers{a, b}.Observe(Observation{Code: 7})
	if a.n != 1 || b.n != 1 || b.last.Code != 7 {
		t.Fatal("fan-out missed an observer")
	}
}

// BenchmarkServePing measures the hook's fixed cost: PING without an
// Observer and with one that does nothing but record.
func BenchmarkServePing(b *testing.B) {
	for _, tc := range []struct {
		name string
		ob   Observer
	}{{"none", nil}, {"observer", &recorder{}}} {
		b.Run(tc.name, func(b *testing.B) {
			d, c := newObserved(b, tc.ob)
			var x Exchange
			b.ReportAllocs()
			for b.Loop() {
				ping(&x, c)
				d.Serve(&x)
			}
		})
	}
}
