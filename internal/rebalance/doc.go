// Package rebalance decides and carries out replica moves in a cluster:
// which partitions move from which node to which (the Planner, on the
// metadata leader) and the raft membership changes that make each move
// happen without losing anything acknowledged (the Executor, on every
// node, for the partition groups it leads).
//
// A partition's placement (metadata.PartitionPlacement) is its ordered
// replica list and, while a move is in progress, the Target list it moves
// to. A move runs in three steps, each one idempotent and driven by what
// is committed (the metadata placement and the group's raft
// configuration), so a crash, a restart or a leadership change anywhere
// only delays it:
//
//  1. The Planner commits the Target (placement: Replicas, Target). Every
//     node of either list now holds the partition: a node that joins
//     opens an empty replica that waits for the group's leader.
//  2. The Executor on the group's leader adds every Target member that
//     is not a voter as a learner, waits until it holds the leader's log,
//     and promotes it (replication.Host.AddMember). Once every Target
//     member is a live voter it removes the members that are not in the
//     Target, one configuration change at a time; a leader that must
//     leave first hands its leadership to a caught-up Target member,
//     whose executor goes on. Then it commits the placement (Target,
//     nil): the nodes that left drop their replica and its files.
//  3. With no Target, the Executor keeps the group's members equal to
//     the replica list (less the nodes no longer in the cluster): extra
//     members are removed, never below a quorum of the list; missing
//     live members are added back.
//
// So no member leaves before its replacement votes, and the partition
// stays writable: every change is one raft configuration change, made by
// the leader, while the quorum of the old and the new membership holds
// the data.
//
// The Planner bounds the moves in progress cluster-wide (MaxMoves): it
// plans more as earlier ones finish, for as long as a rebalance is
// wanted (a rebalance command, a node added, a node being drained, a node
// dead for longer than ReplaceDeadAfter, or moves found in progress by a
// new metadata leader). Catch-up traffic is bounded by raft's flow
// control: at most MaxInflightBytes (32 MiB) unacknowledged per learner,
// in messages of at most 1 MiB, and each node runs at most
// Executor.MaxConcurrent membership changes at a time.
package rebalance
