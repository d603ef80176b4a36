package partition

import (
	"encoding/binary"
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
// Layout (little endian): u8 version (2), u64 next offset, u64 last
// timestamp, u32 offset count, then per offset u8 consumer kind, u32 id,
// u64 offset. The duplicate window is not in the snapshot (a choice: it
// covers recent requests, and compaction only passes old, retained-away
// data).

const (
	snapshotVersion   = 2
	snapshotHeadLen   = 21
	snapshotOffsetLen = 13
)

// partSnapshot is a decoded partition snapshot.
type partSnapshot struct {
	next, ts uint64
	offsets  []storage.OffsetEntry
}

func (s partSnapshot) encode() []byte {
	b := make([]byte, 1, snapshotHeadLen+len(s.offsets)*snapshotOffsetLen)
	b[0] = snapshotVersion
	b = binary.LittleEndian.AppendUint64(b, s.next)
	b = binary.LittleEndian.AppendUint64(b, s.ts)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.offsets)))
	for _, o := range s.offsets {
		b = append(b, uint8(o.Kind))
		b = binary.LittleEndian.AppendUint32(b, o.ID)
		b = binary.LittleEndian.AppendUint64(b, o.Offset)
	}
	return b
}

func decodeSnapshot(b []byte) (partSnapshot, error) {
	if len(b) < snapshotHeadLen || b[0] != snapshotVersion {
		return partSnapshot{}, fmt.Errorf("partition snapshot: %d bytes, not a version %d snapshot", len(b), snapshotVersion)
	}
	s := partSnapshot{next: binary.LittleEndian.Uint64(b[1:]), ts: binary.LittleEndian.Uint64(b[9:])}
	n := binary.LittleEndian.Uint32(b[17:])
	rest := b[snapshotHeadLen:]
	if uint64(len(rest)) != uint64(n)*snapshotOffsetLen {
		return partSnapshot{}, fmt.Errorf("partition snapshot: %d offsets in %d bytes", n, len(rest))
	}
	s.offsets = make([]storage.OffsetEntry, n)
	for i := range s.offsets {
		o := rest[i*snapshotOffsetLen:]
		kind := storage.ConsumerKind(o[0])
		if kind != storage.KindConsumer && kind != storage.KindGroup {
			return partSnapshot{}, fmt.Errorf("partition snapshot: consumer kind %d", o[0])
		}
		s.offsets[i] = storage.OffsetEntry{Kind: kind, ID: binary.LittleEndian.Uint32(o[1:]), Offset: binary.LittleEndian.Uint64(o[5:])}
	}
	return s, nil
}

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
	return partSnapshot{next: next, ts: ts, offsets: rep.part.log.Offsets().All()}.encode(), nil
}

// RestoreReplicated moves the partition to a snapshot's position (see the
// notes above): a partition whose revealed end is the snapshot's next
// offset loses only its unrevealed tail (raft replaced that log); any
// other is emptied and restarted there (storage.ResetTo). The consumer
// offsets become the snapshot's.
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
