// Package catalog is the contract between the metadata plane
// (internal/metadata: streams, topics, partitions, groups, users) and the
// partition plane (message storage, SEND/POLL, consumer offsets). Neither
// plane imports the other: the broker wires an implementation of each
// interface into the other side.
package catalog

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// TopicRef names one incarnation of a topic and carries the settings the
// partition plane needs.
type TopicRef struct {
	StreamID uint32
	TopicID  uint32
	// Incarnation is unique for every topic ever created on this server (the
	// metadata log position of its creation). Partition data paths include
	// it, so a topic created again under a recycled stream or topic id never
	// sees the files of the deleted one.
	Incarnation uint64
	// Settings are the topic's resolved options (defaults applied).
	Settings wire.TopicSettings
	// PurgedAt is the identity of the last purge of the partitions a
	// CreatePartitions or PurgeTopic call names: the metadata log
	// position of that PURGE_TOPIC (or PURGE_STREAM), the same on every
	// node; 0 when none. In cluster mode the partition plane applies each
	// identity once per partition, so a purge is neither lost nor applied
	// twice. Other calls leave it 0.
	PurgedAt uint64
	// Placement holds, in cluster mode, the ordered replica list (replica
	// ids, the first the preferred leader) of each partition a
	// CreatePartitions call names; a partition missing from it (and a nil
	// map) is held by every voter. Other calls leave it nil.
	Placement map[uint32][]uint8
}

// Placer is implemented by a Data that holds partitions on a subset of
// the nodes (cluster mode): the metadata plane calls SetReplicas, like
// the other Data methods, after a replica move changed one partition's
// replica list. The node then creates its replica of the partition when
// it joined the list and drops it (with its files) when it left.
type Placer interface {
	SetReplicas(t TopicRef, partition uint32, replicas []uint8) error
}

// PartitionStats are the counters GET_STREAM/GET_TOPIC report for one
// partition (commands.md, PartitionInfo).
type PartitionStats struct {
	// CurrentOffset is the offset of the last stored message (0 when empty).
	CurrentOffset uint64
	// Messages and SizeBytes count what is stored now.
	Messages  uint64
	SizeBytes uint64
	Segments  uint32
}

// Data is implemented by the partition plane. The metadata plane calls it
// after an operation is committed and, at start-up, again while it replays
// its log, so every method must be idempotent (creating what exists or
// deleting what is gone is not an error).
type Data interface {
	// CreatePartitions makes the partitions' storage exist and be open.
	CreatePartitions(t TopicRef, ids []uint32) error
	// DeletePartitions removes the partitions' data and consumer offsets.
	DeletePartitions(t TopicRef, ids []uint32) error
	// DeleteTopic removes every partition of the topic with all its data.
	DeleteTopic(t TopicRef) error
	// PurgeTopic deletes all messages and consumer offsets of the topic's
	// partitions; offsets restart at 0 (semantics.md §3.3, §3.4).
	PurgeTopic(t TopicRef) error
	// DeleteSegments removes the oldest count sealed segments of one
	// partition (DELETE_SEGMENTS).
	DeleteSegments(t TopicRef, partition uint32, count uint32) error
	// DeleteGroupOffsets removes the stored offsets of a deleted consumer group.
	DeleteGroupOffsets(t TopicRef, group uint32) error
	// PartitionStats reports one partition's counters (zero when unknown).
	PartitionStats(t TopicRef, partition uint32) PartitionStats
}

// SettingsUpdater is implemented by a Data that keeps the settings of the
// topics it holds (the partition plane): the metadata plane calls
// UpdateTopic, like the other Data methods, after UPDATE_TOPIC changed a
// topic's options, so that retention (message_expiry, max_topic_size)
// and the remote tier's local retention follow them without a restart.
type SettingsUpdater interface {
	UpdateTopic(t TopicRef) error
}

// PartitionKey names one partition of a topic.
type PartitionKey struct {
	Topic     TopicRef
	Partition uint32
}

// StatsSource is implemented by a Data that may hold some partitions on
// other nodes only (cluster mode: a node holds the partitions placed on
// it): the metadata plane's reads ask it for the counters of every
// partition a reply reports at once, so that it can ask the other nodes
// for theirs in one call each. The result has one entry per key, in
// order; zero counters for a partition it could not learn about.
type StatsSource interface {
	PartitionStatsOf(keys []PartitionKey) []PartitionStats
}

// Awaiter is implemented by a Data whose PurgeTopic and
// DeleteGroupOffsets complete after they return (the partition plane in
// cluster mode: they go through each partition's raft log).
type Awaiter interface {
	// AwaitPartitions waits until every purge and group-offset deletion
	// asked for the partitions of topic t has applied on this node, or
	// ctx ends (its error then).
	AwaitPartitions(ctx context.Context, t TopicRef) error
}

// GroupHistory is implemented by a Topics that can tell a deleted
// consumer group from one not created yet (group ids are never reused).
// The partition plane uses it at start-up to find offsets that a group
// deletion should have removed.
type GroupHistory interface {
	// GroupDeleted reports whether group existed in topic t and was
	// deleted: t is live, group is below the topic's next group id, and
	// no group of t has that id.
	GroupDeleted(t TopicRef, group uint32) bool
}

// Action is a data-plane permission (semantics.md §2.4).
type Action uint8

// Data-plane actions checked by the partition plane.
const (
	// ActionSend is send_messages(stream, topic).
	ActionSend Action = 1
	// ActionPoll is poll_messages(stream, topic); it also covers
	// get/store/delete consumer offset.
	ActionPoll Action = 2
	// ActionManageTopic is manage_topic(stream, topic): VERIFY_PARTITION.
	ActionManageTopic Action = 3
	// ActionReadTopic is read_topic(stream, topic), the rule of
	// GET_TOPIC: PARTITION_TIERS.
	ActionReadTopic Action = 4
)

// Topics is implemented by the metadata plane for the partition plane.
type Topics interface {
	// ResolveTopic finds a topic by identifiers and returns it with its
	// partition ids in ascending order. Errors: wire.ErrStreamIDNotFound,
	// wire.ErrTopicIDNotFound.
	ResolveTopic(stream, topic wire.Identifier) (TopicRef, []uint32, error)
	// Allowed reports whether user may perform action on (stream, topic).
	Allowed(user uint32, action Action, stream, topic uint32) bool
	// ResolveGroup finds a consumer group of the topic by identifier.
	// Error: wire.ErrConsumerGroupIDNotFound.
	ResolveGroup(t TopicRef, group wire.Identifier) (uint32, error)
	// GroupPartition checks that client, a member of group, may use
	// partition: poll it (access GroupPoll: it owns the partition and the
	// partition is not pending revocation) or store/delete the group's
	// offset on it (GroupCommit: it owns it, pending revocation or not),
	// semantics.md §4.2, §5. The partition is always named: a group poll
	// without one is answered by the partition plane alone (empty poll).
	// Errors: wire.ErrConsumerGroupIDNotFound,
	// wire.ErrConsumerGroupMemberNotFound,
	// wire.ErrConsumerGroupPartitionNotOwned.
	GroupPartition(t TopicRef, group uint32, client wire.Uint128, partition uint32, access GroupAccess) error
	// GroupPolled reports that a poll by client of the group's partition
	// read messages up to offset last (the in-flight mark of the
	// cooperative hand-off, §6.3). It fails like GroupPartition with
	// GroupPoll when the member may no longer poll the partition (a
	// rebalance ran while the poll was reading); the partition plane then
	// drops what it read and answers the RESYNC head, so no message is
	// delivered by a member that no longer owns the partition.
	GroupPolled(t TopicRef, group uint32, client wire.Uint128, partition uint32, last uint64) error
	// GroupCommitted reports that client stored offset as the group's
	// offset of partition (explicitly or by auto-commit). When that
	// settles a pending revocation, the revocation is completed (and made
	// durable by the metadata plane) before GroupCommitted returns, so the
	// target member's next SYNC sees the partition.
	GroupCommitted(t TopicRef, group uint32, client wire.Uint128, partition uint32, offset uint64)
	// Replicas returns a partition's ordered replica list in cluster mode
	// (nil: held by every voter, or unknown).
	Replicas(t TopicRef, partition uint32) []uint8
}

// GroupAccess is what a group member wants to do with a partition.
type GroupAccess uint8

// Group accesses checked by Topics.GroupPartition.
const (
	// GroupPoll is a poll: the partition must be owned and not pending
	// revocation.
	GroupPoll GroupAccess = 1
	// GroupCommit is an offset store or delete: the partition must be
	// owned; a pending revocation does not matter (§5).
	GroupCommit GroupAccess = 2
)
