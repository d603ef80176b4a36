package raftlog

import (
	"fmt"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

// BenchmarkAppend measures Append of one entry per call (the host's
// common case: one Ready, one proposal), with and without fsync.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("entry=%dKiB/sync=%v", size>>10, sync), func(b *testing.B) {
				l := openT(b, b.TempDir(), Options{Sync: sync})
				defer func() { _ = l.Close() }()
				data := make([]byte, size)
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := range b.N {
					if err := l.Append([]*pb.Entry{mkEntry(uint64(i+1), 1, data)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAppendBatch64x1KiB measures Append of 64 small entries per
// call (a busy group's Ready).
func BenchmarkAppendBatch64x1KiB(b *testing.B) {
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			l := openT(b, b.TempDir(), Options{Sync: sync})
			defer func() { _ = l.Close() }()
			data := make([]byte, 1<<10)
			b.SetBytes(64 << 10)
			next := uint64(1)
			batch := make([]*pb.Entry, 64)
			b.ResetTimer()
			for range b.N {
				for k := range batch {
					batch[k] = mkEntry(next, 1, data)
					next++
				}
				if err := l.Append(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
