// Package replication is the one room that knows raft: a Host runs many
// raft groups (go.etcd.io/raft/v3 RawNodes, one per group id: the
// metadata group, MetadataGroup, and one per partition) on one node,
// drives them from a single event-loop goroutine, and exchanges their
// messages with other hosts through a Network (the replica transport in
// production, an in-memory network in tests), batched per destination.
//
// The seam the metadata and partition planes use is small:
//
//   - AddGroup(ctx, group, GroupOptions) adds a group with its own state
//     machine (GroupOptions.Machine, a GroupMachine, required): the host
//     calls its Apply for every committed data entry in commit order,
//     its Snapshot when the group's log is compacted and its Restore
//     when a lagging replica receives a snapshot. GroupOptions.Prepare
//     sees every proposal on the loop right before raft does.
//   - Propose(ctx, group, data) returns the entry's index once it is
//     committed on a quorum and applied locally; Forward hands a
//     proposal to the leader from any node.
//   - Transient(err) is the one classifier of this package's errors into
//     the two transient statuses: 58 when the proposal is certainly in no
//     log, 57 when its outcome is unknown (status.go has the rule).
//     A Prepare hook wraps ErrRefused or ErrPending to be classified.
//   - Leader, Status and WaitFor expose the published view of a group;
//     TransferLeadership moves leadership. Config.FollowLeader keeps
//     every group's leader with the metadata leader; Config.Preference
//     instead spreads them: each leader hands a group to the first live,
//     caught-up voter of its preferred order (TransferTarget, balance.go).
//     LeaderOf, AwaitLeader and Directory also answer for groups this
//     node holds no replica of: every host announces the groups it leads
//     to its peers (the leader directory, directory.go and announce.go).
//   - ChangeMembership runs joint consensus (ConfChangeV2); AddMember
//     adds a node as a learner, waits until it caught up with the
//     leader's log, and promotes it; Progress reports replication
//     progress on the leader.
//   - Call(ctx, node, kind, payload) is a request/response to another
//     host over the replica transport, served there by the CallHandler
//     registered for kind (HandleCall), off the loop (call.go).
//   - Compact and CompactTo snapshot a group and discard its log up to an
//     index. Storage sits behind LogStorage (raftlog holds the durable
//     implementation).
//
// The package knows nothing of the server's configuration or planes: it
// imports no server package but wire (for the two status codes). The
// broker builds the host and the replica transport from [cluster]
// (internal/broker, cluster_node.go) and gives each group its machine.
//
// Idle groups are quiet: a leader whose group is fully replicated,
// committed and applied stops ticking after one more heartbeat and tells
// its followers to stop too (quiescence); a proposal or any incoming
// message wakes a group. Host-to-host pings (one per peer per heartbeat
// interval, not per group) detect a dead peer, which wakes the groups it
// took part in so they can elect a new leader.
//
// Raft node ids are replica ids plus one (raft reserves 0 for "none").
// See docs/CLUSTER.md for the design.
package replication
