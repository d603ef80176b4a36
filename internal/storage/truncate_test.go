package storage

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestTruncateFromErrors: every refused cut leaves the log unchanged.
func TestTruncateFromErrors(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 500
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		sealedRecs := appendUntilRoll(t, p, 1)
		p.Reveal(endOf(sealedRecs))
		recs := appendHeld(t, p, 3, 20) // in the active segment
		if len(sealedSegmentsOf(p)) != 1 {
			t.Fatalf("%d sealed segments, want 1", len(sealedSegmentsOf(p)))
		}
		p.Reveal(recs[2].base)
		tail, lastTs := p.Tail()
		cases := []struct {
			name string
			off  uint64
			want error
		}{
			{"inside a sealed segment", sealedRecs[3].base, ErrTruncateRevealed},
			{"at the active segment start, revealed", recs[0].base, ErrTruncateRevealed},
			{"at a sealed segment start, revealed", sealedRecs[0].base, ErrTruncateRevealed},
			{"below the revealed end", recs[1].base, ErrTruncateRevealed},
			{"inside an unrevealed record", recs[2].base + 1, ErrNoRecord},
			{"beyond the tail", tail + 1, ErrNoRecord},
		}
		for _, tc := range cases {
			if tc.name == "inside an unrevealed record" && recs[2].count < 2 {
				t.Fatal("record 2 must hold several messages")
			}
			if err := p.TruncateFrom(tc.off); !errors.Is(err, tc.want) {
				t.Fatalf("%s: truncate from %d: %v, want %v", tc.name, tc.off, err, tc.want)
			}
			if n, ts := p.Tail(); n != tail || ts != lastTs {
				t.Fatalf("%s: tail %d %d changed", tc.name, n, ts)
			}
		}
		if err := p.TruncateFrom(tail); err != nil {
			t.Fatalf("truncate at the tail: %v", err)
		}
		p.Reveal(tail)
		checkSame(t, p, append(sealedRecs, recs...))
	})
	t.Run("not held", func(t *testing.T) {
		p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, FlushInterval: -1})
		recs := appendHeld(t, p, 3, 1)
		if err := p.TruncateFrom(recs[1].base); !errors.Is(err, errNotHeld) {
			t.Fatalf("truncate of a partition that is not held: %v", err)
		}
		mustClose(t, p)
		if err := p.TruncateFrom(0); err == nil {
			t.Fatal("truncate after close succeeded")
		}
	})
	t.Run("closed", func(t *testing.T) {
		p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, Held: true, FlushInterval: -1})
		appendHeld(t, p, 3, 1)
		mustClose(t, p)
		if err := p.TruncateFrom(0); !errors.Is(err, ErrClosed) {
			t.Fatalf("truncate after close: %v", err)
		}
	})
}

// TestTruncateFromAppendReopen: after a cut the next append gets the cut
// offset, the last timestamp is the last kept record's, and a reopen
// recovers exactly the kept records plus the new ones, with a consistent
// index once the segment is sealed.
func TestTruncateFromAppendReopen(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 4000
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		recs := appendHeld(t, p, 12, 1)
		p.Reveal(recs[3].base)
		// Put the entries about to be cut into the index file first.
		must(t, p.Flush())
		cut := 7
		must(t, p.TruncateFrom(recs[cut].base))
		if n, ts := p.Tail(); n != recs[cut].base || ts != recs[cut-1].ts {
			t.Fatalf("tail %d %d after cut, want %d %d", n, ts, recs[cut].base, recs[cut-1].ts)
		}
		log := segmentLogs(t, dir)[0]
		var kept int64
		for _, r := range recs[:cut] {
			kept += int64(len(r.rec))
		}
		if sz := fileSize(t, log); sz != kept {
			t.Fatalf("log %d bytes after cut, want %d", sz, kept)
		}
		if sz := fileSize(t, indexOf(log)); sz > int64(cut)*IndexEntryBytes {
			t.Fatalf("index %d bytes after cut, want at most %d", sz, cut*IndexEntryBytes)
		}
		if _, _, err := p.ReadRecord(nil, recs[cut+1].base); !errors.Is(err, ErrNoRecord) {
			t.Fatalf("read of a cut record: %v", err)
		}
		// Replace the suffix with different records (a new leader's).
		repl := appendHeld(t, p, 4, 200)
		if repl[0].base != recs[cut].base {
			t.Fatalf("first append after cut at %d, want %d", repl[0].base, recs[cut].base)
		}
		want := append(append([]appended{}, recs[:cut]...), repl...)
		mustClose(t, p)

		p = mustOpen(t, dir, opts)
		if n, ts := p.Tail(); n != endOf(want) || ts != want[len(want)-1].ts {
			t.Fatalf("tail %d %d after reopen, want %d", n, ts, endOf(want))
		}
		p.Reveal(endOf(want))
		checkSame(t, p, want)
		// Fill and seal the segment: its index must describe the log.
		more := appendUntilRoll(t, p, 9)
		p.Reveal(endOf(more))
		if len(sealedSegmentsOf(p)) != 1 {
			t.Fatalf("%d sealed segments, want 1", len(sealedSegmentsOf(p)))
		}
		mustClose(t, p)
		b, err := os.ReadFile(indexOf(log))
		must(t, err)
		all := append(want, more...)
		entries, err := DecodeIndex(b, 0, fileSize(t, log))
		must(t, err)
		if len(entries) != len(all) {
			t.Fatalf("sealed index holds %d entries, want %d", len(entries), len(all))
		}
		var pos uint64
		for i, e := range entries {
			if e.Offset != all[i].base || e.Timestamp != all[i].ts || e.Position != pos {
				t.Fatalf("index entry %d = %+v, want offset %d ts %d position %d", i, e, all[i].base, all[i].ts, pos)
			}
			pos += uint64(len(all[i].rec))
		}
		p = mustOpen(t, dir, opts)
		defer mustClose(t, p)
		p.Reveal(^uint64(0))
		checkSame(t, p, all)
	})
}

// appendUntilRoll appends held records one by one until one fills the
// active segment and seals it, and returns them.
func appendUntilRoll(t *testing.T, p *Partition, seed int) []appended {
	t.Helper()
	sealed := len(sealedSegmentsOf(p))
	var out []appended
	for len(sealedSegmentsOf(p)) == sealed {
		if len(out) > 10000 {
			t.Fatal("the active segment never rolled")
		}
		out = append(out, appendHeld(t, p, 1, seed+len(out))...)
	}
	return out
}

// TestTruncateWholeActive: cutting every record of a fresh active segment
// keeps the last timestamp (no record is left to take it from).
func TestTruncateWholeActive(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, SegmentBytes: 300, FlushInterval: -1}
	p := mustOpen(t, t.TempDir(), opts)
	defer mustClose(t, p)
	recs := appendUntilRoll(t, p, 1) // the active segment starts empty at the end
	p.Reveal(endOf(recs))
	more := appendHeld(t, p, 3, 2)
	must(t, p.TruncateFrom(more[0].base))
	if n, ts := p.Tail(); n != more[0].base || ts != more[2].ts {
		t.Fatalf("tail %d %d, want %d with the timestamp kept as is (%d)", n, ts, more[0].base, more[2].ts)
	}
	if p.active.size != 0 || p.active.mem.Load().n != 0 {
		t.Fatalf("active segment still holds %d bytes", p.active.size)
	}
	again := appendHeld(t, p, 2, 3)
	p.Reveal(endOf(again))
	checkSame(t, p, append(recs, again...))
}

// TestTruncateWaitsForSync: TruncateFrom excludes syncTo (which writes
// index entries captured before it took flushMu), so a sync in flight can
// never write entries of records being cut.
func TestTruncateWaitsForSync(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, Held: true, FlushInterval: -1})
	defer mustClose(t, p)
	recs := appendHeld(t, p, 4, 1)
	p.syncMu.Lock() // a sync in flight
	done := make(chan error, 1)
	go func() { done <- p.TruncateFrom(recs[2].base) }()
	select {
	case err := <-done:
		p.syncMu.Unlock()
		t.Fatalf("truncate ran during a sync (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.syncMu.Unlock()
	must(t, <-done)
	if n, _ := p.Tail(); n != recs[2].base {
		t.Fatalf("tail %d", n)
	}
}

// TestTruncateThenSeal: entries flushed to the index file before a cut are
// dropped from it, so the segment sealed later (without a reopen, which
// would rebuild the index) has an index describing exactly its log.
func TestTruncateThenSeal(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, SegmentBytes: 3000, FlushInterval: -1}
	dir := t.TempDir()
	p := mustOpen(t, dir, opts)
	recs := appendHeld(t, p, 12, 1)
	must(t, p.Flush()) // all 12 entries in the index file
	must(t, p.TruncateFrom(recs[7].base))
	more := appendHeld(t, p, 2, 50)
	must(t, p.Flush()) // entries of the new records follow the kept ones
	more = append(more, appendUntilRoll(t, p, 60)...)
	p.Reveal(endOf(more))
	if len(sealedSegmentsOf(p)) != 1 {
		t.Fatalf("%d sealed segments, want 1", len(sealedSegmentsOf(p)))
	}
	all := append(append([]appended{}, recs[:7]...), more...)
	log := segmentLogs(t, dir)[0]
	b, err := os.ReadFile(indexOf(log))
	must(t, err)
	entries, err := DecodeIndex(b, 0, fileSize(t, log))
	if err != nil || len(entries) != len(all) {
		t.Fatalf("sealed index: %d entries (%v), want %d", len(entries), err, len(all))
	}
	for i, e := range entries {
		if e.Offset != all[i].base || e.Timestamp != all[i].ts {
			t.Fatalf("index entry %d = %+v, want offset %d ts %d", i, e, all[i].base, all[i].ts)
		}
	}
	checkSame(t, p, all)
	mustClose(t, p)
}
