package storage

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// checkReadRecord reads every record of recs with ReadRecord, appending to a
// non-empty prefix, and compares bytes and counts.
func checkReadRecord(t *testing.T, p *Partition, recs []appended) {
	t.Helper()
	prefix := []byte("prefix")
	for i, r := range recs {
		got, count, err := p.ReadRecord(bytes.Clone(prefix), r.base)
		if err != nil {
			t.Fatalf("record %d at %d: %v", i, r.base, err)
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], r.rec) || count != r.count {
			t.Fatalf("record %d at %d: %d bytes, count %d; want %d bytes, count %d", i, r.base, len(got)-len(prefix), count, len(r.rec), r.count)
		}
	}
}

// checkNoRecord asserts ReadRecord fails with ErrNoRecord at off and leaves
// dst as it was.
func checkNoRecord(t *testing.T, p *Partition, off uint64, what string) {
	t.Helper()
	dst := []byte("keep")
	got, _, err := p.ReadRecord(dst, off)
	if !errors.Is(err, ErrNoRecord) || string(got) != "keep" {
		t.Fatalf("%s: read record %d: %q %v, want ErrNoRecord", what, off, got, err)
	}
}

// TestReadRecord: records are read by exact base offset from sealed and
// active segments, revealed or not; other offsets fail with ErrNoRecord.
func TestReadRecord(t *testing.T) {
	for _, held := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "held"}[held]
		t.Run(name, func(t *testing.T) {
			allPermutations(t, func(t *testing.T, opts Options) {
				opts.Held = held
				opts.SegmentBytes = 700
				dir := t.TempDir()
				p := mustOpen(t, dir, opts)
				var recs []appended
				for range 5 {
					recs = append(recs, appendHeld(t, p, 8, len(recs))...)
					p.Reveal(endOf(recs))
				}
				revealed := len(recs)
				recs = append(recs, appendHeld(t, p, 4, 77)...)
				if len(sealedSegmentsOf(p)) < 3 {
					t.Fatalf("%d sealed segments", len(sealedSegmentsOf(p)))
				}
				if held && visibleEnd(p) != endOf(recs[:revealed]) {
					t.Fatalf("revealed end %d", visibleEnd(p))
				}
				checkReadRecord(t, p, recs)
				tail := endOf(recs)
				for _, r := range recs {
					if r.count > 1 {
						checkNoRecord(t, p, r.base+1, "inside a record")
					}
				}
				checkNoRecord(t, p, tail, "at the tail")
				checkNoRecord(t, p, tail+10, "beyond the tail")
				mustClose(t, p)

				// Reopened (held: nothing revealed) every record still reads.
				p = mustOpen(t, dir, opts)
				defer mustClose(t, p)
				checkReadRecord(t, p, recs)
				// Records of removed segments are gone.
				oldest := sealedSegmentsOf(p)[0]
				// Held: retention keeps segments holding unrevealed records.
				p.Reveal(oldest.sealedEnd)
				rm, err := p.DeleteOldestSegments(1)
				must(t, err)
				if rm.Segments != 1 {
					t.Fatalf("removed %+v", rm)
				}
				checkNoRecord(t, p, recs[0].base, "removed by retention")
				checkNoRecord(t, p, oldest.sealedEnd-1, "removed by retention, last offset")
				kept := recs[len(revealedPrefix(recs, oldest.sealedEnd)):]
				if len(kept) == len(recs) || kept[0].base != oldest.sealedEnd {
					t.Fatalf("segment boundary %d is not a record boundary of the test", oldest.sealedEnd)
				}
				checkReadRecord(t, p, kept)
				if held {
					last := recs[len(recs)-1]
					must(t, p.TruncateFrom(last.base))
					checkNoRecord(t, p, last.base, "truncated")
					checkReadRecord(t, p, kept[:len(kept)-1])
				}
				must(t, p.Purge())
				checkNoRecord(t, p, recs[10].base, "purged")
				checkNoRecord(t, p, 0, "purged, offset 0")
			})
		})
	}
}

// TestReadRecordPinned: a record read from a segment removed meanwhile is
// still served from the open file until the list changes, and afterwards
// reported as gone.
func TestReadRecordPinned(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, SegmentBytes: 300, FlushInterval: -1}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	recs := appendHeld(t, p, 6, 1)
	p.Reveal(endOf(recs))
	seg := sealedSegmentsOf(p)[0]
	seg.acquire() // a reader in the middle of a read
	_, err := p.DeleteOldestSegments(1)
	must(t, err)
	if _, err := os.Stat(seg.logPath); !os.IsNotExist(err) {
		t.Fatalf("log still on disk: %v", err)
	}
	// The pinned file still reads; the partition no longer lists it.
	buf := make([]byte, len(recs[0].rec))
	if _, err := seg.log.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, recs[0].rec) {
		t.Fatalf("pinned read: %v", err)
	}
	seg.release()
	checkNoRecord(t, p, recs[0].base, "removed")
}

// TestReadRecordNoAllocs pins that ReadRecord allocates nothing beyond
// growing dst, on the lock-free and on the locked (unrevealed) path.
func TestReadRecordNoAllocs(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, Held: true, FlushInterval: -1})
	defer mustClose(t, p)
	recs := appendHeld(t, p, 20, 1)
	p.Reveal(recs[10].base)
	dst := make([]byte, 0, 4096)
	for _, r := range []appended{recs[3], recs[15]} {
		if a := testing.AllocsPerRun(200, func() {
			if _, _, err := p.ReadRecord(dst[:0], r.base); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("read record %d allocates %v", r.base, a)
		}
	}
}
