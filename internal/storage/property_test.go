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
	tmpRoot := fastTempDir(t)
	maxPerSegment := 0
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp(tmpRoot, "storage-prop")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		clk := newFakeClock()
		opts := Options{
			Format:        fakeFormat{},
			SegmentBytes:  rapid.SampledFrom([]int64{1, 500, 4000, 12000}).Draw(rt, "segmentBytes"),
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
		// Small records make sealed segments span several index blocks
		// (fenceStride entries each).
		n := rapid.SampledFrom([]int{1, 7, 60, 400}).Draw(rt, "records")
		payloadMax := rapid.SampledFrom([]int{8, 300}).Draw(rt, "payloadMax")
		for i := range n {
			clk.Advance(time.Duration(rapid.IntRange(0, 3).Draw(rt, "tick")) * time.Millisecond)
			count := uint32(rapid.IntRange(1, 20).Draw(rt, "count"))
			size := rapid.IntRange(0, payloadMax).Draw(rt, "payload")
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
		for _, s := range p.segs.Load().segs {
			if s.mem.Load() == nil {
				maxPerSegment = max(maxPerSegment, s.sealedN)
			}
		}
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
	t.Logf("largest sealed segment: %d records", maxPerSegment)
}

// TestSealedLookupBlocks checks every offset and timestamp lookup in sealed
// segments spanning several index blocks (fence + one block read), before
// and after reopening (fence built at seal time, then from the index file).
func TestSealedLookupBlocks(t *testing.T) {
	dir := fastTempDir(t)
	clk := newFakeClock()
	opts := Options{Format: fakeFormat{}, SegmentBytes: 60000, Clock: clk.Now, FlushInterval: -1}
	p := mustOpen(t, dir, opts)
	var recs []appended
	for i := range 1200 {
		if i%3 == 0 {
			clk.Advance(time.Millisecond) // three records per timestamp
		}
		recs = append(recs, appendN(t, p, 1, i)...)
	}
	check := func(t *testing.T) {
		segs := p.segs.Load().segs
		if segs[0].mem.Load() != nil || segs[0].sealedN <= 2*fenceStride {
			t.Fatalf("first segment not sealed or too small (%d records)", segs[0].sealedN)
		}
		var r ReadResult
		defer r.Release()
		for i, a := range recs {
			for d := range uint64(a.count) {
				must(t, p.Read(&r, a.base+d, 1, 0))
				if len(r.Extents) != 1 || r.Extents[0].FirstOffset != a.base || r.Extents[0].EndOffset != a.base+uint64(a.count) {
					t.Fatalf("offset %d (record %d): extents %+v", a.base+d, i, r.Extents)
				}
			}
			if i == 0 || recs[i-1].ts < a.ts {
				off, ok, err := p.OffsetForTimestamp(a.ts)
				if err != nil || !ok || off != a.base {
					t.Fatalf("timestamp of record %d: %d,%v,%v want %d", i, off, ok, err, a.base)
				}
				off, ok, err = p.OffsetForTimestamp(a.ts - 1)
				if err != nil || !ok || off != a.base {
					t.Fatalf("timestamp before record %d: %d,%v,%v want %d", i, off, ok, err, a.base)
				}
			}
		}
	}
	t.Run("sealed in process", check)
	mustClose(t, p)
	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	t.Run("after reopen", check)
}
