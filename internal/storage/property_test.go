package storage

import (
	"bytes"
	"os"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestIndexLookupProperty checks offset and timestamp lookups against a
// simple model over random logs: random record sizes, message counts,
// timestamps (with repeats), segment sizes, and reopening (sealed segments
// are then served from the index file, the active one from memory).
func TestIndexLookupProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "storage-prop")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		clk := newFakeClock()
		opts := Options{
			Format:        fakeFormat{},
			SegmentBytes:  rapid.Int64Range(1, 4000).Draw(rt, "segmentBytes"),
			Clock:         clk.Now,
			FlushInterval: -1,
		}
		p, err := Open(dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		type rec struct {
			base  uint64
			count uint32
			ts    uint64
			pos   int // record index
		}
		var model []rec
		n := rapid.IntRange(1, 60).Draw(rt, "records")
		for i := range n {
			clk.Advance(time.Duration(rapid.IntRange(0, 3).Draw(rt, "tick")) * time.Millisecond)
			count := uint32(rapid.IntRange(1, 20).Draw(rt, "count"))
			size := rapid.IntRange(0, 300).Draw(rt, "payload")
			res, err := p.Append(makeRecord(count, size, byte(i)), count)
			if err != nil {
				rt.Fatal(err)
			}
			model = append(model, rec{base: res.BaseOffset, count: count, ts: res.Timestamp, pos: i})
		}
		if rapid.Bool().Draw(rt, "reopen") {
			if err := p.Close(); err != nil {
				rt.Fatal(err)
			}
			if p, err = Open(dir, opts); err != nil {
				rt.Fatal(err)
			}
		}
		defer p.Close()
		end := model[len(model)-1].base + uint64(model[len(model)-1].count)
		var r ReadResult
		defer r.Release()
		for range 30 {
			x := rapid.Uint64Range(0, end+3).Draw(rt, "offset")
			k := rapid.Uint64Range(1, 50).Draw(rt, "count")
			if err := p.Read(&r, x, k, 0); err != nil {
				rt.Fatal(err)
			}
			if x >= end {
				if len(r.Extents) != 0 {
					rt.Fatalf("read at %d past end %d returned extents", x, end)
				}
				continue
			}
			// Model: first record containing x, last containing min(x+k, end)-1.
			first, last := -1, -1
			for i, m := range model {
				if m.base <= x && x < m.base+uint64(m.count) {
					first = i
				}
				if t := min(x+k, end) - 1; m.base <= t && t < m.base+uint64(m.count) {
					last = i
				}
			}
			if len(r.Extents) == 0 || r.Extents[0].FirstOffset != model[first].base ||
				r.Extents[len(r.Extents)-1].LastOffset != model[last].base ||
				r.Extents[len(r.Extents)-1].EndOffset != model[last].base+uint64(model[last].count) {
				rt.Fatalf("read(%d,%d): extents %+v, want records %d..%d", x, k, r.Extents, first, last)
			}
			var got []byte
			for _, e := range r.Extents {
				b := make([]byte, e.Len)
				if _, err := e.ReadAt(b, 0); err != nil {
					rt.Fatal(err)
				}
				got = append(got, b...)
			}
			recs, err := splitRecords(got)
			if err != nil || len(recs) != last-first+1 {
				rt.Fatalf("read(%d,%d): %d records (%v), want %d", x, k, len(recs), err, last-first+1)
			}
			if !bytes.Equal(recs[0][fakeHeaderLen:], makeRecord(model[first].count, len(recs[0])-fakeHeaderLen, byte(first))[fakeHeaderLen:]) {
				rt.Fatalf("record %d payload differs", first)
			}

			ts := rapid.Uint64Range(model[0].ts-1, model[len(model)-1].ts+1).Draw(rt, "ts")
			off, ok, err := p.OffsetForTimestamp(ts)
			if err != nil {
				rt.Fatal(err)
			}
			want := -1
			for i, m := range model {
				if m.ts >= ts {
					want = i
					break
				}
			}
			if (want >= 0) != ok || (ok && off != model[want].base) {
				rt.Fatalf("timestamp %d: got %d,%v want record %d", ts, off, ok, want)
			}
		}
	})
}
