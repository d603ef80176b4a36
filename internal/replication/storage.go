package replication

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// LogStorage is a group's raft log and state: what raft reads
// (raft.Storage) plus what the host writes from each Ready. The host
// calls it from its event loop only, in this order per Ready: ApplySnapshot
// (if any), Append, SetHardState. A follower's messages are sent only
// after that, so an implementation that returns from Append has made the
// entries as durable as it promises; a leader's messages may already be
// on their way while Append runs (see Host.handleReady), so Append must
// not modify the entries or their data (the transport may be marshalling
// the same entries concurrently).
//
// Two adapters are planned (docs/CLUSTER.md): the metadata journal as the
// metadata group's log, and a partition's segment files as its log.
type LogStorage interface {
	raft.Storage
	// Append stores entries, truncating any conflicting suffix first.
	Append(entries []*raftpb.Entry) error
	// SetHardState stores term, vote and commit.
	SetHardState(st *raftpb.HardState) error
	// ApplySnapshot replaces the log with snap (a follower catching up).
	ApplySnapshot(snap *raftpb.Snapshot) error
	// CreateSnapshot records a snapshot of the state machine at index i.
	CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (*raftpb.Snapshot, error)
	// Compact discards entries up to compactIndex (kept in the snapshot).
	Compact(compactIndex uint64) error
}

// DeferredSync is a LogStorage whose Append can leave its fsync for later,
// so that the host syncs the appends of every group of one loop pass at
// once instead of one after another (Host.processReady). AppendDeferred
// is Append without waiting for durability; sync, when not nil, makes the
// entries as durable as Append would have made them. sync may run on
// another goroutine, concurrently with the syncs of other groups' logs;
// nothing else touches the storage until it returned. A group's messages
// that promise persistence (a follower's acknowledgements) and its
// applies wait for it.
type DeferredSync interface {
	AppendDeferred(entries []*raftpb.Entry) (sync func() error, err error)
}

// NewMemoryLog returns an in-memory LogStorage (raft's MemoryStorage),
// for tests and for groups whose log need not survive a restart.
func NewMemoryLog() LogStorage { return raft.NewMemoryStorage() }

var _ LogStorage = (*raft.MemoryStorage)(nil)

// isEmpty reports whether s holds no state at all (a fresh group).
func isEmpty(s LogStorage) (bool, error) {
	hs, cs, err := s.InitialState()
	if err != nil {
		return false, err
	}
	last, err := s.LastIndex()
	if err != nil {
		return false, err
	}
	return raft.IsEmptyHardState(hs) && last == 0 && len(cs.GetVoters()) == 0 && len(cs.GetLearners()) == 0, nil
}
