package partition

import (
	"fmt"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Partition group snapshots.
//
// A partition's raft log is its segment files (cluster_seglog.go), so a
// snapshot needs no message data: it is the partition's position and its
// consumer offsets. The plane compacts a group's log only up to the last
// batch that retention removed (cluster_compact.go): every entry after
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
// at the snapshot's index applied (stateAt, cluster_snapwindow.go), so
// that a replica restored from it, or a node
// whose log was compacted and that restarts, still recognises a retried
// request whose first attempt is in the compacted part of the log. Its
// layout is in cluster_snapshot_codec.go.

// SnapshotReplicated returns the state of group g's partition at its
// applied index (runs on the host's loop; Host.Compact).
func (p *Plane) SnapshotReplicated(g replication.GroupID) ([]byte, error) {
	rep := p.replicaFor(g)
	if rep == nil {
		return nil, fmt.Errorf("snapshot group %d: %w", g, replication.ErrUnknownGroup)
	}
	if rep.part.log == nil {
		return nil, fmt.Errorf("snapshot group %d: partition %s is stopped", g, rep.part.dir)
	}
	_, next := rep.part.log.Bounds()
	_, ts := rep.part.log.Tail()
	// On the loop at the applied index: the live window is the window
	// there.
	return partSnapshot{next: next, ts: ts, purge: rep.purgeID.Load(), offsets: rep.part.log.Offsets().All(), window: rep.part.exportWindow()}.encode(), nil
}

// RestoreReplicated moves the partition to a snapshot's position (see the
// notes above): a partition whose revealed end is the snapshot's next
// offset loses only its unrevealed tail (raft replaced that log); any
// other is emptied and restarted there (storage.ResetTo). The consumer
// offsets and the duplicate window (when the snapshot has one) become the
// snapshot's.
func (p *Plane) RestoreReplicated(g replication.GroupID, index uint64, data []byte) error {
	rep := p.replicaFor(g)
	if rep == nil {
		return fmt.Errorf("restore group %d: %w", g, replication.ErrUnknownGroup)
	}
	s, err := decodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("restore group %d: %w", g, err)
	}
	part := rep.part
	if part.log == nil {
		return fmt.Errorf("restore group %d: partition %s is stopped", g, part.dir)
	}
	_, revealed := part.log.Bounds()
	next, _ := part.log.Tail()
	reset := revealed != s.next
	if !reset && next != s.next {
		// Exactly at the position, with a tail raft has replaced.
		if err := part.log.TruncateFrom(s.next); err != nil {
			return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
		}
	}
	if reset {
		p.log.Info("partition restarts at a snapshot's position: the leader no longer holds the messages before it",
			"dir", part.dir, "group", uint64(g), "index", index, "local_next_offset", revealed, "next_offset", s.next)
		if err := part.log.ResetTo(s.next, s.ts); err != nil {
			return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
		}
	}
	if err := restoreOffsets(part.log.Offsets(), s.offsets); err != nil {
		return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
	}
	// The purges the snapshot covers are applied here now: a later
	// proposal of one of them is a no-op, and none is wanted any more.
	if err := p.adoptPurge(rep, s.purge); err != nil {
		return fmt.Errorf("restore group %d at index %d: %w", g, index, err)
	}
	if s.window != nil {
		// A version 2 snapshot has no window: the replica keeps what it
		// applied itself (a part of the window at the snapshot).
		part.restoreWindow(s.window)
	}
	rep.missed.dropTo(index)
	return nil
}

// restoreOffsets makes the stored offsets exactly want.
func restoreOffsets(offs *storage.Offsets, want []storage.OffsetEntry) error {
	keep := make(map[storage.OffsetEntry]bool, len(want))
	for _, o := range want {
		keep[storage.OffsetEntry{Kind: o.Kind, ID: o.ID}] = true
		if cur, ok := offs.Get(o.Kind, o.ID); ok && cur == o.Offset {
			continue
		}
		if err := offs.Store(o.Kind, o.ID, o.Offset); err != nil {
			return err
		}
	}
	for _, o := range offs.All() {
		if !keep[storage.OffsetEntry{Kind: o.Kind, ID: o.ID}] {
			if _, err := offs.Delete(o.Kind, o.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// replicaFor returns the replica of group g (nil in single-node mode).
func (p *Plane) replicaFor(g replication.GroupID) *replica {
	if p.cl == nil {
		return nil
	}
	return p.cl.replicaOf(g)
}
