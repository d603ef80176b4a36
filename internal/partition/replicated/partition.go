package replicated

import (
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Local is what a replica needs of its partition besides the storage: the
// plane's encryption and traffic state, and its one purge.
type Local interface {
	// Sealing returns this node's key tag for the partition and the
	// offset from which it stores sealed batches; a plaintext partition
	// answers 0 and the largest offset.
	Sealing() (tag uint8, from uint64)
	// VerifySealed checks that a sealed batch opens with this node's key.
	VerifySealed(rec []byte) error
	// Purge removes the partition's messages and consumer offsets (and
	// resets its encryption marker), at the purge entry of the group's
	// log at index (the remote tier's new epoch, the same on every
	// replica).
	Purge(index uint64) error
	// Counted records an append of msgs messages in bytes bytes (err:
	// it failed).
	Counted(err error, msgs uint32, bytes int)
	// ApplyTier applies a record of the partition's remote tier (a
	// segment the leader uploaded); TierSnapshot returns the remote
	// tier's state for a snapshot (nil without one) and RestoreTier
	// installs a snapshot's (internal/tier, Cluster).
	ApplyTier(record []byte) error
	TierSnapshot() []byte
	RestoreTier(state []byte) error
}

// Partition is the local partition a replica stores into.
type Partition struct {
	ID  uint32
	Dir string
	// Log is the partition's storage, opened in storage's Held mode.
	Log *storage.Partition
	// Window is the partition's duplicate window.
	Window *commit.Window
	Local  Local
	// Replicas is the partition's replica list from its placement (nil:
	// every voter of the metadata group); a group created while its
	// metadata entry applies is bootstrapped with these members.
	Replicas []uint8
	// Joining starts the group without members: this node was added to
	// the partition's replicas by a move and waits for the leader to add
	// it to the group and send it the log.
	Joining bool
	// Rebuilt is a Joining replica that replaces a damaged one wiped
	// after this node left the group (replication.GroupOptions.Rebuilt).
	Rebuilt bool
}
