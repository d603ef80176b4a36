package replicated

import (
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// TestSegLogOrphanAfterCompaction: with the log compacted past every
// batch, a record whose header never reached the raft log (a crash
// between the two writes) is cut at open, by the snapshot's position.
func TestSegLogOrphanAfterCompaction(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)))
	if err := f.inner.SetHardState(&raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(1)}); err != nil {
		t.Fatal(err)
	}
	f.part.Reveal(5)
	if _, err := f.inner.CreateSnapshot(1, &raftpb.ConfState{Voters: []uint64{1}}, partSnapshot{next: 5}.encode()); err != nil {
		t.Fatal(err)
	}
	if err := f.inner.Compact(1); err != nil {
		t.Fatal(err)
	}
	// Entry 2's batch reaches the segment; the process dies before the header.
	rec := stampedSend(t, 5, 3)[entrySendLen:]
	if _, err := f.part.AppendStamped(rec, 3, 5, 105); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	if got := f.tail(); got != 5 {
		t.Errorf("segment tail %d after reopen, want 5 (orphan record beyond the raft log not cut)", got)
	}
	// raft now re-sends entry 2 (base 5): Append fails.
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(2, 1, stampedSend(t, 5, 3))}); err != nil {
		t.Errorf("re-sent entry 2 cannot be stored: %v", err)
	}
}

// TestSegLogCrashBetweenSnapshotAndRestore: a crash after a received
// snapshot was persisted but before the partition was reset to it: the
// open restores it.
func TestSegLogCrashBetweenSnapshotAndRestore(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)))
	snap := &raftpb.Snapshot{Data: partSnapshot{next: 1000, ts: 1}.encode(),
		Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(50), Term: proto.Uint64(3), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}}
	if err := f.seg.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	// crash here (RestoreReplicated -> ResetTo not run)
	f.reopen()
	s, err := newTestStamp(f.seg, 0, time.Now, f.part.Tail)
	if err != nil {
		t.Fatal(err)
	}
	if tail, _ := s.Tail(); tail != 1000 {
		t.Errorf("stamp tail after reopen %d, want the snapshot's 1000", tail)
	}
	if got := f.tail(); got != 1000 {
		t.Errorf("partition tail after reopen %d, want the snapshot's 1000", got)
	}
	if err := f.seg.Append([]*raftpb.Entry{raftEntry(51, 3, stampedSend(t, 1000, 2))}); err != nil {
		t.Errorf("entry after the snapshot cannot be stored: %v", err)
	}
}

// TestStampLogSnapshotClearsPurging: a snapshot that replaces an
// unapplied purge leaves no pending purge behind (a leader would refuse
// every batch).
func TestStampLogSnapshotClearsPurging(t *testing.T) {
	st := replication.NewMemoryLog()
	s, err := newTestStamp(st, 0, time.Now, func() (uint64, uint64) { return 0, 0 })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append([]*raftpb.Entry{raftEntry(1, 1, (&entry{kind: entryPurge}).encode())}); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{Data: partSnapshot{next: 10}.encode(),
		Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(20), Term: proto.Uint64(2), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}}
	if err := s.ApplySnapshot(snap); err != nil {
		t.Fatal(err)
	}
	data := (&entry{kind: entrySend, count: 2, rec: testutil.Batch(t, 2)}).encode()
	if _, err := s.prepare(data); err != nil {
		t.Errorf("prepare after a snapshot replaced the purge: %v", err)
	}
}

// TestSegLogCrashAfterSuffixCut: raft replaces an uncommitted suffix and
// the process dies after the segment was cut, before the raft log got the
// new entries: the open drops the headers left without records.
func TestSegLogCrashAfterSuffixCut(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, stampedSend(t, 5, 3)), raftEntry(3, 1, stampedSend(t, 8, 2)))
	if err := f.inner.SetHardState(&raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(1)}); err != nil {
		t.Fatal(err)
	}
	f.part.Reveal(5)
	// segLog.Append(entry 2, term 2) begins: truncate cuts the segment at 5 ...
	if err := f.part.TruncateFrom(5); err != nil {
		t.Fatal(err)
	}
	// ... and the new record for offset 5 is written, then the process dies.
	if _, err := f.part.AppendStamped(stampedSend(t, 5, 4)[entrySendLen:], 4, 5, 105); err != nil {
		t.Fatal(err)
	}
	f.close()
	part, inner := f.reopenRaw(t)
	defer part.Close()
	defer inner.Close()
	_, err := openSegLog(inner, part, 0)
	if err != nil {
		t.Errorf("reopen after a crash in the middle of a suffix replacement: %v", err)
	}
}

func (f *segFixture) reopenRaw(t *testing.T) (*storage.Partition, *raftlog.Log) {
	part, err := storage.Open(f.dir+"/part", storage.Options{Format: commit.BatchFormat{}, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := raftlog.Open(f.dir+"/raft", raftlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return part, inner
}

// TestSegLogPurgeAppliedOnce: once a purge has applied (and its record
// was written), the next batch goes to the segment at offset 0 and nothing
// touches the consumer offsets stored since.
func TestSegLogPurgeAppliedOnce(t *testing.T) {
	f := newSegFixture(t)
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, (&entry{kind: entryPurge}).encode()))
	// Entry 2 commits and applies: applyPurge purges and records index 2.
	f.applyPurge(2)
	// A consumer offset is stored after the purge (entry 3, applied).
	f.append(raftEntry(3, 1, (&entry{kind: entryOffsetStore, consumer: storage.KindConsumer, id: 1, offset: 0}).encode()))
	f.seg.applied(3)
	if err := f.part.Offsets().Store(storage.KindConsumer, 1, 0); err != nil {
		t.Fatal(err)
	}
	f.append(raftEntry(4, 1, stampedSend(t, 0, 2)))
	if f.tail() != 2 {
		t.Errorf("tail %d: the batch after the applied purge was not stored", f.tail())
	}
	if _, ok := f.part.Offsets().Get(storage.KindConsumer, 1); !ok {
		t.Errorf("consumer offset stored after the purge was wiped")
	}
}
