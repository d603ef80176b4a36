package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendReadRoll(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		for _, tc := range []struct {
			name     string
			segBytes int64
			records  int
		}{
			{"one segment", 1 << 20, 50},
			{"many segments", 2048, 120},
			{"segment per record", 1, 20},
		} {
			t.Run(tc.name, func(t *testing.T) {
				opts.SegmentBytes = tc.segBytes
				p := mustOpen(t, t.TempDir(), opts)
				defer mustClose(t, p)
				want := appendN(t, p, tc.records, 7)
				next := uint64(0)
				for i, a := range want {
					if a.base != next {
						t.Fatalf("record %d base %d, want %d", i, a.base, next)
					}
					next += uint64(a.count)
				}
				checkSame(t, p, want)
				st := p.Stats()
				var bytesTotal uint64
				for _, a := range want {
					bytesTotal += uint64(len(a.rec))
				}
				wantSt := Stats{Messages: next, Bytes: bytesTotal, Segments: st.Segments, FirstOffset: 0, NextOffset: next}
				if diff := cmp.Diff(wantSt, st); diff != "" {
					t.Fatalf("stats (-want +got):\n%s", diff)
				}
				if tc.segBytes == 1 && st.Segments != tc.records+1 {
					t.Fatalf("segments %d, want %d", st.Segments, tc.records+1)
				}
				if tc.segBytes == 1<<20 && st.Segments != 1 {
					t.Fatalf("segments %d, want 1", st.Segments)
				}
				// Every offset is found in the record that holds it.
				for _, a := range want {
					for d := uint64(0); d < uint64(a.count); d++ {
						var r ReadResult
						if err := p.Read(&r, a.base+d, 1, 0); err != nil {
							t.Fatal(err)
						}
						if len(r.Extents) != 1 || r.Extents[0].FirstOffset != a.base || r.Extents[0].Len != int64(len(a.rec)) {
							t.Fatalf("offset %d: extents %+v", a.base+d, r.Extents)
						}
						r.Release()
					}
				}
			})
		}
	})
}

func TestReopenContinues(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		for _, verify := range []bool{false, true} {
			name := "trust-index"
			if verify {
				name = "verify-sealed"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				opts.SegmentBytes = 3000
				opts.VerifySealed = verify
				p := mustOpen(t, dir, opts)
				want := appendN(t, p, 40, 1)
				st := p.Stats()
				mustClose(t, p)

				p = mustOpen(t, dir, opts)
				if diff := cmp.Diff(st, p.Stats()); diff != "" {
					t.Fatalf("stats after reopen (-before +after):\n%s", diff)
				}
				checkSame(t, p, want)
				more := appendN(t, p, 10, 3)
				if more[0].base != st.NextOffset {
					t.Fatalf("next base %d, want %d", more[0].base, st.NextOffset)
				}
				if more[0].ts < want[len(want)-1].ts {
					t.Fatalf("timestamp went back: %d < %d", more[0].ts, want[len(want)-1].ts)
				}
				want = append(want, more...)
				checkSame(t, p, want)
				mustClose(t, p)
				p = mustOpen(t, dir, opts)
				checkSame(t, p, want)
				mustClose(t, p)
			})
		}
	})
}

func TestReadLimits(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 1000
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		// Records of 3 messages and 132 bytes each: offsets 3k..3k+2.
		var recs []appended
		for i := range 30 {
			rec := makeRecord(3, 100, byte(i))
			res, err := p.Append(rec, 3)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, appended{base: res.BaseOffset, count: 3, rec: rec})
		}
		const recLen = 132
		for _, tc := range []struct {
			name      string
			from, max uint64
			maxBytes  int64
			first     uint64 // FirstOffset of the first extent
			end       uint64 // EndOffset of the last extent
			bytes     int64
		}{
			{"from zero one message", 0, 1, 0, 0, 3, recLen},
			{"mid record", 4, 1, 0, 3, 6, recLen},
			{"across records", 4, 3, 0, 3, 9, 2 * recLen},
			{"across segments", 0, 90, 0, 0, 90, 30 * recLen},
			{"past end clamps", 85, 1000, 0, 84, 90, 2 * recLen},
			{"at end", 90, 5, 0, 0, 0, 0},
			{"beyond end", 1000, 5, 0, 0, 0, 0},
			{"byte limit", 0, 90, 3 * recLen, 0, 9, 3 * recLen},
			{"byte limit mid", 0, 90, 3*recLen + 10, 0, 9, 3 * recLen},
			{"byte limit below one record", 7, 90, 5, 6, 9, recLen},
			{"zero count", 0, 0, 0, 0, 0, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var r ReadResult
				defer r.Release()
				if err := p.Read(&r, tc.from, tc.max, tc.maxBytes); err != nil {
					t.Fatal(err)
				}
				var total int64
				for _, e := range r.Extents {
					total += e.Len
				}
				if total != tc.bytes {
					t.Fatalf("bytes %d, want %d (extents %+v)", total, tc.bytes, r.Extents)
				}
				if tc.bytes == 0 {
					return
				}
				if r.Extents[0].FirstOffset != tc.first || r.Extents[len(r.Extents)-1].EndOffset != tc.end {
					t.Fatalf("range %d..%d, want %d..%d", r.Extents[0].FirstOffset, r.Extents[len(r.Extents)-1].EndOffset, tc.first, tc.end)
				}
				if r.Messages() != tc.end-tc.first {
					t.Fatalf("messages %d", r.Messages())
				}
				var got []byte
				for _, e := range r.Extents {
					b := make([]byte, e.Len)
					if _, err := e.ReadAt(b, 0); err != nil {
						t.Fatal(err)
					}
					got = append(got, b...)
				}
				var want []byte
				for _, a := range recs[tc.first/3 : tc.end/3] {
					want = append(want, a.rec...)
				}
				if !bytes.Equal(got, want) {
					t.Fatal("bytes differ")
				}
			})
		}
	})
}

func TestOffsetForTimestamp(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		clk := newFakeClock()
		opts.Clock = clk.Now
		opts.SegmentBytes = 600
		p := mustOpen(t, t.TempDir(), opts)
		defer mustClose(t, p)
		var recs []appended
		for i := range 20 {
			clk.Advance(10 * 1e3 * 1e3) // 10 ms... in ns
			recs = append(recs, appendN(t, p, 1, i)...)
			if i%3 == 0 { // two records with the same timestamp
				recs = append(recs, appendN(t, p, 1, i+100)...)
			}
		}
		for _, tc := range []struct {
			name string
			ts   uint64
			want int // index in recs, -1 none
		}{
			{"before all", 0, 0},
			{"exact first", recs[0].ts, 0},
			{"between", recs[5].ts + 1, 6},
			{"exact shared", recs[3].ts, 2},
			{"last", recs[len(recs)-1].ts, len(recs) - 2},
			{"after all", recs[len(recs)-1].ts + 1, -1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				off, ok, err := p.OffsetForTimestamp(tc.ts)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.want
				if want >= 0 {
					// The first record with that timestamp or later.
					for want > 0 && recs[want-1].ts >= tc.ts {
						want--
					}
					for recs[want].ts < tc.ts {
						want++
					}
				}
				if want < 0 {
					if ok {
						t.Fatalf("found %d, want none", off)
					}
					return
				}
				if !ok || off != recs[want].base {
					t.Fatalf("got %d,%v want %d", off, ok, recs[want].base)
				}
			})
		}
	})
}

func TestAppendErrors(t *testing.T) {
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, MaxRecordBytes: 100})
	for _, tc := range []struct {
		name  string
		rec   []byte
		count uint32
		want  error
	}{
		{"empty", nil, 1, ErrEmptyRecord},
		{"zero count", makeRecord(1, 1, 0), 0, ErrEmptyRecord},
		{"too large", makeRecord(1, 200, 0), 1, ErrRecordTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := p.Append(tc.rec, tc.count); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	mustClose(t, p)
	if _, err := p.Append(makeRecord(1, 1, 0), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if err := p.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := Open(t.TempDir(), Options{}); err == nil {
		t.Fatal("open without format succeeded")
	}
}

func TestSegmentFiles(t *testing.T) {
	dir := t.TempDir()
	p := mustOpen(t, dir, Options{Format: fakeFormat{}, SegmentBytes: 1})
	recs := appendN(t, p, 3, 0)
	mustClose(t, p)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	s1 := segmentStem(uint64(recs[1].base))
	s2 := segmentStem(uint64(recs[2].base))
	s3 := segmentStem(recs[2].base + uint64(recs[2].count))
	want := []string{
		"00000000000000000000.index", "00000000000000000000.log",
		s1 + ".index", s1 + ".log", s2 + ".index", s2 + ".log", s3 + ".index", s3 + ".log",
		"offsets",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	idx, err := os.ReadFile(filepath.Join(dir, s1+".index"))
	if err != nil {
		t.Fatal(err)
	}
	wantIdx := IndexEntry{Offset: recs[1].base, Timestamp: recs[1].ts, Position: 0}.AppendTo(nil)
	if !bytes.Equal(idx, wantIdx) {
		t.Fatalf("index %x, want %x", idx, wantIdx)
	}
	if got := segmentStem(12345); got != "00000000000000012345" {
		t.Fatalf("stem %q", got)
	}
	for _, tc := range []struct {
		name string
		ok   bool
		v    uint64
	}{
		{"00000000000000012345.log", true, 12345},
		{"18446744073709551615.log", true, 1<<64 - 1},
		{"99999999999999999999.log", false, 0},
		{"0000000000000001234a.log", false, 0},
		{"0000000000000012345.log", false, 0},
		{"00000000000000012345.index", false, 0},
	} {
		v, ok := parseSegmentName(tc.name, logSuffix)
		if ok != tc.ok || v != tc.v {
			t.Errorf("%s: %d %v", tc.name, v, ok)
		}
	}
}
