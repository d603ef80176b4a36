package replication

// GroupMachine is the state machine one group replicates into; each group
// is given its own (GroupOptions.Machine) and the host calls it directly.
// The host calls it from its event loop: Apply for every committed entry
// that carries data, in commit order (entries without data, such as the
// empty entry of a new leader, and configuration changes are not passed
// on); Snapshot when the host compacts the group's log (Compact); Restore
// when this replica, lagging behind, receives a snapshot from the leader.
// Calls must return quickly: a slow machine delays every group of the
// host. e.Data belongs to the raft log and must not be modified (copy it
// to keep a mutable version).
type GroupMachine interface {
	Apply(e Entry)
	Snapshot() ([]byte, error)
	Restore(index uint64, data []byte) error
}
