package replicated

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

func raftEntry(index, term uint64, data []byte) *raftpb.Entry {
	return &raftpb.Entry{Index: new(index), Term: new(term), Type: raftpb.EntryNormal.Enum(), Data: data}
}

// sendEntry is an encoded send entry already stamped at base.
func sendEntry(t *testing.T, base uint64, n int) []byte {
	t.Helper()
	e := entry{kind: entrySend, count: uint32(n), base: base, ts: 100, rec: testutil.Batch(t, n)}
	return e.encode()
}

func TestEntryRoundTrip(t *testing.T) {
	key := commit.Key{Client: wire.Uint128{Lo: 1, Hi: 2}, Request: 3, Hash: 4}
	rec := testutil.Batch(t, 2)
	for _, in := range []entry{
		{kind: entrySend, windowed: true, origin: 7, nonce: 8, key: key, count: 2, base: 9, ts: 10, rec: rec},
		{kind: entryOffsetStore, windowed: true, origin: 1, nonce: 2, key: key, consumer: 2, id: 5, offset: 6},
		{kind: entryOffsetAdvance, consumer: 1, id: 5, offset: 6},
		{kind: entryOffsetDelete, consumer: 1, id: 5},
		{kind: entryPurge, origin: 3, purgeID: 11},
	} {
		out, err := decodeEntry(in.encode())
		if err != nil {
			t.Fatalf("kind %d: %v", in.kind, err)
		}
		if out.kind != in.kind || out.windowed != in.windowed || out.origin != in.origin || out.nonce != in.nonce ||
			out.key != in.key || out.count != in.count || out.base != in.base || out.ts != in.ts ||
			!bytes.Equal(out.rec, in.rec) || out.consumer != in.consumer || out.id != in.id || out.offset != in.offset ||
			out.purgeID != in.purgeID {
			t.Fatalf("round trip %+v -> %+v", in, out)
		}
	}
	// A purge entry from before identities (the header alone) is identity 0.
	legacy := (&entry{kind: entryPurge, origin: 3, purgeID: 11}).encode()[:entryCommonLen]
	if out, err := decodeEntry(legacy); err != nil || out.kind != entryPurge || out.purgeID != 0 {
		t.Fatalf("legacy purge entry: %+v, %v", out, err)
	}
	if _, err := decodeEntry(append(legacy, 1)); !errors.Is(err, errBadEntry) {
		t.Fatalf("purge entry of %d bytes: %v", entryCommonLen+1, err)
	}
	for _, bad := range [][]byte{nil, make([]byte, entryCommonLen), append([]byte{entrySend, entryVersion}, make([]byte, entrySendLen)...)} {
		if _, err := decodeEntry(bad); !errors.Is(err, errBadEntry) {
			t.Fatalf("%d bytes decode: %v", len(bad), err)
		}
	}
}

// TestStampLogTail: the initial tail, stamping in log order without an
// Append in between, a conflicting append that drops batches, a purge and
// a snapshot.
func TestStampLogTail(t *testing.T) {
	stored := func() (uint64, uint64) { return 4, 50 }
	clock := func() time.Time { return time.UnixMicro(1000) }

	empty, err := newTestStamp(replication.NewMemoryLog(), 3, clock, stored)
	if err != nil {
		t.Fatal(err)
	}
	if tail, ts := empty.Tail(); tail != 4 || ts != 50 {
		t.Fatalf("empty log: tail %d ts %d", tail, ts)
	}

	st := replication.NewMemoryLog()
	if err := st.Append([]*raftpb.Entry{raftEntry(1, 1, sendEntry(t, 4, 3)), raftEntry(2, 1, sendEntry(t, 7, 2)), raftEntry(3, 1, nil)}); err != nil {
		t.Fatal(err)
	}
	s, err := newTestStamp(st, 3, clock, stored)
	if err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 9 {
		t.Fatalf("tail %d, want 9 (end of the last batch)", tail)
	}

	// Two proposals prepared before any Append: the second follows the first.
	var datas [][]byte
	for range 2 {
		data := (&entry{kind: entrySend, count: 2, rec: testutil.Batch(t, 2)}).encode()
		accepted, err := s.prepare(data)
		if err != nil {
			t.Fatal(err)
		}
		accepted()
		datas = append(datas, data)
	}
	for i, data := range datas {
		e, err := decodeEntry(data)
		if err != nil {
			t.Fatal(err)
		}
		v, err := wire.ValidateBatch(e.rec)
		if err != nil {
			t.Fatalf("stamped batch %d does not validate: %v", i, err)
		}
		want := uint64(9 + 2*i)
		if e.base != want || v.BaseOffset() != want || v.PartitionID() != 3 || e.ts != 1000 || v.BaseTimestamp() != 1000 {
			t.Fatalf("batch %d: header base %d ts %d, batch base %d partition %d ts %d", i, e.base, e.ts, v.BaseOffset(), v.PartitionID(), v.BaseTimestamp())
		}
	}
	if tail, _ := s.Tail(); tail != 13 {
		t.Fatalf("tail %d after two stamps", tail)
	}
	// A refused proposal (accepted not called) leaves the tail alone.
	if _, err := s.prepare((&entry{kind: entrySend, count: 1, rec: testutil.Batch(t, 1)}).encode()); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 13 {
		t.Fatalf("tail %d after a refused proposal", tail)
	}

	// A new leader's log replaces index 2 onwards with an empty entry:
	// the tail falls back to the end of the batch at index 1.
	if err := s.Append([]*raftpb.Entry{raftEntry(2, 2, nil)}); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 7 {
		t.Fatalf("tail %d after a conflicting append, want 7", tail)
	}
	// An append without a batch and without conflict changes nothing.
	if err := s.Append([]*raftpb.Entry{raftEntry(3, 2, (&entry{kind: entryOffsetStore}).encode())}); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 7 {
		t.Fatalf("tail %d after an offset entry", tail)
	}
	if err := s.Append([]*raftpb.Entry{raftEntry(4, 2, (&entry{kind: entryPurge}).encode())}); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 0 {
		t.Fatalf("tail %d after a purge entry", tail)
	}
	// A conflict that removes every batch falls back to the partition.
	if err := s.Append([]*raftpb.Entry{raftEntry(1, 3, nil)}); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 4 {
		t.Fatalf("tail %d when the log holds no batch, want the partition's 4", tail)
	}
	accepted, err := s.prepare((&entry{kind: entrySend, count: 5, rec: testutil.Batch(t, 5)}).encode())
	if err != nil {
		t.Fatal(err)
	}
	accepted()
	if accepted, err = s.prepare((&entry{kind: entryPurge}).encode()); err != nil {
		t.Fatal(err)
	}
	accepted()
	if tail, _ := s.Tail(); tail != 0 {
		t.Fatalf("tail %d after a prepared purge", tail)
	}
	snap := &raftpb.Snapshot{Data: partSnapshot{next: 77, ts: 5}.encode(),
		Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(20)), Term: new(uint64(3)), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}}
	if err := s.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 77 {
		t.Fatalf("tail %d after a snapshot", tail)
	}
}

// TestStampLogInitialPurge: a log ending with a purge starts at 0, and a
// batch ending below the partition's next offset yields that offset.
func TestStampLogInitialPurge(t *testing.T) {
	clock := time.Now
	st := replication.NewMemoryLog()
	if err := st.Append([]*raftpb.Entry{raftEntry(1, 1, sendEntry(t, 0, 3)), raftEntry(2, 1, (&entry{kind: entryPurge}).encode())}); err != nil {
		t.Fatal(err)
	}
	s, err := newTestStamp(st, 0, clock, func() (uint64, uint64) { return 3, 0 })
	if err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 0 {
		t.Fatalf("tail %d after a purge at the end of the log", tail)
	}
	st = replication.NewMemoryLog()
	if err := st.Append([]*raftpb.Entry{raftEntry(1, 1, sendEntry(t, 0, 3))}); err != nil {
		t.Fatal(err)
	}
	if s, err = newTestStamp(st, 0, clock, func() (uint64, uint64) { return 8, 0 }); err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 8 {
		t.Fatalf("tail %d, want the partition's 8", tail)
	}
}

func TestProposeCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		code uint32
	}{
		{&replication.NotLeaderError{Group: 1}, wire.ErrTransientNotAccepted.Code},
		{replication.ErrProposalDropped, wire.ErrTransientNotAccepted.Code},
		{replication.ErrProposalLost, wire.ErrTransientNotAccepted.Code},
		{context.DeadlineExceeded, wire.ErrTransientNotAccepted.Code},
		{errors.Join(replication.ErrOutcomeUnknown, context.DeadlineExceeded), wire.ErrTransientNotCommitted.Code},
		{errBadEntry, wire.ErrCannotAppendMessage.Code},
		{fmt.Errorf("propose: %w", errInFlight), wire.ErrTransientNotCommitted.Code},
		{fmt.Errorf("propose: %w", errReplaying), wire.ErrTransientNotAccepted.Code},
		{fmt.Errorf("propose: %w", errPurgePending), wire.ErrTransientNotAccepted.Code},
		{replication.ErrStopped, wire.ErrTransientNotAccepted.Code},
		{fmt.Errorf("%w: %w", replication.ErrOutcomeUnknown, replication.ErrStopped), wire.ErrTransientNotCommitted.Code},
	} {
		if got := proposeCode(c.err); got != c.code {
			t.Fatalf("%v: %d, want %d", c.err, got, c.code)
		}
	}
}

// TestSnapshotRestore: a snapshot is the partition's revealed position
// and its consumer offsets; restoring one the replica is not at drops its
// segments and restarts it there with the snapshot's offsets.
func TestSnapshotRestore(t *testing.T) {
	rep := bareReplica(t)
	part := rep.part
	appendBatch(t, rep, 5)
	appendBatch(t, rep, 3) // not revealed: not in a snapshot
	part.Log.Reveal(5)
	if err := part.Log.Offsets().Store(storage.KindConsumer, 7, 2); err != nil {
		t.Fatal(err)
	}
	data, err := rep.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSnapshot(data)
	if err != nil || s.next != 5 || len(s.offsets) != 1 || s.offsets[0] != (storage.OffsetEntry{Kind: storage.KindConsumer, ID: 7, Offset: 2}) {
		t.Fatalf("snapshot %+v %v", s, err)
	}
	if err := rep.Restore(10, data); err != nil {
		t.Fatalf("restore of what is held: %v", err)
	}
	if next, _ := part.Log.Tail(); next != 5 {
		t.Fatalf("restore kept unrevealed records: tail %d, want 5", next)
	}
	ahead := partSnapshot{next: 40, ts: 9, offsets: []storage.OffsetEntry{{Kind: storage.KindGroup, ID: 1, Offset: 30}}}.encode()
	if err := rep.Restore(20, ahead); err != nil {
		t.Fatalf("restore of a snapshot ahead: %v", err)
	}
	if first, next := part.Log.Bounds(); first != 40 || next != 40 {
		t.Fatalf("after a restore ahead the partition spans %d..%d, want empty at 40", first, next)
	}
	if _, ok := part.Log.Offsets().Get(storage.KindConsumer, 7); ok {
		t.Fatal("an offset absent from the snapshot survived the restore")
	}
	if off, ok := part.Log.Offsets().Get(storage.KindGroup, 1); !ok || off != 30 {
		t.Fatalf("group offset after restore: %d %v", off, ok)
	}
	if _, err := decodeSnapshot(data[:len(data)-1]); err == nil {
		t.Fatal("a truncated snapshot decoded")
	}
}

func TestGroupID(t *testing.T) {
	ref := testRef
	if g := GroupID(ref, 3); g != replication.GroupID(5<<24|3) || g == replication.MetadataGroup {
		t.Fatalf("group id %d", g)
	}
	ref.Incarnation = 6
	if GroupID(ref, 3) == GroupID(testRef, 3) {
		t.Fatal("incarnations share a group")
	}
}

// TestStampLogInflight: a request in flight in the log is refused with
// errInFlight until it applies or is truncated away; a committed one with
// errDuplicate; nothing is admitted before the start-up replay is done.
func TestStampLogInflight(t *testing.T) {
	k := func(n uint64) commit.Key { return commit.Key{Client: wire.Uint128{Lo: 1}, Request: n, Hash: n} }
	windowed := func(key commit.Key) []byte {
		return (&entry{kind: entryOffsetStore, windowed: true, key: key}).encode()
	}
	st := replication.NewMemoryLog()
	if err := st.Append([]*raftpb.Entry{raftEntry(1, 1, windowed(k(1))), raftEntry(2, 1, nil), raftEntry(3, 1, windowed(k(3)))}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHardState(&raftpb.HardState{Term: new(uint64(1)), Commit: new(uint64(2))}); err != nil {
		t.Fatal(err)
	}
	s, err := newTestStamp(st, 0, time.Now, func() (uint64, uint64) { return 0, 0 }, k(9))
	if err != nil {
		t.Fatal(err)
	}
	// Entry 1 is the last committed data entry: until it applies again,
	// proposals wait for the replay.
	if _, err := s.prepare(windowed(k(5))); !errors.Is(err, errReplaying) {
		t.Fatalf("during replay: %v", err)
	}
	s.applied(1, windowed(k(1)))
	// Entry 3 (uncommitted at start) is in flight; entry 1 is not.
	if _, err := s.prepare(windowed(k(3))); !errors.Is(err, errInFlight) {
		t.Fatalf("uncommitted entry at start: %v", err)
	}
	if _, err := s.prepare(windowed(k(9))); !errors.Is(err, errDuplicate) {
		t.Fatalf("committed request: %v", err)
	}
	accepted, err := s.prepare(windowed(k(1)))
	if err != nil {
		t.Fatal(err)
	}
	accepted()
	if _, err := s.prepare(windowed(k(1))); !errors.Is(err, errInFlight) {
		t.Fatalf("accepted, not appended: %v", err)
	}
	if err := s.Append([]*raftpb.Entry{raftEntry(4, 1, windowed(k(1)))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.prepare(windowed(k(1))); !errors.Is(err, errInFlight) {
		t.Fatalf("appended, not applied: %v", err)
	}
	s.applied(4, windowed(k(1)))
	if _, err := s.prepare(windowed(k(1))); err != nil {
		t.Fatalf("after its apply: %v", err)
	}
	// A new leader's log replaces index 3 onwards: entry 3's request is gone.
	if err := s.Append([]*raftpb.Entry{raftEntry(3, 2, nil)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.prepare(windowed(k(3))); err != nil {
		t.Fatalf("after its entry was replaced: %v", err)
	}
	// Entries without a window key are never refused as in flight.
	if _, err := s.prepare((&entry{kind: entryOffsetAdvance}).encode()); err != nil {
		t.Fatal(err)
	}
}

// TestStampLogPurgeIdentity: prepare refuses a purge identity that is in
// the log unapplied, accepted, or applied; once a conflicting append
// replaced the entry holding it, it may be proposed again.
func TestStampLogPurgeIdentity(t *testing.T) {
	s, err := newTestStamp(replication.NewMemoryLog(), 0, time.Now, func() (uint64, uint64) { return 0, 0 })
	if err != nil {
		t.Fatal(err)
	}
	s.rep.purgeID.Store(3)
	purge := func(id uint64) []byte { return (&entry{kind: entryPurge, purgeID: id}).encode() }
	if _, err := s.prepare(purge(3)); !errors.Is(err, ErrPurgeKnown) {
		t.Fatalf("applied identity 3: %v", err)
	}
	if err := s.Append([]*raftpb.Entry{raftEntry(1, 1, nil), raftEntry(2, 1, purge(5))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.prepare(purge(5)); !errors.Is(err, ErrPurgeKnown) {
		t.Fatalf("identity 5 in the log: %v", err)
	}
	// A new leader's log replaces index 2: identity 5 is gone from it.
	if err := s.Append([]*raftpb.Entry{raftEntry(2, 2, nil)}); err != nil {
		t.Fatal(err)
	}
	accepted, err := s.prepare(purge(5))
	if err != nil {
		t.Fatalf("identity 5 after its entry was replaced: %v", err)
	}
	accepted()
	if _, err := s.prepare(purge(5)); !errors.Is(err, ErrPurgeKnown) {
		t.Fatalf("identity 5 accepted: %v", err)
	}
	if _, err := s.prepare(purge(0)); err != nil {
		t.Fatalf("a purge without identity: %v", err)
	}
}
