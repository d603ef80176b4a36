package broker

import "github.com/iggo-dev/iggo/internal/replication"

// This file exists for partition planes that do not give their groups a
// state machine of their own (replication.GroupOptions.Machine):
// partitionReplicator.AddGroup fills a missing one in with a
// partitionMachine, which routes the group's calls to the plane's
// ApplyReplicated, SnapshotReplicated and RestoreReplicated by group id.
// Once the partition plane sets GroupOptions.Machine itself, delete this
// file, its test and the withPartitionMachine call in
// partitionReplicator.AddGroup in one go.

// replicatedPartitions is what partitionMachine needs of the partition
// plane (partition.Plane in a server).
type replicatedPartitions interface {
	ApplyReplicated(g replication.GroupID, e replication.Entry)
	SnapshotReplicated(g replication.GroupID) ([]byte, error)
	RestoreReplicated(g replication.GroupID, index uint64, data []byte) error
}

// partitionMachine is partition group g's state machine on a plane that
// routes by group id.
type partitionMachine struct {
	parts replicatedPartitions
	g     replication.GroupID
}

var _ replication.GroupMachine = partitionMachine{}

// Apply hands one committed entry of the group to the plane.
func (m partitionMachine) Apply(e replication.Entry) { m.parts.ApplyReplicated(m.g, e) }

// Snapshot is the plane's snapshot of the group.
func (m partitionMachine) Snapshot() ([]byte, error) { return m.parts.SnapshotReplicated(m.g) }

// Restore installs a snapshot of the group received from its leader.
func (m partitionMachine) Restore(index uint64, data []byte) error {
	return m.parts.RestoreReplicated(m.g, index, data)
}

// withPartitionMachine returns opts with a partitionMachine for group g
// over parts when opts names no machine.
func withPartitionMachine(opts replication.GroupOptions, parts replicatedPartitions, g replication.GroupID) replication.GroupOptions {
	if opts.Machine == nil {
		opts.Machine = partitionMachine{parts: parts, g: g}
	}
	return opts
}
