package replication

import (
	"errors"
	"fmt"
)

// Errors of the replication seam. ErrNotLeader and ErrProposalDropped
// mean the entry was never admitted (58, safe to re-issue anywhere);
// ErrProposalLost means a different entry was committed at its index, so
// it will never apply (also 58); ErrOutcomeUnknown means it may or may
// not commit (57). Transient (status.go) is the one place that maps them
// to a status; ErrRefused and ErrPending are there too.
var (
	ErrStopped         = errors.New("replication host stopped")
	ErrUnknownGroup    = errors.New("unknown raft group")
	ErrGroupExists     = errors.New("raft group already exists")
	ErrGroupRemoved    = errors.New("raft group removed")
	ErrNotLeader       = errors.New("not the leader of the raft group")
	ErrProposalDropped = errors.New("proposal dropped by raft")
	ErrProposalLost    = errors.New("proposal lost to a leader change")
	ErrOutcomeUnknown  = errors.New("proposal outcome unknown")
	ErrStorage         = errors.New("raft log storage failed")
	// ErrLogLost: raft found this node's log shorter than what it had
	// acknowledged (its data directory was lost or replaced).
	ErrLogLost = errors.New("this node's raft log lost entries it had acknowledged (data directory lost or replaced)")
	// ErrCompactRange: CompactTo's index is past the applied index or not
	// above the group's current snapshot index.
	ErrCompactRange = errors.New("compaction index out of range")
	// ErrCompactConf: CompactTo's index precedes a configuration change
	// already applied, so the current configuration is not the one as of
	// that index.
	ErrCompactConf = errors.New("compaction index precedes an applied configuration change")
)

// NotLeaderError is ErrNotLeader with the leader this node knows of.
type NotLeaderError struct {
	Group     GroupID
	Leader    NodeID
	HasLeader bool
}

// Error names the group and the leader, when known.
func (e *NotLeaderError) Error() string {
	if !e.HasLeader {
		return fmt.Sprintf("group %d: %v (no leader known)", e.Group, ErrNotLeader)
	}
	return fmt.Sprintf("group %d: %v (leader is replica %d)", e.Group, ErrNotLeader, e.Leader)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }
