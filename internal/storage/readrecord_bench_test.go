package storage

import (
	"testing"
)

// BenchmarkReadRecord1MiB reads 1 MiB records by base offset into a reused
// buffer: from sealed segments, from the revealed part of the active
// segment (both lock-free) and, in held mode, from its unrevealed tail
// (located under the partition lock). It must not allocate.
func BenchmarkReadRecord1MiB(b *testing.B) {
	const recBytes, count = 1 << 20, 100
	for _, tc := range []struct {
		name   string
		held   bool
		sealed bool // read records of sealed segments
	}{
		{"sealed", false, true},
		{"active-revealed", false, false},
		{"active-unrevealed", true, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			segBytes := int64(64 << 20)
			if tc.sealed {
				segBytes = 4 << 20
			}
			p := mustOpen(b, b.TempDir(), Options{Format: benchFormat{}, Held: tc.held,
				SegmentBytes: segBytes, FlushInterval: -1})
			defer mustClose(b, p)
			rec := makeRecord(count, recBytes-fakeHeaderLen, 1)
			var bases []uint64
			for range 16 {
				res, err := p.Append(rec, count)
				if err != nil {
					b.Fatal(err)
				}
				bases = append(bases, res.BaseOffset)
			}
			if tc.sealed {
				bases = bases[:8] // the first segments are sealed by then
				if len(sealedSegmentsOf(p)) < 2 {
					b.Fatal("no sealed segments")
				}
			}
			dst := make([]byte, 0, recBytes)
			b.SetBytes(recBytes)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				out, n, err := p.ReadRecord(dst[:0], bases[i%len(bases)])
				if err != nil || n != count || len(out) != recBytes {
					b.Fatalf("read record: %d bytes, count %d, %v", len(out), n, err)
				}
				i++
			}
		})
	}
}
