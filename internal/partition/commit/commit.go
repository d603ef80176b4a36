package commit

import (
	"context"

	"github.com/iggo-dev/iggo/internal/storage"
)

// Kind is what a Write does.
type Kind uint8

// The kinds of writes.
const (
	// Send appends one batch (SEND_MESSAGES).
	Send Kind = iota + 1
	// OffsetStore sets a consumer offset (STORE_CONSUMER_OFFSET).
	OffsetStore
	// OffsetAdvance moves a consumer offset forward only (a poll's
	// auto-commit).
	OffsetAdvance
	// OffsetDelete removes a consumer offset (DELETE_CONSUMER_OFFSET).
	OffsetDelete
)

// Write is one request to commit to a partition. It is passed by value; its
// slices alias the request and are not retained after Commit returns
// (a replicated commit copies what it proposes).
type Write struct {
	Kind Kind
	// Windowed makes the write go through the duplicate window under Key:
	// a committed request with the same key gets Outcome.Dup instead.
	Windowed bool
	Key      Key

	// Rec is a Send's admitted batch record, sealed when the partition is
	// encrypted (KeyTag is then the key's tag, 0 for plaintext), of
	// Count messages.
	Rec    []byte
	Count  uint32
	KeyTag uint8

	// Consumer, ID and Offset name the offset of an offset write.
	Consumer storage.ConsumerKind
	ID       uint32
	Offset   uint64

	// Check, when set, validates the write against the partition's state
	// right before it is committed; a non-zero status is the outcome.
	Check func() uint32
	// Async answers as soon as the checks pass and commits in the
	// background (offset writes with NoAck, a poll's auto-commit). The
	// background work is joined when the committer's plane closes.
	Async bool
	// Applied, when set, runs once the write has applied on this node
	// (before Commit returns, or on the background goroutine of an Async
	// write).
	Applied func()
}

// Outcome is what a Commit answers.
type Outcome struct {
	// Code is the status to answer (0: success).
	Code uint32
	// Dup reports a recognized duplicate: the request committed before,
	// and gets an empty success.
	Dup bool
	// Base is a Send's base offset.
	Base uint64
	// Index and Term are the raft position of a replicated write (the
	// committed reply header's op and view); 0 for a local one. Replica
	// is then this node's replica id.
	Index, Term uint64
	Replica     uint8
}

// Committer commits the writes of one partition (see the package comment).
// It is safe for concurrent use.
type Committer interface {
	// Commit commits w and returns its outcome once it is known on this
	// node; ctx (the request's connection) bounds every wait.
	Commit(ctx context.Context, w Write) Outcome
	// Purge removes every message and consumer offset of the partition:
	// the PURGE_TOPIC whose identity (metadata op) is id. A replicated
	// partition records that it wants it and returns; the purge then
	// applies at one position of its log on every replica.
	Purge(id uint64) error
	// WantPurge tells the committer that the metadata names id as the
	// partition's last purge (the partition announced again: a metadata
	// snapshot restored). It reports whether that purge has not applied
	// here yet. A local partition applied it with Purge: false.
	WantPurge(id uint64) bool
	// DeleteGroupOffsets removes the offsets of a deleted consumer group.
	DeleteGroupOffsets(group uint32) error
	// Retain removes the oldest sealed segments retention r no longer
	// keeps (the retention goroutine; it may block).
	Retain(r storage.Retention) (storage.Removed, error)
	// DeleteSegments removes the k oldest sealed segments
	// (DELETE_SEGMENTS). It may run on the replication host's loop (a
	// metadata effect), so a replicated partition only queues it.
	DeleteSegments(k int) error
}
