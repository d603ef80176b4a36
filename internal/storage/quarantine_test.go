package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// locateRecord returns the segment log holding recs[k] and the record's
// position in it.
func locateRecord(t testing.TB, dir string, rec appended) (string, int64) {
	t.Helper()
	for _, l := range segmentLogs(t, dir) {
		for _, e := range recordsIn(t, l) {
			if e.off == rec.base {
				return l, e.pos
			}
		}
	}
	t.Fatalf("record %d not found", rec.base)
	return "", 0
}

// checkDamage asserts that the quarantine is exactly the records at the
// given indexes of recs, one range each.
func checkDamage(t testing.TB, p *Partition, recs []appended, idx ...int) {
	t.Helper()
	got := p.Damaged()
	if len(got) != len(idx) {
		t.Fatalf("damaged %+v, want %d ranges", got, len(idx))
	}
	for i, k := range idx {
		d := got[i]
		if d.First != recs[k].base || d.Last != recs[k].base+uint64(recs[k].count)-1 || d.Len != int64(len(recs[k].rec)) || d.Path == "" || d.Reason == "" {
			t.Fatalf("damage %d = %+v, want offsets %d..%d, %d bytes", i, d, recs[k].base, recs[k].base+uint64(recs[k].count)-1, len(recs[k].rec))
		}
	}
}

// TestQuarantineFlip flips one byte of record k of N (in a sealed segment,
// in the active one, or in an index file), reopens and checks that every
// other record reads back exact and that exactly the damaged offsets are
// reported, also after another reopen.
func TestQuarantineFlip(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500}
	dir, recs := buildLog(t, opts, 80)
	// Grow the active segment past the roll size of the sealed ones.
	opts.SegmentBytes = 1 << 20
	p := mustOpen(t, dir, opts)
	recs = append(recs, appendN(t, p, 12, 99)...)
	mustClose(t, p)
	logs := segmentLogs(t, dir)
	active := recordsIn(t, logs[len(logs)-1])
	nSealed := len(recs) - len(active)
	rng := rand.New(rand.NewPCG(1, 2))
	type tc struct {
		name    string
		k       int   // record damaged
		at      int64 // byte of the record flipped (-1: none)
		index   bool  // flip the record's index entry instead
		verify  bool  // Options.VerifySealed
		damaged bool
	}
	var cases []tc
	for i := range 6 {
		k := rng.IntN(nSealed)
		cases = append(cases, tc{name: fmt.Sprintf("sealed-%d-payload", k), k: k, at: 40 + int64(i), verify: true, damaged: true})
		k = nSealed + rng.IntN(len(active)-1) // not the last: that is a torn tail
		cases = append(cases, tc{name: fmt.Sprintf("active-%d-payload", k), k: k, at: 33 + int64(i), damaged: true})
		cases = append(cases, tc{name: fmt.Sprintf("active-%d-length", k), k: k, at: 17, damaged: true})
		cases = append(cases, tc{name: fmt.Sprintf("active-%d-checksum", k), k: k, at: 25, damaged: true})
	}
	cases = append(cases,
		tc{name: "sealed-first", k: 0, at: 40, verify: true, damaged: true},
		tc{name: "sealed-last-unverified", k: nSealed - 1, at: 40, damaged: true},
		tc{name: "sealed-index", k: 5, index: true},
		tc{name: "active-index", k: nSealed + 2, index: true},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := copyDir(t, dir)
			log, pos := locateRecord(t, d, recs[c.k])
			log = filepath.Join(d, filepath.Base(log))
			if c.index {
				// The position field of the record's entry.
				i := 0
				for _, e := range recordsIn(t, log) {
					if e.off == recs[c.k].base {
						break
					}
					i++
				}
				flipByte(t, indexOf(log), int64(i)*IndexEntryBytes+17)
			} else {
				flipByte(t, log, pos+c.at)
			}
			o := opts
			o.VerifySealed = c.verify
			want := recs
			for round := range 2 {
				p := mustOpen(t, d, o)
				if c.damaged {
					want = without(recs, c.k)
					checkDamage(t, p, recs, c.k)
					// A lookup by the damaged record's timestamp answers
					// the next record.
					if off, ok, err := p.OffsetForTimestamp(recs[c.k].ts); err != nil || (ok && off != firstAfter(recs, c.k)) {
						t.Fatalf("round %d: offset for timestamp %d = %d %v %v, want %d", round, recs[c.k].ts, off, ok, err, firstAfter(recs, c.k))
					}
				} else {
					checkDamage(t, p, recs)
				}
				checkServed(t, p, want)
				mustClose(t, p)
				o.VerifySealed = false // the quarantine file keeps it
			}
		})
	}
}

// firstAfter is the offset after record k (the first one a timestamp
// lookup may answer when record k is quarantined and the next record is
// not older).
func firstAfter(recs []appended, k int) uint64 {
	for i := k + 1; i < len(recs); i++ {
		if recs[i].ts >= recs[k].ts {
			return recs[i].base
		}
	}
	return recs[k].base + uint64(recs[k].count)
}

// TestQuarantineReadBoundaries checks the read rules around a quarantined
// record: a read from before it stops before it, one from inside or at it
// starts after it.
func TestQuarantineReadBoundaries(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 1 << 20}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	var recs []appended
	for i := range 10 {
		rec := makeRecord(3, 40, byte(i))
		res, err := p.Append(rec, 3)
		must(t, err)
		recs = append(recs, appended{base: res.BaseOffset, count: 3, ts: res.Timestamp, rec: rec})
	}
	mustClose(t, p)
	log, pos := locateRecord(t, dir, recs[4]) // offsets 12..14
	flipByte(t, log, pos+40)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, 4)
	var r ReadResult
	defer r.Release()
	for _, x := range []struct {
		from, max       uint64
		first, end      uint64
		wantNoExtents   bool
		wantExtentCount int
	}{
		{from: 0, max: 100, first: 0, end: 12},
		{from: 10, max: 100, first: 9, end: 12},
		{from: 11, max: 1, first: 9, end: 12},
		{from: 12, max: 100, first: 15, end: 30},
		{from: 13, max: 100, first: 15, end: 30},
		{from: 14, max: 3, first: 15, end: 18},
		{from: 15, max: 100, first: 15, end: 30},
	} {
		must(t, p.Read(&r, x.from, x.max, 0))
		if len(r.Extents) == 0 {
			t.Fatalf("read from %d: nothing", x.from)
		}
		first, end := r.Extents[0].FirstOffset, r.Extents[len(r.Extents)-1].EndOffset
		if first != x.first || end != x.end {
			t.Fatalf("read from %d max %d: offsets %d..%d, want %d..%d", x.from, x.max, first, end, x.first, x.end)
		}
	}
	first, next := p.Bounds()
	if first != 0 || next != 30 {
		t.Fatalf("bounds %d %d", first, next)
	}
}

// TestQuarantineLastRecords quarantines the last records of the log: reads
// from inside them return nothing (no error), and appends continue after
// them.
func TestQuarantineSealedTail(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500}
	dir, recs := buildLog(t, opts, 40)
	logs := segmentLogs(t, dir)
	first := recordsIn(t, logs[0])
	// Damage the length of the first segment's second to last record: with
	// no index, nothing locates its end, so the rest of the segment, up to
	// the next segment's start, is quarantined.
	must(t, os.Remove(indexOf(logs[0])))
	flipByte(t, logs[0], first[len(first)-2].pos+17)
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	n := len(first)
	dmg := p.Damaged()
	if len(dmg) != 1 || dmg[0].First != recs[n-2].base || dmg[0].Last != recs[n].base-1 {
		t.Fatalf("damaged %+v, want %d..%d", dmg, recs[n-2].base, recs[n].base-1)
	}
	checkServed(t, p, without(recs, n-2, n-1))
}

func TestQuarantineHeldReadRecord(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, FlushInterval: -1, SegmentBytes: 2500}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	recs := appendN(t, p, 40, 3)
	mustClose(t, p)
	log5, pos5 := locateRecord(t, dir, recs[5])
	log38, pos38 := locateRecord(t, dir, recs[38])
	flipByte(t, log5, pos5+40)
	flipByte(t, log38, pos38+40)
	opts.VerifySealed = true
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, 5, 38)
	for i, r := range recs {
		got, count, err := p.ReadRecord(nil, r.base)
		if i == 5 || i == 38 {
			if !errors.Is(err, ErrCorrupt) || len(got) != 0 {
				t.Fatalf("record %d: %d bytes, %v; want ErrCorrupt", i, len(got), err)
			}
			continue
		}
		if err != nil || count != r.count || string(got) != string(r.rec) {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// A cut below the damaged active record takes it out of the quarantine.
	must(t, p.TruncateFrom(recs[37].base))
	checkDamage(t, p, recs, 5)
	p.Reveal(recs[37].base)
	checkServed(t, p, without(recs[:37], 5))
}

// TestQuarantineRetention checks that removing a segment removes its
// quarantine and its quarantine file.
func TestQuarantineRetention(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500, VerifySealed: true}
	dir, recs := buildLog(t, opts, 60)
	log, pos := locateRecord(t, dir, recs[1])
	flipByte(t, log, pos+40)
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, 1)
	quar := filepath.Join(dir, filepath.Base(log[:len(log)-len(logSuffix)])+quarSuffix)
	if _, err := os.Stat(quar); err != nil {
		t.Fatalf("quarantine file: %v", err)
	}
	if _, err := p.DeleteOldestSegments(1); err != nil {
		t.Fatal(err)
	}
	checkDamage(t, p, recs)
	if _, err := os.Stat(quar); !os.IsNotExist(err) {
		t.Fatalf("quarantine file kept: %v", err)
	}
}

// TestQuarantineSealPersists damages an active record, reopens, appends
// until the segment is sealed, and checks that the quarantine survives
// another reopen through the quarantine file (the sealed segment is not
// walked again).
func TestQuarantineSealPersists(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 4000}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	recs := appendN(t, p, 5, 1)
	mustClose(t, p)
	log, pos := locateRecord(t, dir, recs[2])
	flipByte(t, log, pos+40)
	p = mustOpen(t, dir, opts)
	checkDamage(t, p, recs, 2)
	for p.Stats().Segments < 3 {
		recs = append(recs, appendN(t, p, 1, len(recs))...)
	}
	mustClose(t, p)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, 2)
	checkServed(t, p, without(recs, 2))
}

// TestQuarantinePurge checks that a purge drops the quarantine.
func TestQuarantinePurge(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500, VerifySealed: true}
	dir, recs := buildLog(t, opts, 60)
	log, pos := locateRecord(t, dir, recs[3])
	flipByte(t, log, pos+40)
	p := mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, 3)
	must(t, p.Purge())
	checkDamage(t, p, recs)
	m, _ := filepath.Glob(filepath.Join(dir, "*"+quarSuffix))
	if len(m) != 0 {
		t.Fatalf("quarantine files after purge: %v", m)
	}
}
