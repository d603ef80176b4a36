package replicated

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// TestPurgeRecordForms: the record keeps index and identity; the older
// 12-byte form (index only) still reads, as identity 0; a damaged record
// is an error.
func TestPurgeRecordForms(t *testing.T) {
	dir := t.TempDir()
	if r, err := readPurgeRecord(dir); err != nil || r != (purgeRecord{}) {
		t.Fatalf("no record: %+v, %v", r, err)
	}
	if err := writePurgeRecord(dir, purgeRecord{index: 41, id: 9}); err != nil {
		t.Fatal(err)
	}
	if r, err := readPurgeRecord(dir); err != nil || r != (purgeRecord{index: 41, id: 9}) {
		t.Fatalf("record: %+v, %v", r, err)
	}
	legacy := binary.LittleEndian.AppendUint64(nil, 17)
	legacy = binary.LittleEndian.AppendUint32(legacy, crc32.Checksum(legacy, purgeCRC))
	path := filepath.Join(dir, purgeFileName)
	if err := os.WriteFile(path, legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := readPurgeRecord(dir); err != nil || r != (purgeRecord{index: 17}) {
		t.Fatalf("legacy record: %+v, %v", r, err)
	}
	legacy[3] ^= 1
	if err := os.WriteFile(path, legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPurgeRecord(dir); err == nil {
		t.Fatal("a damaged record read")
	}
}

// TestAdoptPurgeFromSnapshot: a purge identity learnt from a restored
// partition snapshot is kept and persisted (the purge is no longer
// wanted, and a restart reads it back); a lower one changes nothing.
func TestAdoptPurgeFromSnapshot(t *testing.T) {
	rep := bareReplica(t)
	p := rep.set
	if err := p.adoptPurge(rep, 6); err != nil {
		t.Fatal(err)
	}
	if err := p.adoptPurge(rep, 2); err != nil {
		t.Fatal(err)
	}
	rep.want(6) // the metadata names it: nothing to do
	if p.pending(rep) || rep.purgeID.Load() != 6 {
		t.Fatalf("after adopting purge 6: pending %v, identity %d", p.pending(rep), rep.purgeID.Load())
	}
	r, err := readPurgeRecord(rep.part.Dir)
	if err != nil || r.id != 6 {
		t.Fatalf("purge record %+v, %v; want identity 6", r, err)
	}
}

// TestInterruptedPurgeCompleted: the process died after a purge emptied
// the partition but before the purge was recorded: the group's start
// records it instead of finding the segments behind the raft log; entries
// before the purge read back as entries without effect.
func TestInterruptedPurgeCompleted(t *testing.T) {
	f := newSegFixture(t)
	purge := (&entry{kind: entryPurge, purgeID: 4}).encode()
	f.append(raftEntry(1, 1, stampedSend(t, 0, 5)), raftEntry(2, 1, purge))
	if err := f.part.Purge(); err != nil { // the purge ran; its record was not written
		t.Fatal(err)
	}
	f.close()
	part, inner := f.reopenRaw(t)
	defer part.Close()
	defer inner.Close()
	s := New(hostless{}, Options{Logger: quiet()})
	s.ops.close()
	rep := &Replica{set: s, part: &Partition{Dir: f.dir, Log: part}}
	if err := s.completeInterruptedPurge(rep, inner); err != nil {
		t.Fatal(err)
	}
	if rep.purgedAt != 2 || rep.purgeID.Load() != 4 {
		t.Fatalf("purge at %d, identity %d; want the interrupted purge at 2 (4) recorded", rep.purgedAt, rep.purgeID.Load())
	}
	if r, err := readPurgeRecord(f.dir); err != nil || r != (purgeRecord{index: 2, id: 4}) {
		t.Fatalf("purge record %+v, %v", r, err)
	}
	seg, err := openSegLog(inner, part, rep.purgedAt)
	if err != nil {
		t.Fatal(err)
	}
	got, err := seg.Entries(1, 3, ^uint64(0))
	if err != nil {
		t.Fatal(err)
	}
	if e, err := decodeEntry(got[0].GetData()); err != nil || e.kind != entryPurged || got[0].GetTerm() != 1 {
		t.Fatalf("a batch before an executed purge reads back as %+v (%v)", e, err)
	}
	if err := seg.Append([]*raftpb.Entry{raftEntry(3, 1, stampedSend(t, 0, 2))}); err != nil {
		t.Fatal(err)
	}
	if next, _ := part.Tail(); next != 2 {
		t.Fatalf("tail %d after the first batch past the purge", next)
	}
	// Nothing to complete when the partition holds what the log says.
	rep2 := &Replica{set: s, part: &Partition{Dir: t.TempDir(), Log: part}}
	if err := s.completeInterruptedPurge(rep2, inner); err != nil || rep2.purgedAt != 0 {
		t.Fatalf("a partition that was not purged: purge at %d, %v", rep2.purgedAt, err)
	}
}
