package raftlog

import (
	"errors"
	"math"
	"sync"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// TestConcurrentReadersAndWriter runs readers against a writer that
// appends, truncates, sets hard state and compacts (run it with -race).
// Readers check that whatever they get is a consistent run of entries.
func TestConcurrentReadersAndWriter(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentBytes: 4096, CacheBytes: 4096})
	defer func() { _ = l.Close() }()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				first, _ := l.FirstIndex()
				last, _ := l.LastIndex()
				if last < first {
					continue
				}
				ents, err := l.Entries(first, last+1, math.MaxUint64)
				if errors.Is(err, raft.ErrCompacted) || errors.Is(err, raft.ErrUnavailable) {
					continue // raced with a compaction or truncation
				}
				if err != nil {
					t.Error(err)
					return
				}
				for k, e := range ents {
					if e.GetIndex() != first+uint64(k) {
						t.Errorf("entry %d at position %d of a read from %d", e.GetIndex(), k, first)
						return
					}
				}
				_, _ = l.Term(last)
				_, _, _ = l.InitialState()
			}
		})
	}
	next := uint64(1)
	for round := range uint64(300) {
		batch := make([]*pb.Entry, 5)
		for k := range batch {
			batch[k] = mkEntry(next, round+1, make([]byte, 100))
			next++
		}
		if err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
		if round%7 == 0 { // a conflicting suffix
			next -= 2
		}
		if err := l.SetHardState(&pb.HardState{Term: new(round/10 + 1), Vote: new(uint64(1)), Commit: new(next - 3)}); err != nil {
			t.Fatal(err)
		}
		if round%50 == 49 {
			if err := l.Compact(next - 10); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
}
