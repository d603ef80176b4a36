// Package replicated is the replicated commit path of the partition plane:
// everything a partition needs to be one raft group, and the only importer
// of go.etcd.io/raft outside internal/replication.
//
// A Set holds the replicated partitions of one plane; each partition is a
// Replica, which is at once the partition's commit.Committer (the plane
// hands it every write) and its group's replication.GroupMachine (the host
// hands it every committed entry, snapshot and restore). The group of a
// partition is GroupID(topic, partition) = incarnation<<24 | partition id
// (docs/CLUSTER.md §6).
//
// # Files, bottom up
//
//   - entry.go: the log entry of a write (a small header plus, for a
//     send, the stamped batch) and the quick classifiers of raw entries;
//     snapshot_codec.go: a partition snapshot's layout; errors.go,
//     missed.go, offsets.go, scan.go: small pieces the rest share.
//   - requests.go: the one owner of duplicate detection: a windowed
//     request in a handler of this node, in the raft log unapplied, or
//     applied (into the duplicate window, or missed).
//   - seglog.go, seglog_open.go, entrycache.go: the log storage. Batches
//     live in the partition's segment files, the raft log keeps their
//     headers; it stores and returns entries and applies none.
//   - stamp.go: the log wrapped to know what it holds (the stamping tail,
//     the start-up replay gate, a purge not yet applied, the purge
//     identities in the log).
//   - set.go, partition.go: the Set, the Replica and what a replica needs
//     of its partition (Partition, Local).
//   - prepare.go: the Prepare hook, on the host's loop, leader only: it
//     refuses what must not enter the log and stamps a batch's offsets
//     and timestamp from the tail, so every replica stores the same bytes.
//   - apply.go, snapshot.go, snapwindow.go (stateAt), replay.go, purge.go:
//     the state machine: apply, snapshot and restore, the start-up replay
//     from the raft log's headers, purges and their record.
//   - compact.go, keeper.go, await.go, commit.go, group.go, state.go: the
//     compaction of a group's log before its segments go, the keeper that
//     proposes wanted purges and offset deletions, the waits for them, the
//     Committer, the groups' lifecycle (Add, Drop, Close), the state a
//     replica reports.
//
// # Goroutines
//
// The replication host's loop runs the log storage (Append, Entries,
// ApplySnapshot), the Prepare hook and the machine (Apply, Snapshot,
// Restore); none of them blocks on the host. Request handlers run Commit:
// they wait for a leader, for the wanted purges before a write, and for
// their entry's apply (Set.propose), bounded by the request's context and
// proposeTimeout; the host stopping ends them too. Three goroutines of the
// set's own: the lifecycle worker (opqueue.go: AddGroup, RemoveGroup, compactions,
// segment removals, one at a time, only while there is work), the keeper
// (only while something is wanted), and the proposals of Async writes
// (NoAck offsets, auto-commit), which Close joins.
//
// # Locks
//
// Set.mu guards the replicas by group and their wanted offset deletions;
// segLog.mu and stampLog.mu guard each log's own state; requests.mu the
// keys in the log; commit.Window its window. None is held while another
// is taken, except that Set.mu is never held across a call to the host.
package replicated
