package session

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/wire"
)

func cid(n uint64) wire.Uint128 { return wire.Uint128{Lo: n} }

func sum(n uint64) wire.Uint128 { return wire.Uint128{Lo: n} }

// newTable returns a table and a log applying to it.
func newTable(capacity int, evicted *[]wire.Uint128) (*ClientTable, *MemLog) {
	t := NewClientTable(capacity, func(c wire.Uint128) {
		if evicted != nil {
			*evicted = append(*evicted, c)
		}
	})
	return t, NewMemLog(nil, t.Apply)
}

func register(t *testing.T, l *MemLog, client wire.Uint128) uint64 {
	t.Helper()
	e, err := l.Append(Entry{Kind: EntryRegister, Client: client, UserID: 7})
	if err != nil {
		t.Fatal(err)
	}
	return e.Op
}

func TestClientTableAdmit(t *testing.T) {
	tab, l := newTable(8, nil)
	c := cid(1)
	if v, _ := tab.Admit(c, 1, 1, sum(0)); v != NoSession {
		t.Fatalf("unregistered: %v", v)
	}
	epoch := register(t, l, c)
	steps := []struct {
		name     string
		session  uint64
		request  uint64
		checksum wire.Uint128
		want     Verdict
		commit   bool // commit the request after an Execute
		reply    string
	}{
		{name: "first request", session: epoch, request: 1, checksum: sum(11), want: Execute, commit: true, reply: "r1"},
		{name: "gap allowed", session: epoch, request: 5, checksum: sum(15), want: Execute},
		{name: "in flight", session: epoch, request: 6, want: InFlight},
	}
	for _, s := range steps {
		v, _ := tab.Admit(c, s.session, s.request, s.checksum)
		if v != s.want {
			t.Fatalf("%s: verdict %v, want %v", s.name, v, s.want)
		}
		if s.commit {
			tab.Commit(c, s.request, s.checksum, 100+s.request, []byte(s.reply))
		}
	}
	tab.Commit(c, 5, sum(15), 105, []byte("r5"))
	for _, tc := range []struct {
		name     string
		session  uint64
		request  uint64
		checksum wire.Uint128
		want     Verdict
		replay   string
	}{
		{"replay newest", epoch, 5, sum(15), Replay, "r5"},
		{"replay older", epoch, 1, sum(11), Replay, "r1"},
		{"replay unstamped", epoch, 1, sum(0), Replay, "r1"},
		{"watermark conflict", epoch, 5, sum(99), ChecksumConflict, ""},
		{"older conflict", epoch, 1, sum(99), ChecksumConflict, ""},
		{"never committed below watermark", epoch, 3, sum(0), AlreadyApplied, ""},
		{"session too low", epoch - 1, 9, sum(0), SessionTooLow, ""},
		{"session ahead", epoch + 1, 9, sum(0), SessionAhead, ""},
		{"next", epoch, 6, sum(0), Execute, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, frame := tab.Admit(c, tc.session, tc.request, tc.checksum)
			if v != tc.want || string(frame) != tc.replay {
				t.Fatalf("Admit = %v %q, want %v %q", v, frame, tc.want, tc.replay)
			}
			if v == Execute {
				tab.Abort(c, tc.request)
			}
		})
	}
}

func TestClientTableRingAgesOut(t *testing.T) {
	tab, l := newTable(8, nil)
	c := cid(1)
	epoch := register(t, l, c)
	for r := uint64(1); r <= ReplyRingSize+2; r++ {
		if v, _ := tab.Admit(c, epoch, r, sum(0)); v != Execute {
			t.Fatalf("request %d: %v", r, v)
		}
		tab.Commit(c, r, sum(0), r, []byte{byte(r)})
	}
	for r := uint64(1); r <= ReplyRingSize+2; r++ {
		v, frame := tab.Admit(c, epoch, r, sum(0))
		want := Replay
		if r <= 2 {
			want = AlreadyApplied
		}
		if v != want || (v == Replay && frame[0] != byte(r)) {
			t.Fatalf("request %d: %v %v, want %v", r, v, frame, want)
		}
	}
}

func TestClientTableReRegisterAndLogout(t *testing.T) {
	tab, l := newTable(8, nil)
	c := cid(1)
	e1 := register(t, l, c)
	tab.Admit(c, e1, 1, sum(0))
	tab.Commit(c, 1, sum(0), 2, []byte("r1"))
	e2 := register(t, l, c)
	if e2 <= e1 {
		t.Fatalf("epochs %d then %d", e1, e2)
	}
	if v, _ := tab.Admit(c, e1, 2, sum(0)); v != SessionTooLow {
		t.Fatalf("zombie: %v", v)
	}
	if v, frame := tab.Admit(c, e2, 1, sum(0)); v != Replay || string(frame) != "r1" {
		t.Fatalf("re-register keeps replies: %v %q", v, frame)
	}
	// A Logout of the old epoch is fenced.
	if _, err := l.Append(Entry{Kind: EntryLogout, Client: c, Session: e1}); err != nil {
		t.Fatal(err)
	}
	if got, ok := tab.Epoch(c); !ok || got != e2 {
		t.Fatalf("after fenced logout: epoch %d %v", got, ok)
	}
	if _, err := l.Append(Entry{Kind: EntryLogout, Client: c, Session: e2}); err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 0 {
		t.Fatalf("logout left %d entries", tab.Len())
	}
}

// TestClientTableDisconnectKeepsDedup: the Logout committed for a dropped
// connection ends the session but keeps the dedup state, so a client that
// resumes under the same id gets its retried request from the cache, while
// an explicit Logout frees the slot.
func TestClientTableDisconnectKeepsDedup(t *testing.T) {
	tab, l := newTable(8, nil)
	c := cid(1)
	e1 := register(t, l, c)
	tab.Admit(c, e1, 5, sum(7))
	tab.Commit(c, 5, sum(7), 2, []byte("r5"))
	if _, err := l.Append(Entry{Kind: EntryLogout, Client: c, Session: e1, Request: SyntheticLogoutRequest}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Epoch(c); ok || tab.Len() != 0 {
		t.Fatalf("session still live after disconnect (len %d)", tab.Len())
	}
	if v, _ := tab.Admit(c, e1, 6, sum(0)); v != NoSession {
		t.Fatalf("ended session admitted a request: %v", v)
	}
	e2 := register(t, l, c)
	if v, frame := tab.Admit(c, e2, 5, sum(7)); v != Replay || string(frame) != "r5" {
		t.Fatalf("resumed client's retry: %v %q", v, frame)
	}
	if v, _ := tab.Admit(c, e2, 6, sum(0)); v != Execute {
		t.Fatalf("resumed client's next request: %v", v)
	}
	tab.Abort(c, 6)
	if _, err := l.Append(Entry{Kind: EntryLogout, Client: c, Session: e2, Request: 9}); err != nil {
		t.Fatal(err)
	}
	e3 := register(t, l, c)
	if v, _ := tab.Admit(c, e3, 5, sum(7)); v != Execute {
		t.Fatalf("after an explicit logout the slot is new: %v", v)
	}
}

func TestClientTableCapacityEviction(t *testing.T) {
	var evicted []wire.Uint128
	tab, l := newTable(3, &evicted)
	e1 := register(t, l, cid(1)) // op 1
	register(t, l, cid(2))       // op 2
	register(t, l, cid(3))       // op 3
	// Client 1 commits a reply at op 10: now client 2 has the oldest latest reply.
	tab.Admit(cid(1), e1, 1, sum(0))
	tab.Commit(cid(1), 1, sum(0), 10, []byte("x"))
	register(t, l, cid(4))
	if d := cmp.Diff([]wire.Uint128{cid(2)}, evicted); d != "" {
		t.Fatalf("evicted (-want +got):\n%s", d)
	}
	if v, _ := tab.Admit(cid(2), 2, 1, sum(0)); v != NoSession {
		t.Fatalf("evicted client: %v", v)
	}
	snap := tab.Snapshot()
	if len(snap) != 3 || snap[1].Client != cid(4) || snap[1].Slot != 1 {
		t.Fatalf("new client should take the freed slot 1: %+v", snap)
	}
}

func TestClientTableSnapshotRestore(t *testing.T) {
	tab, l := newTable(8, nil)
	e := register(t, l, cid(5))
	tab.Admit(cid(5), e, 3, sum(33))
	tab.Commit(cid(5), 3, sum(33), 9, []byte("reply"))
	register(t, l, cid(6))
	snap := tab.Snapshot()
	other := NewClientTable(8, nil)
	if err := other.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(snap, other.Snapshot()); d != "" {
		t.Fatalf("restore (-want +got):\n%s", d)
	}
	if v, frame := other.Admit(cid(5), e, 3, sum(33)); v != Replay || string(frame) != "reply" {
		t.Fatalf("restored replay: %v %q", v, frame)
	}
	for _, bad := range [][]ClientRecord{
		{{Slot: 9, Client: cid(1)}},
		{{Slot: 0, Client: cid(1)}, {Slot: 1, Client: cid(1)}},
		{{Slot: 0, Client: cid(1)}, {Slot: 0, Client: cid(2)}},
		{{Slot: 0}},
	} {
		if err := other.Restore(bad); err == nil {
			t.Errorf("Restore(%+v) accepted", bad)
		}
	}
}

func TestPartitionWindow(t *testing.T) {
	w := NewPartitionWindow(2)
	a, b, c := cid(1), cid(2), cid(3)
	for _, tc := range []struct {
		name    string
		client  wire.Uint128
		request uint64
		hash    uint64
		want    PartitionVerdict
		commit  bool
	}{
		{"first", a, 1, 100, PartitionNew, true},
		{"retry same body", a, 1, 100, PartitionDuplicate, false},
		{"same number other body (older SDK)", a, 1, 200, PartitionNew, true},
		{"that one retried", a, 1, 200, PartitionDuplicate, false},
		{"other client same ids", b, 1, 100, PartitionNew, true},
		{"jump", a, 300, 1, PartitionNew, true},
		{"unseen far below watermark", a, 172, 5, PartitionBelowWindow, false},
		{"unseen inside window", a, 173, 5, PartitionNew, false},
		{"old committed still in ring", a, 1, 100, PartitionDuplicate, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.Check(tc.client, tc.request, tc.hash); got != tc.want {
				t.Fatalf("Check = %v, want %v", got, tc.want)
			}
			if tc.commit {
				w.Commit(tc.client, tc.request, tc.hash)
			}
		})
	}
	// The ring holds 128 entries: a client that reuses one request number
	// (older SDK) ages the first body out after 128 more commits.
	w.Commit(a, 400, 7)
	for h := uint64(1); h <= PartitionWindowSize; h++ {
		w.Commit(a, 400, 1000+h)
	}
	if got := w.Check(a, 400, 7); got != PartitionNew {
		t.Fatalf("aged-out body: %v", got)
	}
	if got := w.Check(a, 400, 1000+PartitionWindowSize); got != PartitionDuplicate {
		t.Fatalf("newest body: %v", got)
	}
	// Capacity: a third client evicts the least recently committed (b).
	w.Commit(c, 1, 1)
	if w.Clients() != 2 || w.Check(b, 1, 100) != PartitionNew || w.Check(a, 400, 1001+PartitionWindowSize-1) != PartitionDuplicate {
		t.Fatalf("capacity eviction picked the wrong client")
	}
	w.Forget(a)
	if w.Check(a, 400, 1000+PartitionWindowSize) != PartitionNew {
		t.Fatal("Forget kept the window")
	}
}
