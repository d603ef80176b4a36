package replicated

import (
	"fmt"
)

// Partition group snapshots.
//
// A partition's raft log is its segment files (seglog.go), so a
// snapshot needs no message data: it is the partition's position and its
// consumer offsets. The plane compacts a group's log only up to the last
// batch that retention removed (compact.go): every entry after
// the compaction point, and so every retained batch, is still in the log,
// and a replica that is behind — a new node, or one that was down —
// receives the retained segments as ordinary raft entries, read back from
// the leader's segments a bounded number of bytes at a time (raft's
// MaxSizePerMsg and MaxInflightBytes). Only a replica whose log ends
// before the compaction point gets the snapshot: it then holds nothing
// the leader still has, so it drops its own segments and restarts empty
// at the snapshot's next offset (storage.ResetTo) with the snapshot's
// consumer offsets, and raft sends it the entries after the point.
//
// The snapshot also carries the partition's duplicate window, consumer
// offsets and last purge's identity as they stood right after the entry
// at the snapshot's index applied (stateAt, snapwindow.go), so
// that a replica restored from it, or a node
// whose log was compacted and that restarts, still recognises a retried
// request whose first attempt is in the compacted part of the log. Its
// layout is in snapshot_codec.go.

// Snapshot implements replication.GroupMachine: the state of the
// partition at its applied index (runs on the host's loop; Host.Compact).
func (rep *Replica) Snapshot() ([]byte, error) {
	g := rep.group
	if rep.part.Log == nil {
		return nil, fmt.Errorf("snapshot group %d: partition %s is stopped", g, rep.part.Dir)
	}
	_, next := rep.part.Log.Bounds()
	_, ts := rep.part.Log.Tail()
	// On the loop at the applied index: the live window is the window
	// there.
	return partSnapshot{next: next, ts: ts, purge: rep.purgeID.Load(), offsets: rep.part.Log.Offsets().All(),
		window: rep.reqs.window.Export(snapshotWindowClients), tier: rep.tierSnapshot()}.encode(), nil
}

// Restore implements replication.GroupMachine: it moves the partition to a snapshot's position (see the
// notes above): a partition whose revealed end is the snapshot's next
// offset loses only its unrevealed tail (raft replaced that log); any
// other is emptied and restarted there (storage.ResetTo). The consumer
// offsets and the duplicate window (when the snapshot has one) become the
// snapshot's.
func (rep *Replica) Restore(index uint64, data []byte) error {
	g := rep.group
	snap, err := decodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("restore group %d: %w", g, err)
	}
	part := rep.part
	if part.Log == nil {
		return fmt.Errorf("restore group %d: partition %s is stopped", g, part.Dir)
	}
	_, revealed := part.Log.Bounds()
	next, _ := part.Log.Tail()
	reset := revealed != snap.next
	if !reset && next != snap.next {
		// Exactly at the position, with a tail raft has replaced.
		if err := part.Log.TruncateFrom(snap.next); err != nil {
			return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
		}
	}
	if reset {
		rep.set.log.Info("partition restarts at a snapshot's position: the leader no longer holds the messages before it",
			"dir", part.Dir, "group", uint64(g), "index", index, "local_next_offset", revealed, "next_offset", snap.next)
		if err := part.Log.ResetTo(snap.next, snap.ts); err != nil {
			return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
		}
	}
	if err := restoreOffsets(part.Log.Offsets(), snap.offsets); err != nil {
		return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
	}
	// The purges the snapshot covers are applied here now: a later
	// proposal of one of them is a no-op, and none is wanted any more.
	if err := rep.set.adoptPurge(rep, snap.purge); err != nil {
		return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
	}
	if snap.window != nil {
		// A version 2 snapshot has no window: the replica keeps what it
		// applied itself (a part of the window at the snapshot).
		rep.reqs.window.Restore(snap.window)
	}
	if snap.tier != nil && part.Local != nil {
		// The remote tier's manifest: the segments before the snapshot's
		// position are read from the bucket.
		if err := part.Local.RestoreTier(snap.tier); err != nil {
			return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
		}
	}
	rep.reqs.missed.dropTo(index)
	return nil
}
