package dispatch

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

func newDispatcher(t *testing.T) (*Dispatcher, *session.Conn) {
	t.Helper()
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	table := session.NewClientTable(8, nil)
	m := session.NewManager(auth.NewAuthenticator(store, h, nil), session.NewMemLog(nil, table.Apply), table, session.Options{})
	d := New(m, store, Options{})
	return d, m.Open(session.TransportTCP, "x", nil)
}

func TestServeAnswersEveryRequest(t *testing.T) {
	d, c := newDispatcher(t)
	var x Exchange
	for op := 0; op < 256; op++ {
		for _, code := range []wire.Command{0, wire.CmdPing, wire.CmdGetMe, wire.CmdCreateStream, 9999, 1 << 30} {
			x.Reset()
			x.Header = wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.Operation(op), Code: code, Session: 1, Request: 1}
			if op == int(wire.OpRegister) {
				x.Header.Session, x.Header.Request = 0, 0
			}
			x.Conn = c
			d.Serve(&x)
			if !x.Answered {
				t.Fatalf("op %d code %d unanswered", op, code)
			}
			switch wire.PeekKind(x.Head[:]) {
			case wire.KindReply:
				var r wire.ReplyHeader
				if err := r.Decode(x.Head[:]); err != nil || int(r.Size) != wire.HeaderSize+len(x.Out) || r.Request != x.Header.Request {
					t.Fatalf("op %d code %d: reply %+v %v", op, code, r, err)
				}
			case wire.KindEviction:
				var e wire.EvictionHeader
				if err := e.Decode(x.Head[:]); err != nil || len(x.Out) != 0 || !x.Evicted() {
					t.Fatalf("op %d code %d: eviction %+v %v", op, code, e, err)
				}
			default:
				t.Fatalf("op %d code %d: kind %v", op, code, wire.PeekKind(x.Head[:]))
			}
		}
	}
}

func TestExchangeResetBoundsScratch(t *testing.T) {
	var x Exchange
	x.scratch = make([]byte, 0, 1024)
	x.Reset()
	if cap(x.scratch) != 1024 {
		t.Fatal("small scratch dropped")
	}
	x.scratch = make([]byte, 0, maxRetainedScratch+1)
	x.Reset()
	if cap(x.scratch) != 0 {
		t.Fatal("large scratch retained")
	}
}

func TestHandleRejectsLargeCodes(t *testing.T) {
	d, _ := newDispatcher(t)
	defer func() {
		if recover() == nil {
			t.Fatal("Handle accepted a code beyond the table")
		}
	}()
	d.Handle(maxCode+1, func(*Exchange) {})
}
