package replicated

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
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
