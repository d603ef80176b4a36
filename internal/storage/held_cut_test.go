package storage

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// cutSetup is a held partition with a revealed prefix in sealed segments
// and an unrevealed suffix spread over several sealed segments and the
// active one.
type cutSetup struct {
	dir      string
	p        *Partition
	revealed []appended
	hidden   []appended
	// hiddenSegs are the sealed segments holding only unrevealed records,
	// oldest first.
	hiddenSegs []*segment
}

func newCutSetup(t *testing.T, opts Options) *cutSetup {
	t.Helper()
	opts.SegmentBytes = 400
	c := &cutSetup{dir: t.TempDir()}
	c.p = mustOpen(t, c.dir, opts)
	c.revealed = appendUntilRoll(t, c.p, 1)
	c.revealed = append(c.revealed, appendHeld(t, c.p, 2, 7)...)
	c.p.Reveal(endOf(c.revealed))
	c.hidden = appendHeld(t, c.p, 30, 20)
	must(t, c.p.Flush()) // the active segment's entries reach its index file
	for _, s := range sealedSegmentsOf(c.p) {
		if s.start >= endOf(c.revealed) {
			c.hiddenSegs = append(c.hiddenSegs, s)
		}
	}
	if len(c.hiddenSegs) < 3 {
		t.Fatalf("%d sealed segments of unrevealed records, want several", len(c.hiddenSegs))
	}
	return c
}

// all returns every record appended, in order.
func (c *cutSetup) all() []appended {
	return append(append([]appended{}, c.revealed...), c.hidden...)
}

// upTo returns the records before offset off.
func upTo(recs []appended, off uint64) []appended {
	i := slices.IndexFunc(recs, func(r appended) bool { return r.base >= off })
	if i < 0 {
		return recs
	}
	return recs[:i]
}

// bytesOf is the total size of recs.
func bytesOf(recs []appended) int64 {
	var n int64
	for _, r := range recs {
		n += int64(len(r.rec))
	}
	return n
}

// checkCut asserts the state after a cut at off: files, tail, the active
// segment, ReadRecord, polls; then that appends continue at off and a
// reopen recovers the same records.
func checkCut(t *testing.T, c *cutSetup, opts Options, off uint64) {
	t.Helper()
	p := c.p
	kept := upTo(c.all(), off)
	cutSeg := c.hiddenSegs[slices.IndexFunc(c.hiddenSegs, func(s *segment) bool { return s.start <= off && off < s.sealedEnd })]
	logs := segmentLogs(t, c.dir)
	if last := logs[len(logs)-1]; last != cutSeg.logPath {
		t.Fatalf("last segment file %s, want %s: newer files must be gone", last, cutSeg.logPath)
	}
	inSeg := upTo(kept[len(upTo(kept, cutSeg.start)):], off)
	if sz := fileSize(t, cutSeg.logPath); sz != bytesOf(inSeg) {
		t.Fatalf("cut log %d bytes, want %d", sz, bytesOf(inSeg))
	}
	if sz := fileSize(t, cutSeg.idxPath); sz != int64(len(inSeg))*IndexEntryBytes {
		t.Fatalf("cut index %d bytes, want %d", sz, len(inSeg)*IndexEntryBytes)
	}
	if p.active.start != cutSeg.start || p.active.size != bytesOf(inSeg) || p.active.mem.Load() == nil {
		t.Fatalf("active segment %d (%d bytes), want %d (%d bytes)", p.active.start, p.active.size, cutSeg.start, bytesOf(inSeg))
	}
	wantTs := kept[len(kept)-1].ts
	if len(inSeg) == 0 {
		wantTs = c.hidden[len(c.hidden)-1].ts // kept as it was
	}
	if n, ts := p.Tail(); n != off || ts != wantTs {
		t.Fatalf("tail %d %d after the cut, want %d %d", n, ts, off, wantTs)
	}
	// Stats.Bytes counts sealed segments whole and the revealed part of
	// the active one.
	wantBytes := bytesOf(upTo(kept, cutSeg.start)) + bytesOf(revealedPrefix(inSeg, visibleEnd(p)))
	if st := p.Stats(); st.Bytes != uint64(wantBytes) || st.Segments != len(logs) {
		t.Fatalf("stats %+v after the cut, want %d bytes in %d segments", st, wantBytes, len(logs))
	}
	checkReadRecord(t, p, kept)
	for _, r := range c.hidden {
		if r.base >= off {
			checkNoRecord(t, p, r.base, "cut")
		}
	}
	// Polls still see the revealed records only.
	checkSame(t, p, c.revealed)

	repl := appendHeld(t, p, 12, 300) // a new leader's records, rolling again
	if repl[0].base != off {
		t.Fatalf("first append after the cut at %d, want %d", repl[0].base, off)
	}
	want := append(append([]appended{}, kept...), repl...)
	checkReadRecord(t, p, want)
	checkSame(t, p, c.revealed)
	mustClose(t, p)

	p = mustOpen(t, c.dir, opts)
	c.p = p
	if n, _ := p.Tail(); n != endOf(want) {
		t.Fatalf("tail %d after reopen, want %d", n, endOf(want))
	}
	checkReadRecord(t, p, want)
	p.Reveal(endOf(c.revealed))
	checkSame(t, p, c.revealed)
	p.Reveal(endOf(want))
	checkSame(t, p, want)
}

// TestTruncateAcrossSegments: a cut into an older sealed segment of
// unrevealed records removes the newer segments, cuts that one and makes
// it active again; appends continue at the cut and a reopen agrees.
func TestTruncateAcrossSegments(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		t.Run("middle of an older segment", func(t *testing.T) {
			c := newCutSetup(t, opts)
			defer func() { mustClose(t, c.p) }()
			seg := c.hiddenSegs[0]
			var off uint64
			for _, r := range c.hidden {
				if r.base > seg.start && r.base < seg.sealedEnd {
					off = r.base
					break
				}
			}
			if off == 0 {
				t.Fatal("no record inside the segment")
			}
			must(t, c.p.TruncateFrom(off))
			checkCut(t, c, opts, off)
		})
		t.Run("exactly at a segment start", func(t *testing.T) {
			c := newCutSetup(t, opts)
			defer func() { mustClose(t, c.p) }()
			off := c.hiddenSegs[1].start
			must(t, c.p.TruncateFrom(off))
			if c.p.active.size != 0 || c.p.active.mem.Load().n != 0 {
				t.Fatalf("active segment holds %d bytes after a cut at its start", c.p.active.size)
			}
			checkCut(t, c, opts, off)
		})
		t.Run("at the revealed end", func(t *testing.T) {
			c := newCutSetup(t, opts)
			defer func() { mustClose(t, c.p) }()
			off := endOf(c.revealed)
			if c.hiddenSegs[0].start != off {
				// The revealed end is inside the segment holding the
				// first unrevealed records.
				c.hiddenSegs = append([]*segment{c.p.segs.Load().segs[segmentFor(c.p.segs.Load().segs, off)]}, c.hiddenSegs...)
			}
			must(t, c.p.TruncateFrom(off))
			checkCut(t, c, opts, off)
		})
		t.Run("after a reopen, nothing revealed", func(t *testing.T) {
			c := newCutSetup(t, opts)
			mustClose(t, c.p)
			c.p = mustOpen(t, c.dir, opts)
			defer func() { mustClose(t, c.p) }()
			// Everything may be cut now; the caller reveals what is
			// committed first.
			c.p.Reveal(endOf(c.revealed))
			off := c.hiddenSegs[0].start
			must(t, c.p.TruncateFrom(off))
			checkCut(t, c, opts, off)
		})
		t.Run("refused", func(t *testing.T) {
			c := newCutSetup(t, opts)
			defer func() { mustClose(t, c.p) }()
			files := segmentLogs(t, c.dir)
			tail, ts := c.p.Tail()
			for _, tc := range []struct {
				name string
				off  uint64
				want error
			}{
				{"a revealed record of a sealed segment", c.revealed[1].base, ErrTruncateRevealed},
				{"the first segment", 0, ErrTruncateRevealed},
				{"inside an unrevealed record of a sealed segment", firstMulti(c.hidden).base + 1, ErrNoRecord},
			} {
				if err := c.p.TruncateFrom(tc.off); !errors.Is(err, tc.want) {
					t.Fatalf("%s: truncate from %d: %v, want %v", tc.name, tc.off, err, tc.want)
				}
				if n, lts := c.p.Tail(); n != tail || lts != ts || !slices.Equal(segmentLogs(t, c.dir), files) {
					t.Fatalf("%s: the log changed (tail %d %d)", tc.name, n, lts)
				}
			}
			checkReadRecord(t, c.p, c.all())
		})
	})
}

// firstMulti returns the first record holding several messages.
func firstMulti(recs []appended) appended {
	for _, r := range recs {
		if r.count > 1 {
			return r
		}
	}
	panic("no record with several messages")
}

// TestTruncateAcrossSegmentsCrash copies the directory after every durable
// step of a cut into an older segment (a crash right after it) and opens
// each copy: recovery must give the kept records followed by a contiguous
// run of the cut ones (an unrevealed suffix the caller cuts again), and
// after the last step exactly the kept records.
func TestTruncateAcrossSegmentsCrash(t *testing.T) {
	heldPermutations(t, func(t *testing.T, opts Options) {
		c := newCutSetup(t, opts)
		seg := c.hiddenSegs[1]
		var off uint64
		for _, r := range c.hidden {
			if r.base > seg.start && r.base < seg.sealedEnd {
				off = r.base
				break
			}
		}
		var images []string
		c.p.afterCutStep = func() { images = append(images, copyDir(t, c.dir)) }
		must(t, c.p.TruncateFrom(off))
		c.p.afterCutStep = nil
		mustClose(t, c.p)
		all := c.all()
		kept := upTo(all, off)
		// One step per removed segment (the newer sealed ones and the
		// active one), then the log cut, then the index cut.
		if want := len(c.hiddenSegs) - 2 + 1 + 2; len(images) != want {
			t.Fatalf("%d steps, want %d", len(images), want)
		}
		longer := 0
		for i, dir := range images {
			p := mustOpen(t, dir, opts)
			n, _ := p.Tail()
			p.Reveal(n)
			got := readRecords(t, p, 0)
			if len(got) < len(kept) || len(got) > len(all) {
				t.Fatalf("step %d: %d records recovered, want %d to %d", i, len(got), len(kept), len(all))
			}
			for j := range got {
				if !bytes.Equal(got[j], all[j].rec) {
					t.Fatalf("step %d: record %d differs", i, j)
				}
			}
			if len(got) > len(kept) {
				longer++
			}
			if i >= len(images)-2 && len(got) != len(kept) {
				t.Fatalf("step %d (log cut): %d records recovered, want %d", i, len(got), len(kept))
			}
			// Appends continue after what was recovered.
			more := appendHeld(t, p, 1, 500+i)
			if more[0].base != n {
				t.Fatalf("step %d: append at %d, want %d", i, more[0].base, n)
			}
			mustClose(t, p)
		}
		if longer != len(images)-2 {
			t.Fatalf("%d crash images before the log cut still held cut records, want %d", longer, len(images)-2)
		}
	})
}
