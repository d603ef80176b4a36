// Package replication is the one room that knows raft: a Host runs many
// raft groups (go.etcd.io/raft/v3 RawNodes, one per group id: the
// metadata group and one per partition) on one node, drives them from a
// single event-loop goroutine, and exchanges their messages with other
// hosts through a Network (the replica transport in production, an
// in-memory network in tests), batched per destination.
//
// The seam the metadata and partition planes use is small:
// Propose(ctx, group, data) returns the entry's index once it is
// committed on a quorum and applied locally; StateMachine.Apply receives
// every committed entry of a group in commit order; Leader and
// TransferLeadership expose leadership; ChangeMembership runs joint
// consensus (ConfChangeV2); Compact and CompactTo snapshot a group and
// discard its log up to an index. Storage sits behind LogStorage.
//
// Idle groups are quiet: a leader whose group is fully replicated,
// committed and applied stops ticking after one more heartbeat and tells
// its followers to stop too (quiescence); a proposal or any incoming
// message wakes a group. Host-to-host pings (one per peer per heartbeat
// interval, not per group) detect a dead peer, which wakes the groups it
// took part in so they can elect a new leader.
//
// Raft node ids are replica ids plus one (raft reserves 0 for "none").
//
// The replication foundations are not wired into the broker yet; see
// docs/CLUSTER.md for the design and the remaining steps.
package replication
