package storage

import (
	"testing"
)

// heldPermutations runs fn once per option combination, in held mode.
func heldPermutations(t *testing.T, fn func(t *testing.T, opts Options)) {
	t.Helper()
	allPermutations(t, func(t *testing.T, opts Options) {
		opts.Held = true
		fn(t, opts)
	})
}

// appendHeld appends n records stamped by the test (as a raft leader
// would), continuing the partition's tail.
func appendHeld(t testing.TB, p *Partition, n int, seed int) []appended {
	t.Helper()
	next, ts := p.Tail()
	var out []appended
	for i := range n {
		count := uint32(1 + (seed+i)%4)
		ts++
		rec := stampedRecord(next, ts, count, 40+(seed+i)%80, byte(seed+i))
		if _, err := p.AppendStamped(rec, count, next, ts); err != nil {
			t.Fatalf("append stamped %d at %d: %v", i, next, err)
		}
		out = append(out, appended{base: next, count: count, ts: ts, rec: rec})
		next += uint64(count)
	}
	return out
}

func endOf(recs []appended) uint64 {
	l := recs[len(recs)-1]
	return l.base + uint64(l.count)
}

// visibleEnd returns the revealed end as readers see it.
func visibleEnd(p *Partition) uint64 {
	_, next := p.Bounds()
	return next
}

// revealedPrefix returns the records of recs ending at or before x.
func revealedPrefix(recs []appended, x uint64) []appended {
	n := 0
	for n < len(recs) && recs[n].base+uint64(recs[n].count) <= x {
		n++
	}
	return recs[:n]
}

// checkHidden asserts readers see exactly want (revealed records) and
// nothing of what follows, while Tail reports tail.
func checkHidden(t *testing.T, p *Partition, want []appended, tail uint64) {
	t.Helper()
	end := uint64(0)
	if len(want) > 0 {
		end = endOf(want)
	}
	first, next := p.Bounds()
	if first != 0 || next != end {
		t.Fatalf("bounds %d..%d, want 0..%d", first, next, end)
	}
	if st := p.Stats(); st.NextOffset != end || st.Messages != end {
		t.Fatalf("stats %+v, want next %d", st, end)
	}
	if n, _ := p.Tail(); n != tail {
		t.Fatalf("tail %d, want %d", n, tail)
	}
	checkSame(t, p, want)
	var r ReadResult
	defer r.Release()
	if err := p.Read(&r, end, 100, 0); err != nil || len(r.Extents) != 0 {
		t.Fatalf("read past the revealed end: %d extents, %v", len(r.Extents), err)
	}
}

// TestHeldReveal: appended records stay invisible (also after syncs and
// flushes) until Reveal, which reveals whole records, clamps and never
// goes backwards.
func TestHeldReveal(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.FlushMessages = 1 // the background flusher syncs every append
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		recs := appendHeld(t, p, 10, 3)
		tail := endOf(recs)
		waitFor(t, "records durable", func() bool { return p.durable.Load() == 10 })
		must(t, p.Flush())
		if recs[0].count < 2 || recs[6].count < 2 {
			t.Fatal("records 0 and 6 must hold several messages")
		}
		checkHidden(t, p, nil, tail)
		if _, ok, err := p.OffsetForTimestamp(0); ok || err != nil {
			t.Fatalf("timestamp lookup found an unrevealed record (%v)", err)
		}
		steps := []struct {
			name   string
			reveal uint64
			want   uint64 // revealed end afterwards
		}{
			{"zero", 0, 0},
			{"inside the first record", recs[0].base + uint64(recs[0].count) - 1, recs[0].base},
			{"record boundary", recs[3].base, recs[3].base},
			{"inside a later record", recs[6].base + 1, recs[6].base},
			{"backwards", recs[1].base, recs[6].base},
			{"same again", recs[6].base, recs[6].base},
			{"exact tail", tail, tail},
			{"beyond the tail", tail + 100, tail},
		}
		for _, st := range steps {
			p.Reveal(st.reveal)
			if got := visibleEnd(p); got != st.want {
				t.Fatalf("%s: reveal %d: revealed end %d, want %d", st.name, st.reveal, got, st.want)
			}
			checkHidden(t, p, revealedPrefix(recs, st.want), tail)
		}
		if off, ok, err := p.OffsetForTimestamp(recs[4].ts); !ok || err != nil || off != recs[4].base {
			t.Fatalf("timestamp lookup: %d %v %v", off, ok, err)
		}
		// Later appends stay hidden behind the revealed ones.
		more := appendHeld(t, p, 3, 9)
		checkHidden(t, p, recs, endOf(more))
		p.Reveal(^uint64(0))
		checkHidden(t, p, append(recs, more...), endOf(more))
	})
}

// TestRevealNotHeld: Reveal does nothing to a partition that is not held.
func TestRevealNotHeld(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushInterval: -1})
	defer mustClose(t, p)
	recs := appendHeld(t, p, 4, 1)
	p.Reveal(0)
	if got := visibleEnd(p); got != endOf(recs) {
		t.Fatalf("revealed end %d, want %d", got, endOf(recs))
	}
}

// TestHeldReopen: a reopened held partition recovers every record but
// reveals none; Reveal then rounds down inside sealed and active segments.
func TestHeldReopen(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 600
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		var recs []appended
		for range 6 { // each batch fills about a segment; appends roll
			recs = append(recs, appendHeld(t, p, 8, len(recs))...)
			p.Reveal(endOf(recs))
		}
		recs = append(recs, appendHeld(t, p, 3, 99)...) // unrevealed tail
		tail := endOf(recs)
		sealed := sealedSegmentsOf(p)
		if len(sealed) < 3 {
			t.Fatalf("%d sealed segments, want several", len(sealed))
		}
		mustClose(t, p)

		p = mustOpen(t, dir, opts)
		defer mustClose(t, p)
		checkHidden(t, p, nil, tail)
		// Inside the second sealed segment, in the middle of a record.
		mid := sealed[1].start
		var k int
		for k = range recs {
			if recs[k].base > mid && recs[k].count > 1 {
				break
			}
		}
		p.Reveal(recs[k].base + 1)
		checkHidden(t, p, recs[:k], tail)
		// Exactly at the end of a sealed segment.
		p.Reveal(sealed[2].sealedEnd)
		checkHidden(t, p, revealedPrefix(recs, sealed[2].sealedEnd), tail)
		p.Reveal(tail - 1)
		checkHidden(t, p, recs[:len(recs)-1], tail)
		p.Reveal(tail)
		checkHidden(t, p, recs, tail)
		if n, ts := p.Tail(); n != tail || ts != recs[len(recs)-1].ts {
			t.Fatalf("tail %d %d after reopen", n, ts)
		}
	})
}

// TestHeldReopenFullActive: an active segment over SegmentBytes with
// unrevealed records is rolled by Open, as without Held, and its records
// stay hidden until Reveal covers them in the now sealed segment.
func TestHeldReopenFullActive(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, SegmentBytes: 500, FlushInterval: -1}
	dir := t.TempDir()
	// Written with a larger segment size, reopened with a smaller one.
	big := opts
	big.SegmentBytes = 1 << 20
	p := mustOpen(t, dir, big)
	recs := appendHeld(t, p, 10, 1)
	mustClose(t, p)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	if n := len(segmentLogs(t, dir)); n != 2 || len(sealedSegmentsOf(p)) != 1 {
		t.Fatalf("%d segments after reopen, want 2 (the full one sealed)", n)
	}
	checkHidden(t, p, nil, endOf(recs))
	p.Reveal(recs[4].base + 1)
	checkHidden(t, p, recs[:4], endOf(recs))

	// A cut into the over-full sealed segment makes it active again, over
	// SegmentBytes: the next append rolls before it writes.
	appendHeld(t, p, 2, 30) // in the segment after the full one
	must(t, p.TruncateFrom(recs[8].base))
	if p.active.start != 0 || p.active.size < opts.SegmentBytes || len(segmentLogs(t, dir)) != 1 {
		t.Fatalf("active segment %d of %d bytes after the cut, %d files", p.active.start, p.active.size, len(segmentLogs(t, dir)))
	}
	again := appendHeld(t, p, 1, 40)
	if p.active.start != again[0].base || len(sealedSegmentsOf(p)) != 1 {
		t.Fatalf("append on an over-full active segment went to segment %d", p.active.start)
	}
	want := append(append([]appended{}, recs[:8]...), again...)
	p.Reveal(endOf(want))
	checkHidden(t, p, want, endOf(want))
}

// TestHeldRoll: a held segment rolls at the append that brings it to
// SegmentBytes, revealed or not, and sealing reveals nothing; Reveal then
// reveals inside the sealed segments, and an append onto an active
// segment made over-full by a cut rolls first.
func TestHeldRoll(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 300
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		defer mustClose(t, p)
		m := p.active.mem.Load()        // as a reader holding it during the seal
		recs := appendHeld(t, p, 20, 1) // about 2 KB, far over 300 bytes
		if m.vis.Load() != 0 {
			t.Fatalf("sealing published %d entries of the first segment", m.vis.Load())
		}
		sealed := sealedSegmentsOf(p)
		if len(sealed) < 4 || len(segmentLogs(t, dir)) != len(sealed)+1 {
			t.Fatalf("%d sealed segments for %d unrevealed records, want several", len(sealed), len(recs))
		}
		checkSegmentSizes(t, p, opts.SegmentBytes)
		checkHidden(t, p, nil, endOf(recs))
		p.Reveal(recs[10].base)
		checkHidden(t, p, recs[:10], endOf(recs))
		p.Reveal(endOf(recs))
		checkHidden(t, p, recs, endOf(recs))
	})
}

// checkSegmentSizes asserts that every sealed segment holds at most
// limit bytes plus one record, the one that filled it.
func checkSegmentSizes(t *testing.T, p *Partition, limit int64) {
	t.Helper()
	for _, s := range sealedSegmentsOf(p) {
		v := s.view()
		_, _, lastPos, _, _, err := v.entry(v.n - 1)
		v.done()
		must(t, err)
		if lastPos >= limit || s.sealedSize < limit {
			t.Fatalf("segment %d: %d bytes, last record at %d (limit %d)", s.start, s.sealedSize, lastPos, limit)
		}
	}
}

// TestHeldFsync: with Fsync a held append returns once the record is on
// disk, yet the record stays hidden until Reveal.
func TestHeldFsync(t *testing.T) {
	dir := t.TempDir()
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, Held: true, Fsync: true, FlushInterval: -1})
	defer mustClose(t, p)
	recs := appendHeld(t, p, 5, 1)
	if d := p.durable.Load(); d != 5 || p.syncRounds.Load() == 0 {
		t.Fatalf("durable %d after 5 fsync appends (%d sync rounds)", d, p.syncRounds.Load())
	}
	// The index entries reached the file with the sync.
	if sz := fileSize(t, indexOf(segmentLogs(t, dir)[0])); sz != 5*IndexEntryBytes {
		t.Fatalf("index file %d bytes, want %d", sz, 5*IndexEntryBytes)
	}
	checkHidden(t, p, nil, endOf(recs))
	p.Reveal(recs[2].base)
	checkHidden(t, p, recs[:2], endOf(recs))
}

// TestHeldRetention: retention (Retain, RetainCount, DeleteOldestSegments,
// OldestSegmentsEnd) stops at the first segment holding an unrevealed
// record, also for a reopened partition that revealed nothing yet.
func TestHeldRetention(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 400
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		recs := appendHeld(t, p, 24, 0)
		p.Reveal(endOf(recs))
		tailRecs := appendHeld(t, p, 15, 50) // over several segments, unrevealed
		all := append(append([]appended{}, recs...), tailRecs...)
		sealed := sealedSegmentsOf(p)
		last := sealed[len(sealed)-1]
		if last.start <= endOf(recs) {
			t.Fatalf("the last sealed segment starts at %d, want it to hold only unrevealed records", last.start)
		}
		// Reveal into the middle of the last sealed segment.
		var mid uint64
		for _, r := range tailRecs {
			if r.base > last.start && r.base < last.sealedEnd {
				mid = r.base
				break
			}
		}
		p.Reveal(mid)
		want := len(sealed) - 1
		if n := p.RetainCount(Retention{MaxBytes: 1}); n != want {
			t.Fatalf("retain count %d, want %d (the segment holding unrevealed records stays)", n, want)
		}
		if k, keep := p.OldestSegmentsEnd(100); k != want || keep != last.start {
			t.Fatalf("oldest segments end %d %d, want %d %d", k, keep, want, last.start)
		}
		rm, err := p.Retain(Retention{MaxBytes: 1})
		must(t, err)
		if rm.Segments != want || rm.Messages != last.start {
			t.Fatalf("removed %+v, want %d segments (%d messages)", rm, want, last.start)
		}
		if rm, err := p.DeleteOldestSegments(10); err != nil || rm.Segments != 0 {
			t.Fatalf("delete oldest with an unrevealed record in the oldest segment: %+v %v", rm, err)
		}
		if first, next := p.Bounds(); first != last.start || next != mid {
			t.Fatalf("bounds %d..%d after retention, want %d..%d", first, next, last.start, mid)
		}
		kept := all[len(revealedPrefix(all, last.start)):]
		checkReadRecord(t, p, kept) // the unrevealed records are all there
		p.Reveal(endOf(all))
		if n := len(sealedSegmentsOf(p)); n == 0 {
			t.Fatal("no sealed segment left to remove")
		} else if rm, err := p.DeleteOldestSegments(10); err != nil || rm.Segments != n {
			t.Fatalf("delete oldest after the full reveal: %+v %v, want %d segments", rm, err, n)
		}
		if len(sealedSegmentsOf(p)) != 0 {
			t.Fatalf("%d sealed segments left after removing all revealed ones", len(sealedSegmentsOf(p)))
		}
		tailStart := p.active.start
		more := appendHeld(t, p, 12, 70) // fills and seals a segment, unrevealed
		if len(sealedSegmentsOf(p)) == 0 {
			t.Fatal("no segment sealed")
		}
		mustClose(t, p)

		// Reopened, nothing revealed: nothing is removable until Reveal.
		p = mustOpen(t, dir, opts)
		defer mustClose(t, p)
		if first, next := p.Bounds(); first != tailStart || next != first {
			t.Fatalf("bounds %d..%d after reopen, want %d..%d", first, next, tailStart, tailStart)
		}
		if n := p.RetainCount(Retention{MaxBytes: 1}); n != 0 {
			t.Fatalf("retain count %d before any reveal", n)
		}
		if k, keep := p.OldestSegmentsEnd(1); k != 0 || keep != tailStart {
			t.Fatalf("oldest segments end %d %d before any reveal", k, keep)
		}
		rm, err = p.DeleteOldestSegments(1)
		if err != nil || rm.Segments != 0 {
			t.Fatalf("removed %+v (%v) before any reveal", rm, err)
		}
		first := sealedSegmentsOf(p)[0]
		p.Reveal(first.sealedEnd)
		rm, err = p.DeleteOldestSegments(1)
		must(t, err)
		if b, _ := p.Bounds(); rm.Segments != 1 || b != first.sealedEnd {
			t.Fatalf("removed %+v, first offset %d after revealing the oldest segment", rm, b)
		}
		p.Reveal(endOf(more))
		checkSame(t, p, more[len(revealedPrefix(more, first.sealedEnd)):])
	})
}

// TestHeldPipelinedLoad: a writer that always appends the next record
// before revealing the previous one never finds everything revealed, yet
// segments roll at SegmentBytes (each at most SegmentBytes plus the record
// that filled it), and retention by size removes old segments but never
// one holding an unrevealed record.
func TestHeldPipelinedLoad(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 512
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		var all []appended
		var removed, rolls, keptUnrevealed, maxSealed int
		for round := range 200 {
			all = append(all, appendHeld(t, p, 1, round)...)
			if len(all) > 1 {
				p.Reveal(all[len(all)-2].base + uint64(all[len(all)-2].count))
			}
			vis := visibleEnd(p)
			if n, _ := p.Tail(); n != endOf(all) || vis != all[len(all)-1].base {
				t.Fatalf("round %d: tail %d, revealed end %d", round, n, vis)
			}
			checkSegmentSizes(t, p, opts.SegmentBytes)
			maxSealed = max(maxSealed, len(sealedSegmentsOf(p)))
			r := Retention{MaxBytes: 8 * 512}
			if p.active.size == 0 {
				rolls++
				if rolls%4 == 0 {
					// The append just rolled: the unrevealed record ends
					// the newest sealed segment. Ask for everything to go.
					r.MaxBytes = 1
				}
			}
			rm, err := p.Retain(r)
			must(t, err)
			removed += rm.Segments
			if first, _ := p.Bounds(); first > vis {
				t.Fatalf("round %d: retention removed up to %d, past the revealed end %d", round, first, vis)
			}
			if r.MaxBytes == 1 {
				sealed := sealedSegmentsOf(p)
				if len(sealed) != 1 || sealed[0].sealedEnd != endOf(all) {
					t.Fatalf("round %d: %d sealed segments left, want the one holding the unrevealed record", round, len(sealed))
				}
				keptUnrevealed++
			}
			if _, _, err := p.ReadRecord(nil, all[len(all)-1].base); err != nil {
				t.Fatalf("round %d: unrevealed record: %v", round, err)
			}
		}
		if removed < 10 || keptUnrevealed < 5 || maxSealed < 5 {
			t.Fatalf("%d segments removed, %d times a segment kept for an unrevealed record, at most %d sealed: want more",
				removed, keptUnrevealed, maxSealed)
		}
		first, vis := p.Bounds()
		kept := all[len(revealedPrefix(all, first)):]
		if got := readRecords(t, p, first); len(got) != len(kept)-1 {
			t.Fatalf("read %d records, want the %d revealed ones", len(got), len(kept)-1)
		}
		var r ReadResult
		defer r.Release()
		if err := p.Read(&r, vis, 100, 0); err != nil || len(r.Extents) != 0 {
			t.Fatalf("read past the revealed end: %d extents, %v", len(r.Extents), err)
		}
		checkReadRecord(t, p, kept)
		p.Reveal(endOf(all))
		if got := readRecords(t, p, first); len(got) != len(kept) {
			t.Fatalf("read %d records after the last reveal, want %d", len(got), len(kept))
		}
		t.Logf("%d segments removed, a segment kept %d times for its unrevealed record, up to %d sealed", removed, keptUnrevealed, maxSealed)
	})
}

// TestHeldPurge: a purge of a held partition restarts offsets and the
// revealed end at 0.
func TestHeldPurge(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		recs := appendHeld(t, p, 5, 1)
		p.Reveal(recs[3].base)
		must(t, p.Purge())
		if first, next := p.Bounds(); first != 0 || next != 0 {
			t.Fatalf("bounds %d..%d after purge", first, next)
		}
		if n, _ := p.Tail(); n != 0 {
			t.Fatalf("tail %d after purge", n)
		}
		again := appendHeld(t, p, 4, 2)
		checkHidden(t, p, nil, endOf(again))
		p.Reveal(endOf(again))
		checkHidden(t, p, again, endOf(again))
	})
}
