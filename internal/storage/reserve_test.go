//go:build unix

package storage

import (
	"os"
	"syscall"
	"testing"
)

// allocated returns the bytes of disk the file at path occupies.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no block counts on this platform")
	}
	return st.Blocks * 512
}

// TestReserveAhead: the active segment gets space reserved ahead of its
// end in growing steps, without changing its size; sealing trims the
// reservation, so a sealed segment occupies about its size.
func TestReserveAhead(t *testing.T) {
	const segBytes = 8 << 20
	p := mustOpen(t, t.TempDir(), Options{Format: fakeFormat{}, SegmentBytes: segBytes, FlushInterval: -1})
	defer mustClose(t, p)
	rec := func(i int) []byte { return makeRecord(1, 64<<10, byte(i)) }
	if _, err := p.Append(rec(0), 1); err != nil {
		t.Fatal(err)
	}
	seg := p.segs.Load().segs[0]
	if seg.noReserve {
		t.Skip("the file system refuses fallocate")
	}
	size := seg.size
	if seg.reserved < 2*size || !seg.preallocated {
		t.Fatalf("reserved %d after writing %d", seg.reserved, size)
	}
	if fi, _ := os.Stat(seg.logPath); fi.Size() != size {
		t.Fatalf("file size %d, want the written %d", fi.Size(), size)
	}
	if a := allocated(t, seg.logPath); a < 2*size {
		t.Fatalf("%d bytes allocated for a reservation of %d", a, seg.reserved)
	}
	// Fill past the segment size: the reservation never passes it, and
	// the sealed segment is trimmed to what it holds.
	for i := 1; len(p.segs.Load().segs) == 1; i++ {
		if seg.reserved > segBytes {
			t.Fatalf("reserved %d past the segment size %d", seg.reserved, segBytes)
		}
		if _, err := p.Append(rec(i), 1); err != nil {
			t.Fatal(err)
		}
	}
	if a := allocated(t, seg.logPath); a > seg.sealedSize+64<<10 {
		t.Fatalf("sealed segment of %d bytes still occupies %d", seg.sealedSize, a)
	}
}
