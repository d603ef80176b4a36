package groups

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/iggo-dev/iggo/wire"
)

func newGroup(t *testing.T, partitions []PartitionID) *Group {
	t.Helper()
	g, err := New(Config{}, partitions)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

func join(t *testing.T, g *Group, c uint64) MemberID {
	t.Helper()
	id, err := g.Join(cid(c), t0)
	if err != nil {
		t.Fatalf("Join(%d): %v", c, err)
	}
	return id
}

func leave(t *testing.T, g *Group, c uint64) {
	t.Helper()
	if err := g.Leave(cid(c)); err != nil {
		t.Fatalf("Leave(%d): %v", c, err)
	}
}

func poll(t *testing.T, g *Group, c uint64, p PartitionID, off uint64) {
	t.Helper()
	if err := g.RecordPoll(cid(c), p, off); err != nil {
		t.Fatalf("RecordPoll(%d, %d, %d): %v", c, p, off, err)
	}
}

func commit(t *testing.T, g *Group, c uint64, p PartitionID, off uint64) {
	t.Helper()
	if err := g.RecordCommit(cid(c), p, off); err != nil {
		t.Fatalf("RecordCommit(%d, %d, %d): %v", c, p, off, err)
	}
}

type layoutMap = map[MemberID][]PartitionID

// TestFullRebalance pins the full rebalance of §6.3 (partition i to member
// i % M, ascending ids) on the events that trigger it.
func TestFullRebalance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     func(t *testing.T, g *Group)
		start   []PartitionID
		want    layoutMap
		wantGen Generation
	}{
		{
			name:  "partitions added to three members",
			start: nil,
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
				if err := g.SetPartitions(ids(0, 10)); err != nil {
					t.Fatal(err)
				}
			},
			want:    layoutMap{0: {0, 3, 6, 9}, 1: {1, 4, 7}, 2: {2, 5, 8}},
			wantGen: 4,
		},
		{
			name:  "middle member leaves",
			start: nil,
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
				if err := g.SetPartitions(ids(0, 10)); err != nil {
					t.Fatal(err)
				}
				leave(t, g, 2)
			},
			want:    layoutMap{0: {0, 2, 4, 6, 8}, 2: {1, 3, 5, 7, 9}},
			wantGen: 5,
		},
		{
			name:  "more members than partitions",
			start: ids(0, 3),
			run: func(t *testing.T, g *Group) {
				for c := uint64(1); c <= 5; c++ {
					join(t, g, c)
				}
				if !g.RemoveClient(cid(5)) {
					t.Fatal("RemoveClient(5) = false")
				}
			},
			want:    layoutMap{0: {0}, 1: {1}, 2: {2}, 3: {}},
			wantGen: 6,
		},
		{
			name:  "partitions deleted",
			start: ids(0, 8),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				if err := g.SetPartitions(ids(0, 5)); err != nil {
					t.Fatal(err)
				}
			},
			want:    layoutMap{0: {0, 2, 4}, 1: {1, 3}},
			wantGen: 3,
		},
		{
			name:  "sparse ids in any order",
			start: nil,
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				if err := g.SetPartitions([]PartitionID{7, 3, 1}); err != nil {
					t.Fatal(err)
				}
			},
			want:    layoutMap{0: {1, 7}, 1: {3}},
			wantGen: 3,
		},
		{
			name:  "last member leaves and a new one joins",
			start: ids(0, 4),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				leave(t, g, 1)
				join(t, g, 2)
			},
			want:    layoutMap{0: {0, 1, 2, 3}},
			wantGen: 3,
		},
		{
			name:  "leave clears pending revocations",
			start: ids(0, 4),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				poll(t, g, 1, 3, 5)
				join(t, g, 2)
				join(t, g, 3)
				leave(t, g, 3)
			},
			want:    layoutMap{0: {0, 2}, 1: {1, 3}},
			wantGen: 4,
		},
		{
			name:  "no partitions",
			start: nil,
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				leave(t, g, 1)
			},
			want:    layoutMap{1: {}},
			wantGen: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, tc.start)
			tc.run(t, g)
			if diff := cmp.Diff(tc.want, layout(g), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			var memberIDs []MemberID
			for id := range tc.want {
				memberIDs = append(memberIDs, id)
			}
			if diff := cmp.Diff(fullModel(memberIDs, g.Partitions()), layout(g), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("layout differs from the i %% M model (-model +got):\n%s", diff)
			}
			if got := g.Generation(); got != tc.wantGen {
				t.Errorf("generation = %d, want %d", got, tc.wantGen)
			}
			if len(g.Revocations()) != 0 {
				t.Errorf("revocations left after a full rebalance: %v", g.Revocations())
			}
			if err := checkInvariants(g); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCooperativeJoin pins the cooperative rebalance of §6.3 on joins without
// in-flight data: fair / rem, excess from the end of the lists, round robin to
// idle members, lowest unused member id.
func TestCooperativeJoin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		start   []PartitionID
		run     func(t *testing.T, g *Group)
		want    layoutMap
		wantGen Generation
	}{
		{
			name:    "first member takes every partition",
			start:   ids(0, 10),
			run:     func(t *testing.T, g *Group) { join(t, g, 1) },
			want:    layoutMap{0: ids(0, 10)},
			wantGen: 1,
		},
		{
			name:  "second member takes the tail",
			start: ids(0, 10),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
			},
			want:    layoutMap{0: {0, 1, 2, 3, 4}, 1: {5, 6, 7, 8, 9}},
			wantGen: 2,
		},
		{
			// fair 3, rem 1: member 0 keeps 4, member 1 keeps 3; excess
			// [4] + [8 9] goes to member 2 in that order.
			name:  "third member collects excess of both",
			start: ids(0, 10),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
			},
			want:    layoutMap{0: {0, 1, 2, 3}, 1: {5, 6, 7}, 2: {4, 8, 9}},
			wantGen: 3,
		},
		{
			// After the full rebalance of members 0 and 2, the joiner gets
			// id 1; fair 3, rem 1: member 0 keeps 4 (excess [8]), member 2
			// keeps 3 (excess [7 9]).
			name:  "lowest unused member id",
			start: ids(0, 10),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
				leave(t, g, 2)
				if id := join(t, g, 4); id != 1 {
					t.Errorf("joiner got member id %d, want 1", id)
				}
			},
			want:    layoutMap{0: {0, 2, 4, 6}, 1: {8, 7, 9}, 2: {1, 3, 5}},
			wantGen: 5,
		},
		{
			// P 5, members 1 {0 2 4} and 2 {1 3}; the joiner gets id 0.
			// fair 1, rem 2: the two rem slots go to the members holding
			// more than fair, so only partition 4 moves.
			name:  "rem slots go to members above fair",
			start: ids(0, 5),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
				leave(t, g, 1)
				if id := join(t, g, 4); id != 0 {
					t.Errorf("joiner got member id %d, want 0", id)
				}
			},
			want:    layoutMap{0: {4}, 1: {0, 2}, 2: {1, 3}},
			wantGen: 5,
		},
		{
			name:  "more members than partitions",
			start: ids(0, 2),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				join(t, g, 3)
			},
			want:    layoutMap{0: {0}, 1: {1}, 2: {}},
			wantGen: 3,
		},
		{
			name:  "re-join is a no-op",
			start: ids(0, 4),
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
				if id := join(t, g, 1); id != 0 {
					t.Errorf("re-join returned %d, want 0", id)
				}
			},
			want:    layoutMap{0: {0, 1}, 1: {2, 3}},
			wantGen: 2,
		},
		{
			name:  "join to an empty topic",
			start: nil,
			run: func(t *testing.T, g *Group) {
				join(t, g, 1)
				join(t, g, 2)
			},
			want:    layoutMap{0: {}, 1: {}},
			wantGen: 2,
		},
		{
			// Four joins over 16 partitions: 16 -> 8/8 -> 6/5/5 -> 4/4/4/4;
			// the last joiner collects [4 5] + [12] + [15].
			name:  "four joins over sixteen partitions",
			start: ids(0, 16),
			run: func(t *testing.T, g *Group) {
				for c := uint64(1); c <= 4; c++ {
					join(t, g, c)
				}
			},
			want: layoutMap{
				0: {0, 1, 2, 3},
				1: {8, 9, 10, 11},
				2: {6, 7, 13, 14},
				3: {4, 5, 12, 15},
			},
			wantGen: 4,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, tc.start)
			tc.run(t, g)
			if diff := cmp.Diff(tc.want, layout(g), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			if got := g.Generation(); got != tc.wantGen {
				t.Errorf("generation = %d, want %d", got, tc.wantGen)
			}
			if len(g.Revocations()) != 0 {
				t.Errorf("revocations without in-flight data: %v", g.Revocations())
			}
			if err := checkInvariants(g); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestErrors pins the errors the server maps to wire codes.
func TestErrors(t *testing.T) {
	g := newGroup(t, ids(0, 4))
	join(t, g, 1)
	poll(t, g, 1, 3, 7)
	join(t, g, 2) // partition 3 pending from member 0 to member 1; 2 moved
	for _, tc := range []struct {
		name string
		err  error
		want error
		code uint32
	}{
		{"leave of a non-member", g.Leave(cid(9)), ErrMemberNotFound, 5006},
		{"poll by a non-member", g.CanPoll(cid(9), 0), ErrMemberNotFound, 5006},
		{"commit by a non-member", g.CanCommit(cid(9), 0), ErrMemberNotFound, 5006},
		{"poll of another member's partition", g.CanPoll(cid(2), 0), ErrPartitionNotOwned, 5009},
		{"poll of an unknown partition", g.CanPoll(cid(1), 42), ErrPartitionNotOwned, 5009},
		{"poll of a partition pending revocation", g.CanPoll(cid(1), 3), ErrPartitionNotOwned, 5009},
		{"poll by the revocation target", g.CanPoll(cid(2), 3), ErrPartitionNotOwned, 5009},
		{"record poll of a partition pending revocation", g.RecordPoll(cid(1), 3, 9), ErrPartitionNotOwned, 5009},
		{"commit by the revocation target", g.RecordCommit(cid(2), 3, 9), ErrPartitionNotOwned, 5009},
		{"commit of a moved partition", g.CanCommit(cid(1), 2), ErrPartitionNotOwned, 5009},
		{"commit of a partition pending revocation", g.CanCommit(cid(1), 3), nil, 0},
		{"poll of an owned partition", g.CanPoll(cid(1), 1), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.want) {
				t.Fatalf("err = %v, want %v", tc.err, tc.want)
			}
			if tc.want != nil && wire.CodeOf(tc.err) != tc.code {
				t.Errorf("code = %d, want %d", wire.CodeOf(tc.err), tc.code)
			}
		})
	}
	if _, _, err := g.Assignment(cid(9)); !errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
		t.Errorf("Assignment of a non-member: %v", err)
	}
	if got := g.Generation(); got != 2 {
		t.Errorf("failed calls changed the generation to %d", got)
	}
	if err := checkInvariants(g); err != nil {
		t.Error(err)
	}
}

func TestNewValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		parts []PartitionID
		want  error
	}{
		{"duplicate partition", Config{}, []PartitionID{1, 2, 1}, ErrInvalidPartitions},
		{"partition id too large", Config{}, []PartitionID{MaxPartitionID}, ErrInvalidPartitions},
		{"negative timeout", Config{RebalancingTimeout: -time.Second}, nil, ErrInvalidConfig},
		{"highest partition id", Config{}, []PartitionID{MaxPartitionID - 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, tc.parts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("New = %v, want %v", err, tc.want)
			}
		})
	}
	g := newGroup(t, ids(0, 3))
	join(t, g, 1)
	if err := g.SetPartitions([]PartitionID{4, 4}); !errors.Is(err, ErrInvalidPartitions) {
		t.Fatalf("SetPartitions with a duplicate = %v", err)
	}
	if g.Generation() != 1 || len(g.Partitions()) != 3 {
		t.Errorf("a rejected SetPartitions changed the group")
	}
}

// TestDropMembers pins the boot-time cleanup.
func TestDropMembers(t *testing.T) {
	g := newGroup(t, ids(0, 4))
	if n := g.DropMembers(); n != 0 || g.Generation() != 0 {
		t.Fatalf("DropMembers on an empty group = %d, generation %d", n, g.Generation())
	}
	join(t, g, 1)
	poll(t, g, 1, 2, 3)
	poll(t, g, 1, 3, 3)
	join(t, g, 2)
	join(t, g, 3)
	if len(g.Revocations()) == 0 {
		t.Fatal("setup: want a pending revocation")
	}
	gen := g.Generation()
	if n := g.DropMembers(); n != 3 {
		t.Fatalf("DropMembers = %d, want 3", n)
	}
	if g.Generation() != gen+1 || g.Len() != 0 || len(g.Revocations()) != 0 {
		t.Fatalf("after DropMembers: generation %d (was %d), %d members, %v", g.Generation(), gen, g.Len(), g.Revocations())
	}
	if _, ok := g.MemberOf(cid(1)); ok {
		t.Error("client 1 still a member")
	}
	if err := checkInvariants(g); err != nil {
		t.Error(err)
	}
	if id := join(t, g, 1); id != 0 {
		t.Errorf("join after DropMembers got id %d", id)
	}
	if diff := cmp.Diff(layoutMap{0: ids(0, 4)}, layout(g)); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}
}
