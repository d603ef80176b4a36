package groups

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scenario is one step of a hand-off script; the clock is the `at` offset
// from t0, never the wall clock.
type scenario struct {
	do   string // "join", "leave", "poll", "commit", "expire"
	c    uint64 // client
	p    PartitionID
	off  uint64
	at   time.Duration // time of join / expire
	want int           // expire: revocations completed
}

// check is the expected state after a script.
type check struct {
	layout   layoutMap
	pollable map[uint64][]PartitionID // client -> Assignment
	revs     []Revocation
	gen      Generation
	deadline time.Duration // 0: none pending
}

func runScenario(t *testing.T, g *Group, steps []scenario) {
	t.Helper()
	for i, s := range steps {
		switch s.do {
		case "join":
			if _, err := g.Join(cid(s.c), t0.Add(s.at)); err != nil {
				t.Fatalf("step %d: Join: %v", i, err)
			}
		case "leave":
			leave(t, g, s.c)
		case "poll":
			poll(t, g, s.c, s.p, s.off)
		case "commit":
			commit(t, g, s.c, s.p, s.off)
		case "expire":
			if n := g.ExpireRevocations(t0.Add(s.at)); n != s.want {
				t.Fatalf("step %d: ExpireRevocations(t0+%v) = %d, want %d", i, s.at, n, s.want)
			}
		default:
			t.Fatalf("step %d: unknown op %q", i, s.do)
		}
		if err := checkInvariants(g); err != nil {
			t.Fatalf("step %d (%s): %v", i, s.do, err)
		}
	}
}

func verify(t *testing.T, g *Group, want check) {
	t.Helper()
	if diff := cmp.Diff(want.layout, layout(g), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}
	for c, wantP := range want.pollable {
		gen, got, err := g.Assignment(cid(c))
		if err != nil {
			t.Errorf("Assignment(%d): %v", c, err)
			continue
		}
		if gen != want.gen {
			t.Errorf("Assignment(%d) generation %d, want %d", c, gen, want.gen)
		}
		if diff := cmp.Diff(wantP, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Assignment(%d) (-want +got):\n%s", c, diff)
		}
	}
	if diff := cmp.Diff(want.revs, g.Revocations(), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("revocations (-want +got):\n%s", diff)
	}
	if g.Generation() != want.gen {
		t.Errorf("generation = %d, want %d", g.Generation(), want.gen)
	}
	dl, ok := g.NextDeadline()
	switch {
	case want.deadline == 0 && ok:
		t.Errorf("NextDeadline = %v, want none", dl)
	case want.deadline != 0 && (!ok || !dl.Equal(t0.Add(want.deadline))):
		t.Errorf("NextDeadline = %v, %v; want t0+%v", dl, ok, want.deadline)
	}
}

// TestHandOff covers the cooperative hand-off with in-flight data (§6.3
// steps 3 and 4): pending revocations, completion by commit, completion by
// timeout, re-targeting and cancellation by a full rebalance.
func TestHandOff(t *testing.T) {
	const timeout = 30 * time.Second
	// Shared prefix: member 0 (client 1) owns 0..3, has polled partition 2
	// up to offset 9 and committed 9, and polled partition 3 up to 20
	// without committing. Client 2 joins at t0+1s: fair 2, excess [2 3];
	// 2 is settled and moves, 3 is in flight and becomes pending.
	prefix := []scenario{
		{do: "join", c: 1},
		{do: "poll", c: 1, p: 2, off: 9},
		{do: "commit", c: 1, p: 2, off: 9},
		{do: "poll", c: 1, p: 3, off: 20},
		{do: "join", c: 2, at: time.Second},
	}
	pending := []Revocation{{Partition: 3, Source: 0, Target: 1, Since: t0.Add(time.Second)}}
	for _, tc := range []struct {
		name  string
		steps []scenario
		want  check
	}{
		{
			name:  "pending revocation after join",
			steps: nil,
			want: check{
				layout:   layoutMap{0: {0, 1, 3}, 1: {2}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2}},
				revs:     pending,
				gen:      2,
				deadline: time.Second + timeout,
			},
		},
		{
			name: "commit below what was polled keeps it pending",
			steps: []scenario{
				{do: "commit", c: 1, p: 3, off: 19},
				{do: "expire", at: timeout, want: 0},
			},
			want: check{
				layout:   layoutMap{0: {0, 1, 3}, 1: {2}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2}},
				revs:     pending,
				gen:      2,
				deadline: time.Second + timeout,
			},
		},
		{
			name: "commit up to what was polled completes it",
			steps: []scenario{
				{do: "commit", c: 1, p: 3, off: 19},
				{do: "commit", c: 1, p: 3, off: 20},
			},
			want: check{
				layout:   layoutMap{0: {0, 1}, 1: {2, 3}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2, 3}},
				gen:      3,
			},
		},
		{
			name: "timeout completes it",
			steps: []scenario{
				{do: "expire", at: time.Second + timeout - time.Nanosecond, want: 0},
				{do: "expire", at: time.Second + timeout, want: 1},
				{do: "expire", at: 2 * timeout, want: 0},
			},
			want: check{
				layout:   layoutMap{0: {0, 1}, 1: {2, 3}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2, 3}},
				gen:      3,
			},
		},
		{
			name: "new owner starts with clean marks",
			steps: []scenario{
				{do: "expire", at: time.Second + timeout, want: 1},
				// Client 3 joins at once: member 1's partition 3 was
				// never polled by it, so it moves without a revocation.
				{do: "join", c: 3, at: time.Second + timeout},
			},
			want: check{
				layout:   layoutMap{0: {0, 1}, 1: {2}, 2: {3}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2}, 3: {3}},
				gen:      4,
			},
		},
		{
			// Client 3 joins at t0+5s: eventual holdings 0 {0 1}, 1 {2 3};
			// fair 1, rem 1; member 1's excess is partition 3, still
			// pending towards it: re-targeted to member 2, start kept.
			name: "join re-targets a pending revocation",
			steps: []scenario{
				{do: "join", c: 3, at: 5 * time.Second},
			},
			want: check{
				layout:   layoutMap{0: {0, 1, 3}, 1: {2}, 2: {}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2}, 3: {}},
				revs:     []Revocation{{Partition: 3, Source: 0, Target: 2, Since: t0.Add(time.Second)}},
				gen:      3,
				deadline: time.Second + timeout,
			},
		},
		{
			name: "re-targeted revocation completes at the original deadline",
			steps: []scenario{
				{do: "join", c: 3, at: 5 * time.Second},
				{do: "expire", at: time.Second + timeout, want: 1},
			},
			want: check{
				layout:   layoutMap{0: {0, 1}, 1: {2}, 2: {3}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2}, 3: {3}},
				gen:      4,
			},
		},
		{
			name: "target leaves: full rebalance drops the revocation",
			steps: []scenario{
				{do: "leave", c: 2},
			},
			want: check{
				layout:   layoutMap{0: {0, 1, 2, 3}},
				pollable: map[uint64][]PartitionID{1: {0, 1, 2, 3}},
				gen:      3,
			},
		},
		{
			name: "source leaves: full rebalance drops the revocation",
			steps: []scenario{
				{do: "leave", c: 1},
			},
			want: check{
				layout:   layoutMap{1: {0, 1, 2, 3}},
				pollable: map[uint64][]PartitionID{2: {0, 1, 2, 3}},
				gen:      3,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(Config{RebalancingTimeout: timeout}, ids(0, 4))
			if err != nil {
				t.Fatal(err)
			}
			runScenario(t, g, append(append([]scenario(nil), prefix...), tc.steps...))
			verify(t, g, tc.want)
		})
	}
}

// TestExpiryOrder covers two revocations with different starts: they expire
// one at a time at their own deadlines, or together in creation order.
func TestExpiryOrder(t *testing.T) {
	const timeout = 30 * time.Second
	// P 5. Client 2 joins at 1s: fair 2 rem 1, member 0 keeps 3, excess
	// [3 4]: 3 moves, 4 (polled) pending to member 1. Client 3 joins at 10s:
	// fair 1 rem 2, member 0 (eventual {0 1 2}) keeps 2, excess [2] (polled)
	// pending to member 2; member 1 (eventual {3 4}) keeps 2.
	prefix := []scenario{
		{do: "join", c: 1},
		{do: "poll", c: 1, p: 4, off: 1},
		{do: "join", c: 2, at: time.Second},
		{do: "poll", c: 1, p: 2, off: 1},
		{do: "join", c: 3, at: 10 * time.Second},
	}
	done := check{
		layout:   layoutMap{0: {0, 1}, 1: {3, 4}, 2: {2}},
		pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {3, 4}, 3: {2}},
		gen:      5,
	}
	for _, tc := range []struct {
		name  string
		steps []scenario
		want  check
	}{
		{
			name: "both pending",
			want: check{
				layout:   layoutMap{0: {0, 1, 2, 4}, 1: {3}, 2: {}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {3}, 3: {}},
				revs: []Revocation{
					{Partition: 4, Source: 0, Target: 1, Since: t0.Add(time.Second)},
					{Partition: 2, Source: 0, Target: 2, Since: t0.Add(10 * time.Second)},
				},
				gen:      3,
				deadline: time.Second + timeout,
			},
		},
		{
			name: "first deadline",
			steps: []scenario{
				{do: "expire", at: time.Second + timeout, want: 1},
			},
			want: check{
				layout:   layoutMap{0: {0, 1, 2}, 1: {3, 4}, 2: {}},
				pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {3, 4}, 3: {}},
				revs:     []Revocation{{Partition: 2, Source: 0, Target: 2, Since: t0.Add(10 * time.Second)}},
				gen:      4,
				deadline: 10*time.Second + timeout,
			},
		},
		{
			name: "one at a time",
			steps: []scenario{
				{do: "expire", at: time.Second + timeout, want: 1},
				{do: "expire", at: 10*time.Second + timeout - 1, want: 0},
				{do: "expire", at: 10*time.Second + timeout, want: 1},
			},
			want: done,
		},
		{
			name:  "together",
			steps: []scenario{{do: "expire", at: time.Hour, want: 2}},
			want:  done,
		},
		{
			name: "second by commit, first by timeout",
			steps: []scenario{
				{do: "commit", c: 1, p: 2, off: 1},
				{do: "expire", at: time.Second + timeout, want: 1},
			},
			want: done,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(Config{RebalancingTimeout: timeout}, ids(0, 5))
			if err != nil {
				t.Fatal(err)
			}
			runScenario(t, g, append(append([]scenario(nil), prefix...), tc.steps...))
			verify(t, g, tc.want)
		})
	}
}

// TestDefaultTimeout checks that a zero Config uses the 30 s default.
func TestDefaultTimeout(t *testing.T) {
	g := newGroup(t, ids(0, 2))
	join(t, g, 1)
	poll(t, g, 1, 1, 1)
	join(t, g, 2)
	dl, ok := g.NextDeadline()
	if !ok || !dl.Equal(t0.Add(DefaultRebalancingTimeout)) {
		t.Fatalf("NextDeadline = %v, %v; want t0+30s", dl, ok)
	}
	if n := g.ExpireRevocations(t0.Add(DefaultRebalancingTimeout - 1)); n != 0 {
		t.Fatalf("expired %d before the default timeout", n)
	}
	if n := g.ExpireRevocations(t0.Add(DefaultRebalancingTimeout)); n != 1 {
		t.Fatalf("expired %d at the default timeout, want 1", n)
	}
}

// TestPollMarks pins the in-flight rules: highest polled offset, last
// committed offset (an explicit store may move it backwards).
func TestPollMarks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		steps       []scenario
		wantPending bool
	}{
		{"never polled", nil, false},
		{"polled, not committed", []scenario{{do: "poll", c: 1, p: 1, off: 0}}, true},
		{"polled and committed", []scenario{{do: "poll", c: 1, p: 1, off: 5}, {do: "commit", c: 1, p: 1, off: 5}}, false},
		{"committed beyond polled", []scenario{{do: "poll", c: 1, p: 1, off: 5}, {do: "commit", c: 1, p: 1, off: 8}}, false},
		{"re-poll below the highest keeps the highest", []scenario{
			{do: "poll", c: 1, p: 1, off: 5}, {do: "poll", c: 1, p: 1, off: 2}, {do: "commit", c: 1, p: 1, off: 2},
		}, true},
		{"store moved backwards", []scenario{
			{do: "poll", c: 1, p: 1, off: 5}, {do: "commit", c: 1, p: 1, off: 5}, {do: "commit", c: 1, p: 1, off: 1},
		}, true},
		{"commit without poll", []scenario{{do: "commit", c: 1, p: 1, off: 3}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, ids(0, 2))
			join(t, g, 1)
			runScenario(t, g, append(tc.steps, scenario{do: "join", c: 2}))
			if got := len(g.Revocations()) == 1; got != tc.wantPending {
				t.Fatalf("pending = %v, want %v (revocations %v)", got, tc.wantPending, g.Revocations())
			}
		})
	}
}

// TestLoggedHandOff drives the log-friendly API the metadata plane uses:
// JoinPending defers every move, Settled names the ones without in-flight
// data, NoteCommit reports readiness without completing, and
// CompleteRevocation completes exactly the revocation named.
func TestLoggedHandOff(t *testing.T) {
	g := newGroup(t, ids(0, 4))
	join(t, g, 1)
	poll(t, g, 1, 3, 7) // partition 3 in flight up to 7
	if _, err := g.JoinPending(cid(2), t0); err != nil {
		t.Fatal(err)
	}
	want := []Revocation{
		{Partition: 2, Source: 0, Target: 1, Since: t0},
		{Partition: 3, Source: 0, Target: 1, Since: t0},
	}
	if diff := cmp.Diff(want, g.Revocations()); diff != "" {
		t.Fatalf("revocations after JoinPending (-want +got):\n%s", diff)
	}
	if got := g.Settled(); !slices.Equal(got, []PartitionID{2}) {
		t.Fatalf("Settled = %v, want [2]", got)
	}
	gen := g.Generation()
	if !g.CompleteRevocation(2) || g.CompleteRevocation(2) || g.CompleteRevocation(9) {
		t.Fatal("CompleteRevocation must complete a pending revocation once and refuse the rest")
	}
	if g.Generation() != gen+1 {
		t.Fatalf("generation %d, want %d", g.Generation(), gen+1)
	}
	for _, tc := range []struct {
		name      string
		client    ClientID
		off       uint64
		wantReady bool
		wantErr   error
	}{
		{"target may not commit", cid(2), 7, false, ErrPartitionNotOwned},
		{"non-member", cid(9), 7, false, ErrMemberNotFound},
		{"commit below the polled offset", cid(1), 5, false, nil},
		{"commit catches up", cid(1), 7, true, nil},
	} {
		ready, err := g.NoteCommit(tc.client, 3, tc.off)
		if ready != tc.wantReady || !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: NoteCommit = %v, %v; want %v, %v", tc.name, ready, err, tc.wantReady, tc.wantErr)
		}
	}
	if len(g.Revocations()) != 1 {
		t.Fatal("NoteCommit completed the revocation itself")
	}
	if !g.CompleteRevocation(3) {
		t.Fatal("CompleteRevocation(3) refused")
	}
	verify(t, g, check{
		layout:   layoutMap{0: {0, 1}, 1: {2, 3}},
		pollable: map[uint64][]PartitionID{1: {0, 1}, 2: {2, 3}},
		gen:      gen + 2,
	})
}
