package broker

import "github.com/iggo-dev/iggo/internal/replication"

// replicatedMetadata is what the metadata group's machine needs of the
// metadata store (metadata.Store in a server).
type replicatedMetadata interface {
	ApplyReplicated(index, term uint64, data []byte)
	SnapshotReplicated() ([]byte, error)
	RestoreReplicated(index uint64, data []byte) error
}

// metadataMachine is the metadata group's state machine: the metadata
// store, plus the cluster's bookkeeping around it. While an entry applies,
// cl.liveApply is set (partitionVoters reads the metadata voters only
// then); a restored snapshot moves cl.compacted up to its index (the
// metadata raft log now starts after it).
type metadataMachine struct {
	store replicatedMetadata
	cl    *cluster
}

var _ replication.GroupMachine = metadataMachine{}

// Apply applies one committed metadata entry.
func (m metadataMachine) Apply(e replication.Entry) {
	m.cl.liveApply.Store(true)
	m.store.ApplyReplicated(e.Index, e.Term, e.Data)
	m.cl.liveApply.Store(false)
}

// Snapshot is the store's state for a compaction of the metadata log.
func (m metadataMachine) Snapshot() ([]byte, error) { return m.store.SnapshotReplicated() }

// Restore installs a snapshot received from the metadata leader.
func (m metadataMachine) Restore(index uint64, data []byte) error {
	if err := m.store.RestoreReplicated(index, data); err != nil {
		return err
	}
	if index > m.cl.compacted.Load() {
		m.cl.compacted.Store(index) // the log now starts after it
	}
	return nil
}
