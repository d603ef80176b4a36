package raftlog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// modelRun drives a Log and a raft.MemoryStorage with the same random
// calls and compares every result; it closes and reopens the Log now and
// then and compares the whole state.
type modelRun struct {
	t    *testing.T
	rng  *rand.Rand
	dir  string
	opts Options
	ms   *raft.MemoryStorage
	l    *Log
	step int
	term uint64
}

func TestModelAgainstMemoryStorage(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			opts := Options{SegmentBytes: 1024, CacheBytes: 2048, Sync: seed == 0}
			if seed == 1 {
				opts.CacheBytes = -1
			}
			if seed == 2 {
				opts.SegmentBytes = 1 << 20
				opts.CacheBytes = 1 << 20
			}
			m := &modelRun{t: t, rng: rand.New(rand.NewPCG(seed, 42)), dir: t.TempDir(), opts: opts, ms: raft.NewMemoryStorage(), term: 1}
			m.l = openT(t, m.dir, opts)
			defer func() { _ = m.l.Close() }()
			for m.step = 0; m.step < 2500; m.step++ {
				m.randomOp()
				if m.step%50 == 0 {
					m.compareAll()
				}
			}
			m.reopen()
		})
	}
}

func (m *modelRun) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("step %d: "+format, append([]any{m.step}, args...)...)
}

func (m *modelRun) bounds() (first, last, snapIdx uint64) {
	first, _ = m.ms.FirstIndex()
	last, _ = m.ms.LastIndex()
	s, _ := m.ms.Snapshot()
	return first, last, s.GetMetadata().GetIndex()
}

// pick returns a random index in [lo, hi] (lo if hi < lo).
func (m *modelRun) pick(lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	return lo + m.rng.Uint64N(hi-lo+1)
}

func (m *modelRun) data() []byte {
	var n int
	switch r := m.rng.IntN(100); {
	case r < 5:
		return nil
	case r < 80:
		n = m.rng.IntN(64)
	case r < 95:
		n = 100 + m.rng.IntN(300)
	default:
		n = 1000 + m.rng.IntN(2000)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(m.rng.Uint32())
	}
	return b
}

func (m *modelRun) randomOp() {
	first, last, snapIdx := m.bounds()
	dummy := first - 1
	switch r := m.rng.IntN(100); {
	case r < 35:
		m.append(first, last)
	case r < 45:
		m.setHardState(last)
	case r < 50:
		i := uint64(m.rng.IntN(int(last-dummy)+1)) + dummy
		if i > 0 && m.rng.IntN(4) == 0 {
			i--
		}
		m.compare("compact", m.ms.Compact(i), m.l.Compact(i))
	case r < 55:
		m.createSnapshot(dummy, last, snapIdx)
	case r < 58:
		m.applySnapshot(last, snapIdx)
	case r < 75:
		m.entries(dummy, last)
	case r < 90:
		i := dummy + uint64(m.rng.IntN(int(last-dummy)+5))
		if i >= 2 {
			i -= 2
		}
		a, aerr := m.ms.Term(i)
		b, berr := m.l.Term(i)
		m.compare(fmt.Sprintf("term(%d)", i), aerr, berr)
		if a != b {
			m.fatalf("term(%d): model %d, log %d", i, a, b)
		}
	case r < 98:
		m.compareAll()
	default:
		m.reopen()
	}
	f2, _ := m.l.FirstIndex()
	l2, _ := m.l.LastIndex()
	f1, l1, _ := m.bounds()
	if f1 != f2 || l1 != l2 {
		m.fatalf("bounds: model [%d, %d], log [%d, %d]", f1, l1, f2, l2)
	}
}

func (m *modelRun) compare(what string, a, b error) {
	m.t.Helper()
	if errClass(a) != errClass(b) {
		m.fatalf("%s: model error %q, log error %q", what, errClass(a), errClass(b))
	}
}

func (m *modelRun) append(first, last uint64) {
	lo := max(first, 4) - 3
	start := lo + uint64(m.rng.IntN(int(last+1-lo)+1))
	if m.rng.IntN(3) == 0 {
		m.term++
	}
	n := 1 + m.rng.IntN(8)
	ents := make([]*pb.Entry, n)
	for k := range ents {
		e := mkEntry(start+uint64(k), m.term, m.data())
		switch m.rng.IntN(4) {
		case 0:
			e.Type = nil
		case 1:
			e.Type = pb.EntryConfChange.Enum()
		}
		ents[k] = e
	}
	m.compare("append", m.ms.Append(ents), m.l.Append(ents))
}

func (m *modelRun) setHardState(last uint64) {
	hs, _, _ := m.ms.InitialState()
	st := &pb.HardState{Term: new(hs.GetTerm()), Vote: new(hs.GetVote()), Commit: new(uint64(m.rng.IntN(int(last) + 1)))}
	switch m.rng.IntN(6) {
	case 0:
		st.Term = new(hs.GetTerm() + 1)
	case 1:
		st.Vote = new(uint64(m.rng.IntN(4)))
	case 2:
		st = proto.CloneOf(hs)
		if st == nil {
			st = &pb.HardState{}
		}
	}
	m.compare("set hard state", m.ms.SetHardState(st), m.l.SetHardState(st))
}

func (m *modelRun) confState() *pb.ConfState {
	if m.rng.IntN(3) == 0 {
		return nil
	}
	cs := &pb.ConfState{}
	for v := range uint64(1 + m.rng.IntN(3)) {
		cs.Voters = append(cs.Voters, v+1)
	}
	if m.rng.IntN(2) == 0 {
		cs.AutoLeave = new(m.rng.IntN(2) == 0)
	}
	return cs
}

func (m *modelRun) createSnapshot(dummy, last, snapIdx uint64) {
	i := m.pick(max(snapIdx, 1)-1, last)
	if i > snapIdx && i < dummy {
		return // MemoryStorage panics (index before its first entry)
	}
	cs, data := m.confState(), m.data()
	a, aerr := m.ms.CreateSnapshot(i, cs, data)
	b, berr := m.l.CreateSnapshot(i, cs, data)
	m.compare(fmt.Sprintf("create snapshot %d", i), aerr, berr)
	if aerr == nil && !proto.Equal(normSnap(a), normSnap(b)) {
		m.fatalf("create snapshot %d: model %v, log %v", i, a, b)
	}
}

func (m *modelRun) applySnapshot(last, snapIdx uint64) {
	idx := m.pick(max(snapIdx, 1)-1, max(last, snapIdx)+20)
	snap := &pb.Snapshot{Data: m.data(), Metadata: &pb.SnapshotMetadata{
		Index: new(idx), Term: new(m.term + uint64(m.rng.IntN(2))), ConfState: m.confState(),
	}}
	m.term = max(m.term, snap.GetMetadata().GetTerm())
	m.compare(fmt.Sprintf("apply snapshot %d", idx), m.ms.ApplySnapshot(proto.CloneOf(snap)), m.l.ApplySnapshot(snap))
}

func (m *modelRun) entries(dummy, last uint64) {
	lo := dummy + uint64(m.rng.IntN(int(last-dummy)+2))
	if lo > 0 && m.rng.IntN(5) == 0 {
		lo--
	}
	hi := lo
	if last+1 > lo {
		hi = lo + uint64(m.rng.IntN(int(last+1-lo)+1))
	}
	m.checkEntries(lo, hi, m.maxSize())
}

func (m *modelRun) maxSize() uint64 {
	switch m.rng.IntN(3) {
	case 0:
		return 0
	case 1:
		return uint64(m.rng.IntN(3000))
	}
	return math.MaxUint64
}

func (m *modelRun) checkEntries(lo, hi, maxSize uint64) {
	m.t.Helper()
	a, aerr := m.ms.Entries(lo, hi, maxSize)
	b, berr := m.l.Entries(lo, hi, maxSize)
	what := fmt.Sprintf("entries(%d, %d, %d)", lo, hi, maxSize)
	m.compare(what, aerr, berr)
	if !equalEntries(a, b) {
		m.fatalf("%s: model %d entries, log %d entries (or contents differ)", what, len(a), len(b))
	}
}

// compareAll compares every observable part of the two storages.
func (m *modelRun) compareAll() {
	m.t.Helper()
	first, last, _ := m.bounds()
	ahs, acs, _ := m.ms.InitialState()
	bhs, bcs, err := m.l.InitialState()
	if err != nil {
		m.fatalf("initial state: %v", err)
	}
	// The log reports a commit index of at least its compaction point
	// (raft refuses less); the memory storage reports what it was given.
	if !raft.IsEmptyHardState(ahs) && ahs.GetCommit() < first-1 {
		ahs = proto.CloneOf(ahs)
		ahs.Commit = proto.Uint64(first - 1)
	}
	if !equalHardState(ahs, bhs) || !proto.Equal(pb.EnsureConfState(proto.CloneOf(acs)), bcs) {
		m.fatalf("initial state: model %v %v, log %v %v", ahs, acs, bhs, bcs)
	}
	as, _ := m.ms.Snapshot()
	bs, err := m.l.Snapshot()
	if err != nil || !proto.Equal(normSnap(as), normSnap(bs)) {
		m.fatalf("snapshot: model %v, log %v (%v)", as, bs, err)
	}
	for i := max(first, 2) - 2; i <= last+1; i++ {
		a, aerr := m.ms.Term(i)
		b, berr := m.l.Term(i)
		m.compare(fmt.Sprintf("term(%d)", i), aerr, berr)
		if a != b {
			m.fatalf("term(%d): model %d, log %d", i, a, b)
		}
	}
	m.checkEntries(first, last+1, math.MaxUint64)
	m.checkEntries(first, last+1, 0)
	m.checkEntries(first, last+1, 500)
	if last > first {
		mid := first + (last-first)/2
		m.checkEntries(mid, last+1, 2000)
	}
}

func (m *modelRun) reopen() {
	if err := m.l.Close(); err != nil {
		m.fatalf("close: %v", err)
	}
	m.l = openT(m.t, m.dir, m.opts)
	m.compareAll()
}
