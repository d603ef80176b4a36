package storage

import (
	"os"
	"path/filepath"
	"testing"
)

// checkEmptyAt asserts the partition is empty at next with last timestamp
// ts, in one segment.
func checkEmptyAt(t *testing.T, p *Partition, next, ts uint64) {
	t.Helper()
	if first, n := p.Bounds(); first != next || n != next {
		t.Fatalf("bounds %d..%d, want %d..%d", first, n, next, next)
	}
	if n, last := p.Tail(); n != next || last != ts {
		t.Fatalf("tail %d %d, want %d %d", n, last, next, ts)
	}
	if st := p.Stats(); st.Segments != 1 || st.Messages != 0 || st.Bytes != 0 || st.FirstOffset != next || st.NextOffset != next {
		t.Fatalf("stats %+v", st)
	}
	if got := readRecords(t, p, 0); len(got) != 0 {
		t.Fatalf("%d records read", len(got))
	}
}

// TestResetTo: the partition restarts empty at the given offset and
// timestamp, keeps consumer offsets, and stays so across a reopen.
func TestResetTo(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "held"}[held], func(t *testing.T) {
			allPermutations(t, func(t *testing.T, opts Options) {
				opts.Held = held
				opts.SegmentBytes = 500
				dir := t.TempDir()
				p := mustOpen(t, dir, opts)
				recs := appendHeld(t, p, 20, 1)
				p.Reveal(recs[5].base)
				must(t, p.Offsets().Store(KindConsumer, 3, 9))
				must(t, p.Offsets().Store(KindGroup, 4, 2))
				var pinned ReadResult
				must(t, p.Read(&pinned, 0, 100, 0))
				const next, ts = 1000, 5_000_000
				must(t, p.ResetTo(next, ts))
				checkEmptyAt(t, p, next, ts)
				checkNoRecord(t, p, recs[0].base, "before the reset")
				if o, ok := p.Offsets().Get(KindConsumer, 3); !ok || o != 9 {
					t.Fatalf("consumer offset %d %v after reset", o, ok)
				}
				// Extents taken before the reset still read.
				for _, e := range pinned.Extents {
					buf := make([]byte, e.Len)
					if _, err := e.ReadAt(buf, 0); err != nil {
						t.Fatalf("extent after reset: %v", err)
					}
				}
				pinned.Release()
				if logs := segmentLogs(t, dir); len(logs) != 1 || filepath.Base(logs[0]) != segmentStem(next)+logSuffix {
					t.Fatalf("segment files %v", logs)
				}
				if _, err := os.Stat(filepath.Join(dir, resetMarkerName)); !os.IsNotExist(err) {
					t.Fatalf("marker left: %v", err)
				}
				if _, err := os.Stat(filepath.Join(dir, resetStateName)); err != nil {
					t.Fatalf("reset state: %v", err)
				}
				mustClose(t, p)

				// Reopened while empty: offset and timestamp survive.
				p = mustOpen(t, dir, opts)
				checkEmptyAt(t, p, next, ts)
				if o, ok := p.Offsets().Get(KindGroup, 4); !ok || o != 2 {
					t.Fatalf("group offset %d %v after reopen", o, ok)
				}
				res, err := p.Append(makeRecord(2, 30, 1), 2)
				must(t, err)
				if res.BaseOffset != next || res.Timestamp < ts {
					t.Fatalf("append after reset: %+v", res)
				}
				more := appendHeld(t, p, 3, 4)
				p.Reveal(endOf(more))
				if first, n := p.Bounds(); first != next || n != endOf(more) {
					t.Fatalf("bounds %d..%d", first, n)
				}
				mustClose(t, p)
				p = mustOpen(t, dir, opts)
				defer mustClose(t, p)
				p.Reveal(^uint64(0))
				if got := readRecords(t, p, 0); len(got) != 4 {
					t.Fatalf("%d records after reopen, want 4", len(got))
				}
				if n, last := p.Tail(); n != endOf(more) || last != more[2].ts {
					t.Fatalf("tail %d %d", n, last)
				}
			})
		})
	}
}

// TestResetToBackwards: a reset may restart below the old tail and to 0.
func TestResetToBackwards(t *testing.T) {
	opts := Options{Format: fakeFormat{}, Held: true, FlushInterval: -1}
	p := mustOpen(t, t.TempDir(), opts)
	defer mustClose(t, p)
	recs := appendHeld(t, p, 10, 1)
	p.Reveal(endOf(recs))
	must(t, p.ResetTo(5, 7))
	checkEmptyAt(t, p, 5, 7)
	again := appendHeld(t, p, 2, 3)
	if again[0].base != 5 {
		t.Fatalf("append after reset at %d", again[0].base)
	}
	checkNothingRevealed(t, p, 5, endOf(again))
	must(t, p.ResetTo(0, 0))
	checkEmptyAt(t, p, 0, 0)
}

// checkNothingRevealed asserts bounds first..first (nothing revealed) with the tail
// at tail.
func checkNothingRevealed(t *testing.T, p *Partition, first, tail uint64) {
	t.Helper()
	if f, n := p.Bounds(); f != first || n != first {
		t.Fatalf("bounds %d..%d, want %d..%d", f, n, first, first)
	}
	if n, _ := p.Tail(); n != tail {
		t.Fatalf("tail %d, want %d", n, tail)
	}
}

// TestResetToInterrupted simulates crashes during ResetTo: with the marker
// durable, Open completes the reset whatever part of the files is gone; a
// torn marker means nothing was removed yet and is discarded.
func TestResetToInterrupted(t *testing.T) {
	cases := []struct {
		name   string
		marker []byte
		prep   func(t *testing.T, dir string) // the part of the reset done
		reset  bool
	}{
		{"marker only", encodeResetState(700, 42), func(*testing.T, string) {}, true},
		{"some segments removed", encodeResetState(700, 42), func(t *testing.T, dir string) {
			must(t, os.Remove(segmentLogs(t, dir)[0]))
		}, true},
		{"new segment created", encodeResetState(700, 42), func(t *testing.T, dir string) {
			for _, l := range segmentLogs(t, dir) {
				must(t, os.Remove(l))
			}
			must(t, os.WriteFile(filepath.Join(dir, segmentStem(700)+logSuffix), nil, 0o644))
		}, true},
		{"torn marker", encodeResetState(700, 42)[:11], func(*testing.T, string) {}, false},
		{"empty marker", nil, func(*testing.T, string) {}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Format: fakeFormat{}, Held: true, SegmentBytes: 400, FlushInterval: -1}
			dir := t.TempDir()
			p := mustOpen(t, dir, opts)
			recs := appendHeld(t, p, 12, 1)
			p.Reveal(endOf(recs))
			must(t, p.Offsets().Store(KindConsumer, 1, 5))
			mustClose(t, p)
			if len(segmentLogs(t, dir)) < 2 {
				t.Fatal("want several segments")
			}
			must(t, os.WriteFile(filepath.Join(dir, resetMarkerName), tc.marker, 0o644))
			tc.prep(t, dir)

			p = mustOpen(t, dir, opts)
			defer mustClose(t, p)
			if tc.reset {
				checkEmptyAt(t, p, 700, 42)
			} else {
				p.Reveal(^uint64(0))
				checkSame(t, p, recs)
			}
			if o, ok := p.Offsets().Get(KindConsumer, 1); !ok || o != 5 {
				t.Fatalf("consumer offset %d %v", o, ok)
			}
			if _, err := os.Stat(filepath.Join(dir, resetMarkerName)); !os.IsNotExist(err) {
				t.Fatalf("marker left: %v", err)
			}
		})
	}
}

// TestResetStateEncoding: the marker encoding round-trips and rejects any
// damaged or truncated content.
func TestResetStateEncoding(t *testing.T) {
	b := encodeResetState(1<<40+3, 99)
	if next, ts, ok := decodeResetState(b); !ok || next != 1<<40+3 || ts != 99 {
		t.Fatalf("decode %d %d %v", next, ts, ok)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, _, ok := decodeResetState(c); ok {
			t.Fatalf("byte %d flipped, still decodes", i)
		}
	}
	for n := range len(b) {
		if _, _, ok := decodeResetState(b[:n]); ok {
			t.Fatalf("%d bytes decode", n)
		}
	}
}
