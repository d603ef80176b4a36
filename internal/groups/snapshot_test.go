package groups

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sampleGroups returns groups in assorted states for round-trip tests and
// fuzz seeds.
func sampleGroups(t testing.TB) map[string]*Group {
	t.Helper()
	out := make(map[string]*Group)
	mk := func(name string, parts []PartitionID, run func(g *Group) error) {
		g, err := New(Config{RebalancingTimeout: 10 * time.Second}, parts)
		if err == nil {
			err = run(g)
		}
		if err != nil {
			t.Fatalf("sample %s: %v", name, err)
		}
		out[name] = g
	}
	mk("empty", nil, func(*Group) error { return nil })
	mk("partitions only", ids(0, 5), func(*Group) error { return nil })
	mk("members only", nil, func(g *Group) error {
		_, err := g.Join(cid(1), t0)
		return err
	})
	mk("pending revocations", ids(0, 5), func(g *Group) error {
		steps := []func() error{
			func() error { _, err := g.Join(cid(1), t0); return err },
			func() error { return g.RecordPoll(cid(1), 4, 11) },
			func() error { return g.RecordPoll(cid(1), 3, 7) },
			func() error { return g.RecordCommit(cid(1), 3, 7) },
			func() error { _, err := g.Join(cid(2), t0.Add(time.Second)); return err },
			func() error { return g.RecordPoll(cid(1), 2, 1) },
			func() error { return g.RecordCommit(cid(1), 0, 3) },
			func() error {
				_, err := g.Join(ClientID{Lo: ^uint64(0), Hi: ^uint64(0)}, t0.Add(-time.Hour))
				return err
			},
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
		if len(g.Revocations()) != 2 {
			return errors.New("want two revocations")
		}
		return nil
	})
	mk("after leave", []PartitionID{999_999, 0, 17}, func(g *Group) error {
		for c := uint64(1); c <= 4; c++ {
			if _, err := g.Join(cid(c), t0); err != nil {
				return err
			}
		}
		return g.Leave(cid(2))
	})
	return out
}

// view is the exported state of a group, for comparisons.
type view struct {
	Generation  Generation
	Partitions  []PartitionID
	Members     []MemberInfo
	Revocations []Revocation
	Pollable    map[ClientID][]PartitionID
	Deadline    time.Time
}

func viewOf(g *Group) view {
	v := view{
		Generation:  g.Generation(),
		Partitions:  g.Partitions(),
		Members:     g.Members(),
		Revocations: g.Revocations(),
		Pollable:    make(map[ClientID][]PartitionID),
	}
	for _, m := range v.Members {
		_, v.Pollable[m.Client], _ = g.Assignment(m.Client)
	}
	v.Deadline, _ = g.NextDeadline()
	return v
}

func TestSnapshotRoundTrip(t *testing.T) {
	for name, g := range sampleGroups(t) {
		t.Run(name, func(t *testing.T) {
			snap := g.AppendTo([]byte("prefix"))[len("prefix"):]
			back, err := New(Config{RebalancingTimeout: 10 * time.Second}, ids(0, 3))
			if err != nil {
				t.Fatal(err)
			}
			if err := back.Decode(snap); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(viewOf(g), viewOf(back), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			if got := back.AppendTo(nil); !slices.Equal(got, snap) {
				t.Errorf("re-encoding differs")
			}
			if err := checkStructure(back); err != nil {
				t.Error(err)
			}
			// The restored group behaves like the original.
			for _, h := range []*Group{g, back} {
				h.ExpireRevocations(t0.Add(time.Minute))
				if _, err := h.Join(cid(99), t0.Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(viewOf(g), viewOf(back), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view after further operations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeKeepsConfig checks that the timeout comes from the receiving
// group, not from the snapshot.
func TestDecodeKeepsConfig(t *testing.T) {
	g := sampleGroups(t)["pending revocations"]
	back, err := New(Config{RebalancingTimeout: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Decode(g.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	// The earliest start is the later revocation's (its join carried an
	// earlier timestamp).
	first := g.Revocations()[1].Since
	if !first.Before(g.Revocations()[0].Since) {
		t.Fatal("sample: want the second revocation to start first")
	}
	if dl, _ := back.NextDeadline(); !dl.Equal(first.Add(time.Hour)) {
		t.Errorf("NextDeadline = %v, want %v", dl, first.Add(time.Hour))
	}
	var zero Group
	if err := zero.Decode(g.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if dl, _ := zero.NextDeadline(); !dl.Equal(first.Add(DefaultRebalancingTimeout)) {
		t.Errorf("zero Group: NextDeadline = %v, want the default timeout", dl)
	}
}

// snap builds snapshot bytes field by field.
type snap []byte

func (s snap) u8(v byte) snap    { return append(s, v) }
func (s snap) u32(v uint32) snap { return binary.LittleEndian.AppendUint32(s, v) }
func (s snap) u64(v uint64) snap { return binary.LittleEndian.AppendUint64(s, v) }

// part appends one partition record.
func (s snap) part(id uint32, flags byte, polled, committed uint64) snap {
	return s.u32(id).u8(flags).u64(polled).u64(committed)
}

// member appends one member record.
func (s snap) member(id uint32, client uint64, parts ...uint32) snap {
	s = s.u32(id).u64(client).u64(0).u32(uint32(len(parts)))
	for _, p := range parts {
		s = s.u32(p)
	}
	return s
}

// rev appends one revocation record.
func (s snap) rev(p, src, dst uint32, since int64) snap {
	return s.u32(p).u32(src).u32(dst).u64(uint64(since))
}

// head is version 1, generation 7.
func head() snap { return snap{}.u8(1).u64(7) }

func TestDecodeRejects(t *testing.T) {
	// Two partitions; partition 1 polled up to 5 by member 0 (in flight).
	// A function, not a value: cases append to it and must not share a
	// backing array.
	twoParts := func() snap { return head().u32(2).part(0, 0, 0, 0).part(1, flagPolled, 5, 0) }
	valid := twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(1, 0, 1, 42)
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"empty", nil},
		{"version 0", snap{}.u8(0).u64(0).u32(0).u32(0).u32(0)},
		{"version 2", snap{}.u8(2).u64(0).u32(0).u32(0).u32(0)},
		{"truncated", valid[:len(valid)-1]},
		{"trailing byte", append(slices.Clone(valid), 0)},
		{"partition count beyond the input", head().u32(1000)},
		{"partition count beyond the limit", head().u32(MaxPartitions + 1)},
		{"partition id too large", head().u32(1).part(MaxPartitionID, 0, 0, 0).u32(0).u32(0)},
		{"partitions out of order", head().u32(2).part(1, 0, 0, 0).part(0, 0, 0, 0).u32(0).u32(0)},
		{"duplicate partition", head().u32(2).part(1, 0, 0, 0).part(1, 0, 0, 0).u32(0).u32(0)},
		{"unknown flag", head().u32(1).part(0, 4, 0, 0).u32(1).member(0, 1, 0).u32(0)},
		{"stray polled offset", head().u32(1).part(0, 0, 3, 0).u32(1).member(0, 1, 0).u32(0)},
		{"stray committed offset", head().u32(1).part(0, flagPolled, 3, 1).u32(1).member(0, 1, 0).u32(0)},
		{"marks on an unowned partition", head().u32(1).part(0, flagCommitted, 0, 1).u32(0).u32(0)},
		{"member count beyond the input", twoParts().u32(100)},
		{"members out of order", twoParts().u32(2).member(1, 1, 0).member(0, 2, 1).u32(0)},
		{"duplicate member id", twoParts().u32(2).member(0, 1, 0).member(0, 2, 1).u32(0)},
		{"duplicate client", twoParts().u32(2).member(0, 1, 0).member(1, 1, 1).u32(0)},
		{"member owns an unknown partition", twoParts().u32(1).member(0, 1, 0, 2).u32(0)},
		{"partition owned twice", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2, 1).u32(0)},
		{"partition owned twice by one member", twoParts().u32(2).member(0, 1, 1, 1).member(1, 2, 0).u32(0)},
		{"member partitions beyond the partition count", twoParts().u32(1).member(0, 1, 0, 1, 0).u32(0)},
		{"unowned partition with members", twoParts().u32(2).member(0, 1, 1).member(1, 2).u32(0)},
		{"revocation count beyond the partitions", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(3)},
		{"revocation of an unknown partition", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(9, 0, 1, 0)},
		{"revocation source does not own", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(1, 1, 0, 0)},
		{"revocation to an unknown member", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(1, 0, 5, 0)},
		{"revocation to its source", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(1, 0, 0, 0)},
		{"partition revoked twice", twoParts().u32(2).member(0, 1, 0, 1).member(1, 2).u32(2).rev(1, 0, 1, 0).rev(1, 0, 1, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := sampleGroups(t)["pending revocations"]
			before := g.AppendTo(nil)
			err := g.Decode(tc.src)
			if !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("Decode = %v, want ErrCorruptSnapshot", err)
			}
			if !slices.Equal(before, g.AppendTo(nil)) {
				t.Error("a rejected snapshot changed the group")
			}
		})
	}
	t.Run("valid baseline", func(t *testing.T) {
		g := newGroup(t, nil)
		if err := g.Decode(valid); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		want := []Revocation{{Partition: 1, Source: 0, Target: 1, Since: time.Unix(0, 42)}}
		if diff := cmp.Diff(want, g.Revocations()); diff != "" {
			t.Errorf("revocations (-want +got):\n%s", diff)
		}
		if g.Generation() != 7 {
			t.Errorf("generation = %d, want 7", g.Generation())
		}
		if !slices.Equal(g.AppendTo(nil), valid) {
			t.Error("re-encoding differs")
		}
	})
}

// TestExtremeTimes checks that revocation starts anywhere in the int64 range
// (from a snapshot or a log entry) neither overflow nor panic.
func TestExtremeTimes(t *testing.T) {
	for _, since := range []int64{-1 << 63, -1, 0, 1<<63 - 1} {
		src := head().u32(2).part(0, 0, 0, 0).part(1, flagPolled, 5, 0).
			u32(2).member(0, 1, 0, 1).member(1, 2).u32(1).rev(1, 0, 1, since)
		g, err := New(Config{RebalancingTimeout: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Decode(src); err != nil {
			t.Fatalf("since %d: %v", since, err)
		}
		dl, ok := g.NextDeadline()
		if !ok || dl.UnixNano() < since {
			t.Errorf("since %d: NextDeadline = %v (%d), %v", since, dl, dl.UnixNano(), ok)
		}
		// At the deadline it expires unless the deadline saturated.
		n := g.ExpireRevocations(dl)
		if want := 1; since != 1<<63-1 && n != want {
			t.Errorf("since %d: ExpireRevocations(deadline) = %d, want %d", since, n, want)
		}
		if n := g.ExpireRevocations(time.Unix(0, since).Add(-time.Nanosecond)); n != 0 && since != -1<<63 {
			t.Errorf("since %d: expired before its start", since)
		}
	}
}

// FuzzDecodeSnapshot: Decode never panics; whatever decodes is canonical
// (re-encodes to the input), structurally valid, and survives further
// operations.
func FuzzDecodeSnapshot(f *testing.F) {
	for _, g := range sampleGroups(f) {
		f.Add(g.AppendTo(nil))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, src []byte) {
		g, err := New(Config{RebalancingTimeout: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Decode(src); err != nil {
			if !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("Decode error %v does not wrap ErrCorruptSnapshot", err)
			}
			return
		}
		if got := g.AppendTo(nil); !slices.Equal(got, src) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", src, got)
		}
		if err := checkStructure(g); err != nil {
			t.Fatal(err)
		}
		members := g.Members()
		now := time.Unix(0, 0)
		for i, m := range members {
			_, pollable, _ := g.Assignment(m.Client)
			for _, p := range pollable {
				_ = g.RecordPoll(m.Client, p, uint64(i))
			}
			for _, p := range m.Partitions {
				_ = g.RecordCommit(m.Client, p, uint64(i))
			}
			if err := checkStructure(g); err != nil {
				t.Fatalf("after polls and commits of member %d: %v", m.ID, err)
			}
		}
		g.ExpireRevocations(now)
		if _, err := g.Join(ClientID{Lo: 0xfeed}, now); err != nil && !errors.Is(err, ErrTooManyMembers) {
			t.Fatal(err)
		}
		if err := checkStructure(g); err != nil {
			t.Fatalf("after join: %v", err)
		}
		if len(members) > 0 {
			g.RemoveClient(members[0].Client)
			if err := checkStructure(g); err != nil {
				t.Fatalf("after removal: %v", err)
			}
		}
	})
}

// TestDecodedUnbalancedState covers a state only a snapshot can hold: a
// source whose partitions are all pending away from it is idle, and excess
// handed back to it cancels the revocation instead of revoking to itself.
func TestDecodedUnbalancedState(t *testing.T) {
	src := head().u32(2).part(0, flagPolled, 5, 0).part(1, flagPolled, 5, 0).
		u32(2).member(0, 1, 0, 1).member(1, 2).
		u32(2).rev(0, 0, 1, 0).rev(1, 0, 1, 0)
	g := newGroup(t, nil)
	if err := g.Decode(src); err != nil {
		t.Fatal(err)
	}
	// M 3, P 2: fair 0, rem 2; member 1 (eventual {0 1}) keeps 1, excess
	// [1]; idle members are 0 (all of its partitions pending away) and the
	// joiner 2; partition 1 goes back to member 0.
	if id := join(t, g, 3); id != 2 {
		t.Fatalf("joiner id %d, want 2", id)
	}
	want := []Revocation{{Partition: 0, Source: 0, Target: 1, Since: time.Unix(0, 0)}}
	if diff := cmp.Diff(want, g.Revocations()); diff != "" {
		t.Errorf("revocations (-want +got):\n%s", diff)
	}
	if _, got, _ := g.Assignment(ClientID{Lo: 1}); !slices.Equal(got, []PartitionID{1}) {
		t.Errorf("member 0 may poll %v, want [1]", got)
	}
	if err := checkStructure(g); err != nil {
		t.Error(err)
	}
}

// TestTooManyMembers checks the MaxMembers bound on Join (a full group is
// built through a snapshot: joining 65,536 members one by one is slow).
func TestTooManyMembers(t *testing.T) {
	src := head().u32(0).u32(MaxMembers)
	for i := range uint32(MaxMembers) {
		src = src.member(i, uint64(i)+1)
	}
	src = src.u32(0)
	g := newGroup(t, nil)
	if err := g.Decode(src); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Join(cid(1<<40), t0); !errors.Is(err, ErrTooManyMembers) {
		t.Fatalf("Join into a full group = %v, want ErrTooManyMembers", err)
	}
	if g.Generation() != 7 || g.Len() != MaxMembers {
		t.Errorf("a refused join changed the group")
	}
	if id, err := g.Join(ClientID{Lo: 1}, t0); err != nil || id != 0 {
		t.Errorf("re-join in a full group = %d, %v", id, err)
	}
	if err := g.Decode(append(head().u32(0).u32(MaxMembers+1), make([]byte, 24*(MaxMembers+1)+4)...)); !errors.Is(err, ErrCorruptSnapshot) {
		t.Errorf("decode of MaxMembers+1 members = %v", err)
	}
}
