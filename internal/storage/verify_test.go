package storage

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// damageSealedMiddles flips a payload byte of a middle record (not the
// last, which Open checks) of every sealed segment of dir whose number is
// in segs, and returns the indexes in recs of the damaged records.
func damageSealedMiddles(t testing.TB, dir string, recs []appended, segs ...int) []int {
	t.Helper()
	logs := segmentLogs(t, dir)
	var idx []int
	for _, s := range segs {
		if s >= len(logs)-1 {
			t.Fatalf("segment %d of %d is not sealed", s, len(logs))
		}
		in := recordsIn(t, logs[s])
		if len(in) < 3 {
			t.Fatalf("segment %d holds %d records", s, len(in))
		}
		e := in[len(in)/2]
		flipByte(t, logs[s], e.pos+fakeHeaderLen+3)
		for i, r := range recs {
			if r.base == e.off {
				idx = append(idx, i)
			}
		}
	}
	return idx
}

// unverifiedLog writes n records in segments of segBytes, closes and
// damages a middle record of the given sealed segments.
func unverifiedLog(t testing.TB, n int, segBytes int64, segs ...int) (string, []appended, []int) {
	t.Helper()
	dir := t.TempDir()
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: segBytes})
	recs := appendN(t, p, n, 7)
	mustClose(t, p)
	return dir, recs, damageSealedMiddles(t, dir, recs, segs...)
}

// damageCounter counts Options.DamageFound calls by first offset.
type damageCounter struct {
	mu sync.Mutex
	n  map[uint64]int
}

func (c *damageCounter) found(d Damage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[uint64]int{}
	}
	c.n[d.First]++
}

// check asserts that exactly the records idx of recs were reported, once.
func (c *damageCounter) check(t testing.TB, recs []appended, idx ...int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.n) != len(idx) {
		t.Fatalf("reported %v, want %d ranges", c.n, len(idx))
	}
	for _, k := range idx {
		if c.n[recs[k].base] != 1 {
			t.Fatalf("record %d reported %d times", recs[k].base, c.n[recs[k].base])
		}
	}
}

// TestVerifyBeforeServed: with default options a record flipped in the
// middle of a sealed segment opens unnoticed, and is still never served:
// the first read verifies it, quarantines it (reported once, named by
// Damaged) and serves every other record; a reopen keeps it quarantined.
func TestVerifyBeforeServed(t *testing.T) {
	dir, recs, bad := unverifiedLog(t, 80, 2500, 1, 3)
	var c damageCounter
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500, DamageFound: c.found}
	p := mustOpen(t, dir, opts)
	if d := p.Damaged(); len(d) != 0 {
		t.Fatalf("open found %+v; the test wants damage only a read finds", d)
	}
	for i, s := range sealedSegmentsOf(p) {
		if s.verifiedBelow(0) {
			t.Fatalf("sealed segment %d is verified at open", i)
		}
	}
	checkServed(t, p, without(recs, bad...))
	checkDamage(t, p, recs, bad...)
	c.check(t, recs, bad...)
	for i, s := range sealedSegmentsOf(p) {
		if s.verified.Load() != verifiedAll {
			t.Fatalf("sealed segment %d not verified after a full read: %d", i, s.verified.Load())
		}
	}
	// Read again: nothing new is found or reported.
	checkServed(t, p, without(recs, bad...))
	c.check(t, recs, bad...)
	mustClose(t, p)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	checkDamage(t, p, recs, bad...)
	checkServed(t, p, without(recs, bad...))
}

// TestVerifyBeforeServedOffsetForTimestamp: a lookup by the damaged
// record's timestamp answers the record after it.
func TestVerifyBeforeServedOffsetForTimestamp(t *testing.T) {
	dir, recs, bad := unverifiedLog(t, 80, 2500, 2)
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500})
	defer mustClose(t, p)
	k := bad[0]
	off, ok, err := p.OffsetForTimestamp(recs[k].ts)
	if err != nil || !ok || off != firstAfter(recs, k) {
		t.Fatalf("offset for timestamp %d = %d %v %v, want %d", recs[k].ts, off, ok, err, firstAfter(recs, k))
	}
	checkDamage(t, p, recs, k)
}

// TestVerifyBeforeServedHeldReadRecord: ReadRecord of a held partition
// verifies the record it returns: the damaged one fails with ErrCorrupt
// and is quarantined, every other one reads back exact.
func TestVerifyBeforeServedHeldReadRecord(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, FlushInterval: -1, SegmentBytes: 2500}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	recs := appendN(t, p, 60, 3)
	mustClose(t, p)
	bad := damageSealedMiddles(t, dir, recs, 0, 1)
	var c damageCounter
	opts.DamageFound = c.found
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	if d := p.Damaged(); len(d) != 0 {
		t.Fatalf("open found %+v", d)
	}
	for range 2 {
		for i, r := range recs {
			got, count, err := p.ReadRecord(nil, r.base)
			if i == bad[0] || i == bad[1] {
				if !errors.Is(err, ErrCorrupt) || len(got) != 0 {
					t.Fatalf("record %d: %d bytes, %v; want ErrCorrupt", i, len(got), err)
				}
				continue
			}
			if err != nil || count != r.count || string(got) != string(r.rec) {
				t.Fatalf("record %d: %v", i, err)
			}
		}
		checkDamage(t, p, recs, bad...)
		c.check(t, recs, bad...)
	}
	// Revealed, a read skips them too.
	p.Reveal(endOf(recs))
	checkServed(t, p, without(recs, bad...))
}

// TestVerifyBeforeServedConcurrent: readers of the same unverified
// segments, from different offsets and in different record counts, and
// one reading by base offset (ReadRecord), never get the damaged records,
// and each is reported once.
func TestVerifyBeforeServedConcurrent(t *testing.T) {
	dir, recs, bad := unverifiedLog(t, 200, 2500, 1, 2, 5, 7)
	for round := range 3 {
		var c damageCounter
		d := copyDir(t, dir)
		p := mustOpen(t, d, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500, DamageFound: c.found})
		var wg sync.WaitGroup
		var served atomic.Int64
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var r ReadResult
				defer r.Release()
				_, next := p.Bounds()
				for from := uint64(g * 7 * round); from < next; {
					if err := p.Read(&r, from, uint64(1+g*3), 0); err != nil {
						t.Errorf("read from %d: %v", from, err)
						return
					}
					if len(r.Extents) == 0 {
						return
					}
					for _, e := range r.Extents {
						buf := make([]byte, e.Len)
						if _, err := e.ReadAt(buf, 0); err != nil {
							t.Errorf("read extent: %v", err)
							return
						}
						got, err := splitRecords(buf)
						if err != nil {
							t.Errorf("served a record that fails verification: %v", err)
							return
						}
						served.Add(int64(len(got)))
					}
					from = r.Extents[len(r.Extents)-1].EndOffset
				}
			}()
		}
		wg.Add(1)
		go func() { // and ReadRecord, by base offset
			defer wg.Done()
			for i, r := range recs {
				got, _, err := p.ReadRecord(nil, r.base)
				damaged := i == bad[0] || i == bad[1] || i == bad[2] || i == bad[3]
				if damaged != (err != nil) || (damaged && !errors.Is(err, ErrCorrupt)) || (!damaged && string(got) != string(r.rec)) {
					t.Errorf("read record %d: %d bytes, %v", i, len(got), err)
					return
				}
			}
		}()
		wg.Wait()
		if served.Load() == 0 {
			t.Fatal("nothing served")
		}
		checkDamage(t, p, recs, bad...)
		c.check(t, recs, bad...)
		checkServed(t, p, without(recs, bad...))
		mustClose(t, p)
	}
}

// TestVerifySpans: in a segment larger than verifyGapBytes, a read deep
// in it verifies just its records (a span past the watermark), reads
// continuing from there extend the span, and reads from the start move
// the watermark, which takes the span in and marks the segment verified.
func TestVerifySpans(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 4 << 20}
	p := mustOpen(t, dir, opts)
	rec := makeRecord(2, 16<<10, 1)
	var bases []uint64
	for range 320 { // two segments of about 256 records
		res, err := p.Append(rec, 2)
		must(t, err)
		bases = append(bases, res.BaseOffset)
	}
	mustClose(t, p)
	log, pos := locateRecord(t, dir, appended{base: bases[200]})
	flipByte(t, log, pos+100)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	seg := sealedSegmentsOf(p)[0]
	var r ReadResult
	defer r.Release()
	must(t, p.Read(&r, bases[150], 2*5, 0)) // records 150..154
	if w, n := seg.verified.Load(), seg.nspans; w != 0 || n != 1 || seg.spans[0] != (span{150, 155}) {
		t.Fatalf("after a deep read: watermark %d, spans %v", w, seg.spans[:n])
	}
	for from := bases[155]; from < bases[210]; from = r.Extents[len(r.Extents)-1].EndOffset {
		must(t, p.Read(&r, from, 2*3, 0))
	}
	if d := p.Damaged(); len(d) != 1 || d[0].First != bases[200] {
		t.Fatalf("damaged %+v, want record %d", d, bases[200])
	}
	if w, n := seg.verified.Load(), seg.nspans; w != 0 || n != 1 || seg.spans[0].lo != 150 || seg.spans[0].hi < 210 {
		t.Fatalf("after reads on from the span: watermark %d, spans %v", w, seg.spans[:n])
	}
	for from := uint64(0); from < bases[150]; from = r.Extents[len(r.Extents)-1].EndOffset {
		must(t, p.Read(&r, from, 2*7, 0))
	}
	if w := seg.verified.Load(); w < 210 || seg.nspans != 0 {
		t.Fatalf("the watermark %d did not take the span in (%v)", w, seg.spans[:seg.nspans])
	}
	got := readServed(t, p)
	if len(got) != len(bases)-1 {
		t.Fatalf("served %d records, want %d", len(got), len(bases)-1)
	}
	if seg.verified.Load() != verifiedAll {
		t.Fatalf("segment not verified after a full read")
	}
}

// TestNoteVerified checks the watermark and span bookkeeping alone.
func TestNoteVerified(t *testing.T) {
	var s segment
	s.noteVerified(10, 20, 100, true)
	s.noteVerified(30, 40, 100, true)
	s.noteVerified(20, 30, 100, true) // joins both
	if s.verified.Load() != 0 || s.nspans != 1 || s.spans[0] != (span{10, 40}) {
		t.Fatalf("watermark %d spans %v", s.verified.Load(), s.spans[:s.nspans])
	}
	for i := range maxVerifiedSpans + 2 {
		lo := int64(50 + 5*i)
		s.noteVerified(lo, lo+2, 100, true)
	}
	if s.nspans != maxVerifiedSpans {
		t.Fatalf("%d spans kept", s.nspans)
	}
	s.noteVerified(0, 10, 100, true)
	if s.verified.Load() != 40 {
		t.Fatalf("watermark %d, want 40", s.verified.Load())
	}
	s.noteVerified(40, 100, 100, true)
	if s.verified.Load() != verifiedAll || s.nspans != 0 {
		t.Fatalf("watermark %d spans %v, want the whole segment", s.verified.Load(), s.spans[:s.nspans])
	}
}

// TestVerifyAllocs: the first read of an unverified segment allocates
// nothing (pooled buffers), as a read of a verified one.
func TestVerifyAllocs(t *testing.T) {
	dir, _, _ := unverifiedLog(t, 200, 8000)
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 8000})
	defer mustClose(t, p)
	segs := sealedSegmentsOf(p)
	if segs[0].verifiedBelow(0) {
		t.Fatal("verified at open")
	}
	var r ReadResult
	defer r.Release()
	allocs := testing.AllocsPerRun(50, func() {
		for _, s := range segs {
			s.verified.Store(0)
		}
		for from := uint64(0); from < segs[len(segs)-1].sealedEnd; from = r.Extents[len(r.Extents)-1].EndOffset {
			if err := p.Read(&r, from, 40, 0); err != nil || len(r.Extents) == 0 {
				t.Fatalf("read: %v", err)
			}
		}
	})
	if allocs != 0 && !raceEnabled {
		t.Fatalf("%.1f allocations per pass of first reads", allocs)
	}
	if segs[0].verified.Load() != verifiedAll {
		t.Fatal("not verified by the reads")
	}
}

// TestScrubMarksVerified: a scrub pass leaves every sealed segment
// verified.
func TestScrubMarksVerified(t *testing.T) {
	dir, recs, bad := unverifiedLog(t, 80, 2500, 2)
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 2500})
	defer mustClose(t, p)
	if _, err := p.Scrub(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	for i, s := range sealedSegmentsOf(p) {
		if s.verified.Load() != verifiedAll {
			t.Fatalf("segment %d not verified by the scrub", i)
		}
	}
	checkDamage(t, p, recs, bad...)
	checkServed(t, p, without(recs, bad...))
}
