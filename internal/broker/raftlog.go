package broker

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
)

// raftLogs keeps the durable raft logs the broker opened, to close them
// after the host stopped.
type raftLogs struct {
	mu   sync.Mutex
	logs []*raftlog.Log
}

// open opens the raft log of one group in dir; sync makes every append
// reach the disk before raft acknowledges it.
func (r *raftLogs) open(dir string, sync bool, log *slog.Logger) (replication.LogStorage, error) {
	l, err := raftlog.Open(dir, raftlog.Options{Sync: sync, Logger: log})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.logs = append(r.logs, l)
	r.mu.Unlock()
	return l, nil
}

// close closes every log opened so far.
func (r *raftLogs) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, l := range r.logs {
		errs = append(errs, l.Close())
	}
	r.logs = nil
	return errors.Join(errs...)
}
