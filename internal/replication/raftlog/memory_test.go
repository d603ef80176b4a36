package raftlog

import (
	"math"
	"runtime"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryBoundedByCacheNotLog appends 200 MiB of 1 MiB entries with a
// 4 MiB cache and checks the heap grows by far less than the data.
func TestMemoryBoundedByCacheNotLog(t *testing.T) {
	const entryBytes, count = 1 << 20, 200
	l := openT(t, t.TempDir(), Options{CacheBytes: 4 << 20, SegmentBytes: 16 << 20})
	defer func() { _ = l.Close() }()
	before := heapInUse()
	for i := range uint64(count) {
		data := make([]byte, entryBytes)
		data[0], data[entryBytes-1] = byte(i), byte(i>>8)
		if err := l.Append([]*pb.Entry{mkEntry(i+1, 1, data)}); err != nil {
			t.Fatal(err)
		}
	}
	grew := int64(heapInUse()) - int64(before)
	t.Logf("heap grew %d KiB for %d MiB appended", grew>>10, count*entryBytes>>20)
	// Cache (4 MiB) + the reusable write buffer (about 2 MiB) + index.
	if grew > 12<<20 {
		t.Fatalf("heap grew %d MiB for %d MiB of entries", grew>>20, count*entryBytes>>20)
	}
	// Old entries are still served, from the files.
	got, err := l.Entries(1, 3, math.MaxUint64)
	if err != nil || len(got) != 2 || got[0].GetData()[0] != 0 || got[1].GetData()[0] != 1 {
		t.Fatalf("entries(1, 3): %d entries, %v", len(got), err)
	}
}

// TestIndexCostPerEntry checks the per-entry memory of a long log of
// small entries with the cache off: about 24 bytes each.
func TestIndexCostPerEntry(t *testing.T) {
	const count = 200_000
	l := openT(t, t.TempDir(), Options{CacheBytes: -1})
	defer func() { _ = l.Close() }()
	before := heapInUse()
	batch := make([]*pb.Entry, 0, 1000)
	for i := uint64(1); i <= count; i++ {
		batch = append(batch, mkEntry(i, 1, []byte("0123456789abcdef0123456789abcdef")))
		if len(batch) == cap(batch) {
			if err := l.Append(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	grew := int64(heapInUse()) - int64(before)
	perEntry := float64(grew) / count
	t.Logf("%.1f bytes per entry", perEntry)
	// 24 bytes per entry, slice growth up to 2x, plus the write buffer.
	if perEntry > 60 {
		t.Fatalf("%.1f bytes per entry", perEntry)
	}
}
