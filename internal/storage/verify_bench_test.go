package storage

import (
	"testing"
)

// BenchmarkReadUnverified reads 1000 x 1 KB batch records of sealed
// segments that Open trusted without reading them (VerifySealed off), in
// order, with pread into a caller buffer: "first" resets the segments to
// unverified whenever the reader wraps around, so every read verifies the
// record it returns first (pread + Format.Verify, which hashes the whole
// record as the wire batch's frame checksums do); "verified" reads the
// same records once they are verified (the path of every later read).
func BenchmarkReadUnverified(b *testing.B) {
	const records = 192 // 3 sealed segments of 64 records, plus the active one
	dir := b.TempDir()
	opts := Options{Format: fakeFormat{}, SegmentBytes: 64 << 20, FlushInterval: -1}
	p := mustOpen(b, dir, opts)
	rec := benchRecord()
	for range records + 8 {
		if _, err := p.Append(rec, benchMsgs); err != nil {
			b.Fatal(err)
		}
	}
	mustClose(b, p)
	p = mustOpen(b, dir, opts)
	defer mustClose(b, p)
	sealed := sealedSegmentsOf(p)
	end := sealed[len(sealed)-1].sealedEnd
	unverify := func() {
		for _, s := range sealed {
			s.vmu.Lock()
			s.verified.Store(0)
			s.nspans = 0
			s.vmu.Unlock()
		}
	}
	for _, tc := range []struct {
		name  string
		reset bool
	}{{"first", true}, {"verified", false}} {
		b.Run(tc.name, func(b *testing.B) {
			unverify()
			if !tc.reset {
				for _, s := range sealed {
					s.markVerified()
				}
			}
			var r ReadResult
			defer r.Release()
			buf := make([]byte, len(rec))
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			from := uint64(0)
			for b.Loop() {
				if from >= end {
					from = 0
					if tc.reset {
						unverify()
					}
				}
				if err := p.Read(&r, from, benchMsgs, 0); err != nil || len(r.Extents) != 1 {
					b.Fatalf("read from %d: %d extents, %v", from, len(r.Extents), err)
				}
				e := &r.Extents[0]
				if _, err := e.ReadAt(buf[:e.Len], 0); err != nil {
					b.Fatal(err)
				}
				from = e.EndOffset
			}
		})
	}
}
