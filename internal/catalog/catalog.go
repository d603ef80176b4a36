// Package catalog is the contract between the metadata plane
// (internal/metadata: streams, topics, partitions, groups, users) and the
// partition plane (message storage, SEND/POLL, consumer offsets). Neither
// plane imports the other: the broker wires an implementation of each
// interface into the other side.
package catalog

import "github.com/iggo-dev/iggo/wire"

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

// Action is a data-plane permission (semantics.md §2.4).
type Action uint8

// Data-plane actions checked by the partition plane.
const (
	// ActionSend is send_messages(stream, topic).
	ActionSend Action = 1
	// ActionPoll is poll_messages(stream, topic); it also covers
	// get/store/delete consumer offset.
	ActionPoll Action = 2
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
	// GroupPartition resolves which partition a consumer-group poll or offset
	// request from client reads: the requested one (checked for ownership) or,
	// when partition is nil, the next of the member's assigned partitions.
	// Errors: wire.ErrConsumerGroupMemberNotFound,
	// wire.ErrConsumerGroupPartitionNotOwned. ok is false when the member has
	// no partition to poll.
	GroupPartition(t TopicRef, group uint32, client wire.Uint128, partition *uint32) (id uint32, ok bool, err error)
}
