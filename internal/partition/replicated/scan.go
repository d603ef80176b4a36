package replicated

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Scans over a partition group's raft log (the headers: segLog's inner
// log), a chunk of entries per read.

// scanChunk is how many entries one read of a scan takes.
const scanChunk = 256

// forEntries calls fn for the entries lo..hi of l in index order until fn
// returns false or an error.
func forEntries(l replication.LogStorage, lo, hi uint64, fn func(*raftpb.Entry) (bool, error)) error {
	for ; lo <= hi && lo > 0; lo += scanChunk {
		ents, err := l.Entries(lo, min(lo+scanChunk, hi+1), ^uint64(0))
		if err != nil {
			return fmt.Errorf("raft log entries from %d: %w", lo, err)
		}
		for _, e := range ents {
			if more, err := fn(e); err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// forEntriesBack calls fn for the entries of l from hi down to its first
// index until fn returns false or an error.
func forEntriesBack(l replication.LogStorage, hi uint64, fn func(*raftpb.Entry) (bool, error)) error {
	first, err := l.FirstIndex()
	if err != nil {
		return fmt.Errorf("raft log: %w", err)
	}
	for hi >= first && hi > 0 {
		lo := first
		if hi-first+1 > scanChunk {
			lo = hi - scanChunk + 1
		}
		ents, err := l.Entries(lo, hi+1, ^uint64(0))
		if err != nil {
			return fmt.Errorf("raft log entries %d..%d: %w", lo, hi, err)
		}
		for i := len(ents) - 1; i >= 0; i-- {
			if more, err := fn(ents[i]); err != nil || !more {
				return err
			}
		}
		hi = lo - 1
	}
	return nil
}
