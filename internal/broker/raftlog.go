package broker

import (
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
)

// raftLogs keeps the durable raft logs the broker opened, to close them
// after the host stopped.
type raftLogs struct {
	mu   sync.Mutex
	logs []*raftlog.Log
	// pruneAt is the length at which open next drops closed logs.
	pruneAt int
}

// open opens the raft log of one group in dir; sync makes every append
// reach the disk before raft acknowledges it.
func (r *raftLogs) open(dir string, sync bool, log *slog.Logger) (replication.LogStorage, error) {
	l, err := raftlog.Open(dir, raftlog.Options{Sync: sync, Logger: log})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	// Logs their groups closed (deleted partitions) are dropped whenever
	// the list has doubled since the last look (amortized O(1) per open).
	if len(r.logs) >= r.pruneAt {
		r.logs = slices.DeleteFunc(r.logs, (*raftlog.Log).Closed)
		r.pruneAt = max(64, 2*len(r.logs))
	}
	r.logs = append(r.logs, l)
	r.mu.Unlock()
	return l, nil
}

// close closes every log opened so far. A log its group closed already
// (a partition group whose start failed, or was removed) is not an error.
func (r *raftLogs) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, l := range r.logs {
		if err := l.Close(); !errors.Is(err, raftlog.ErrClosed) {
			errs = append(errs, err)
		}
	}
	r.logs = nil
	return errors.Join(errs...)
}
