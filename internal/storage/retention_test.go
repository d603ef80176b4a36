package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// segmentBounds returns, per segment, the records it holds (index into recs).
func sealedSegmentsOf(p *Partition) []*segment {
	l := p.segs.Load().segs
	return l[:len(l)-1]
}

func TestRetention(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		for _, tc := range []struct {
			name string
			// apply runs the removal on a partition whose clock sits
			// right after the last append; it returns how many oldest
			// segments must be gone.
			apply func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int)
		}{
			{"nothing expired", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				rm, err := p.Retain(Retention{MaxAge: time.Hour})
				must(t, err)
				return rm, 0
			}},
			{"age removes expired prefix", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				// Segment k's newest record was stamped at (k+1)*segRecs
				// minutes; after 100 more minutes, an expiry keeping the
				// last 150 minutes drops the segments older than that.
				// Choose the expiry so that segment 1's newest record
				// expires exactly now (maxTs + expiry == now): segments 0
				// and 1 go, segment 2 stays.
				segs := sealedSegmentsOf(p)
				clk.Advance(100 * time.Minute)
				now := uint64(clk.Now().UnixMicro())
				expiry := time.Duration(now-segs[1].maxTs) * time.Microsecond
				gone := 2
				rm, err := p.Retain(Retention{MaxAge: expiry})
				must(t, err)
				return rm, gone
			}},
			{"age never removes active", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				clk.Advance(1000 * time.Hour)
				n := len(sealedSegmentsOf(p))
				rm, err := p.Retain(Retention{MaxAge: time.Minute})
				must(t, err)
				return rm, n
			}},
			{"size", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				st := p.Stats()
				segs := sealedSegmentsOf(p)
				budget := st.Bytes - uint64(segs[0].sealedSize) - uint64(segs[1].sealedSize) // exactly two must go
				rm, err := p.Retain(Retention{MaxBytes: budget})
				must(t, err)
				return rm, 2
			}},
			{"size one byte over", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				st := p.Stats()
				rm, err := p.Retain(Retention{MaxBytes: st.Bytes - 1})
				must(t, err)
				return rm, 1
			}},
			{"size tiny budget keeps active", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				n := len(sealedSegmentsOf(p))
				rm, err := p.Retain(Retention{MaxBytes: 1})
				must(t, err)
				return rm, n
			}},
			{"delete 2 oldest", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				rm, err := p.DeleteOldestSegments(2)
				must(t, err)
				return rm, 2
			}},
			{"delete more than sealed", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				n := len(sealedSegmentsOf(p))
				rm, err := p.DeleteOldestSegments(n + 10)
				must(t, err)
				return rm, n
			}},
			{"delete zero", func(t *testing.T, p *Partition, clk *fakeClock) (Removed, int) {
				rm, err := p.DeleteOldestSegments(0)
				must(t, err)
				return rm, 0
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				clk := newFakeClock()
				o := opts
				o.Clock = clk.Now
				o.SegmentBytes = 1500
				p := mustOpen(t, dir, o)
				var recs []appended
				for i := range 60 {
					clk.Advance(time.Minute)
					recs = append(recs, appendN(t, p, 1, i)...)
				}
				before := p.Stats()
				segs := sealedSegmentsOf(p)
				if len(segs) < 4 {
					t.Fatalf("want at least 4 sealed segments, have %d", len(segs))
				}
				// Hold a read of the oldest segment across the removal:
				// it must stay readable until released.
				var held ReadResult
				must(t, p.Read(&held, 0, 1, 0))

				rm, gone := tc.apply(t, p, clk)
				var want Removed
				for _, s := range segs[:gone] {
					want.Segments++
					want.Bytes += uint64(s.sealedSize)
					want.Messages += s.sealedEnd - s.start
				}
				if diff := cmp.Diff(want, rm); diff != "" {
					t.Fatalf("removed (-want +got):\n%s", diff)
				}
				first := uint64(0)
				if gone > 0 {
					first = segs[gone-1].sealedEnd
				}
				wantSt := Stats{
					Messages:    before.NextOffset - first,
					Bytes:       before.Bytes - want.Bytes,
					Segments:    before.Segments - gone,
					FirstOffset: first,
					NextOffset:  before.NextOffset,
				}
				if diff := cmp.Diff(wantSt, p.Stats()); diff != "" {
					t.Fatalf("stats (-want +got):\n%s", diff)
				}
				var keep []appended
				for _, r := range recs {
					if r.base >= first {
						keep = append(keep, r)
					}
				}
				checkSame(t, p, keep)
				for _, s := range segs[:gone] {
					if _, err := os.Stat(s.logPath); !os.IsNotExist(err) {
						t.Fatalf("%s still exists: %v", s.logPath, err)
					}
				}
				buf := make([]byte, held.Extents[0].Len)
				if _, err := held.Extents[0].ReadAt(buf, 0); err != nil {
					t.Fatalf("held extent unreadable after removal: %v", err)
				}
				if string(buf) != string(recs[0].rec) {
					t.Fatal("held extent changed")
				}
				held.Release()
				// A read from offset 0 starts at the oldest retained record.
				var r ReadResult
				must(t, p.Read(&r, 0, 1, 0))
				if r.Extents[0].FirstOffset != first {
					t.Fatalf("read from 0 starts at %d, want %d", r.Extents[0].FirstOffset, first)
				}
				r.Release()
				mustClose(t, p)
				p = mustOpen(t, dir, o)
				if diff := cmp.Diff(wantSt, p.Stats()); diff != "" {
					t.Fatalf("stats after reopen (-want +got):\n%s", diff)
				}
				checkSame(t, p, keep)
				mustClose(t, p)
			})
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPurge(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		dir := t.TempDir()
		opts.SegmentBytes = 1500
		p := mustOpen(t, dir, opts)
		appendN(t, p, 40, 1)
		must(t, p.Offsets().Store(KindConsumer, 7, 12))
		must(t, p.Offsets().Store(KindGroup, 1, 3))
		var held ReadResult
		must(t, p.Read(&held, 0, 1000, 0))
		must(t, p.Purge())
		want := Stats{Segments: 1}
		if diff := cmp.Diff(want, p.Stats()); diff != "" {
			t.Fatalf("stats after purge (-want +got):\n%s", diff)
		}
		if _, ok := p.Offsets().Get(KindConsumer, 7); ok {
			t.Fatal("consumer offset survived purge")
		}
		if got := readRecords(t, p, 0); len(got) != 0 {
			t.Fatalf("%d records after purge", len(got))
		}
		for _, e := range held.Extents {
			buf := make([]byte, e.Len)
			if _, err := e.ReadAt(buf, 0); err != nil {
				t.Fatalf("held extent after purge: %v", err)
			}
		}
		held.Release()
		recs := appendN(t, p, 5, 2)
		if recs[0].base != 0 {
			t.Fatalf("offset after purge %d, want 0", recs[0].base)
		}
		checkSame(t, p, recs)
		mustClose(t, p)
		p = mustOpen(t, dir, opts)
		checkSame(t, p, recs)
		if _, ok := p.Offsets().Get(KindGroup, 1); ok {
			t.Fatal("group offset survived purge and reopen")
		}
		mustClose(t, p)
	})
}

// TestPurgeInterrupted simulates a crash in the middle of a purge: the
// marker is present with old segments and offsets still on disk.
func TestPurgeInterrupted(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Format: fakeFormat{}, SegmentBytes: 1500}
	p := mustOpen(t, dir, opts)
	appendN(t, p, 30, 1)
	must(t, p.Offsets().Store(KindConsumer, 1, 5))
	mustClose(t, p)
	must(t, os.WriteFile(filepath.Join(dir, purgeMarkerName), nil, 0o644))
	// Part of the purge already happened: the oldest segment is gone.
	logs := segmentLogs(t, dir)
	must(t, os.Remove(logs[0]))
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	if diff := cmp.Diff(Stats{Segments: 1}, p.Stats()); diff != "" {
		t.Fatalf("stats (-want +got):\n%s", diff)
	}
	if _, ok := p.Offsets().Get(KindConsumer, 1); ok {
		t.Fatal("offset survived")
	}
	if _, err := os.Stat(filepath.Join(dir, purgeMarkerName)); !os.IsNotExist(err) {
		t.Fatalf("marker left: %v", err)
	}
}
