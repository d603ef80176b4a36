package replicated

import (
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Errors of prepare. Those a client may see wrap replication.ErrPending
// (57) or replication.ErrRefused (58), so replication.Transient answers
// them like every other proposal failure.
var (
	errInFlight  = fmt.Errorf("partition: the same request is in flight in the raft log: %w", replication.ErrPending)
	errDuplicate = errors.New("partition: the same request is already committed")
	errReplaying = fmt.Errorf("partition: the raft log is still being replayed: %w", replication.ErrRefused)
	// errPurgePending: a purge entry in the log has not applied yet; the
	// handler retries the batch (see stampLog.purging).
	errPurgePending = fmt.Errorf("partition: a purge in the raft log has not applied yet: %w", replication.ErrRefused)
	// ErrPurgeKnown is the refusal of a purge whose identity is already in
	// the leader's log or applied: it is not proposed again.
	ErrPurgeKnown = errors.New("partition: this purge is already in the raft log")
)
