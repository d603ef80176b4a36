package replicated

import (
	"cmp"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
)

// The duplicate window (and the rest of a partition's state) at a
// compaction point.
//
// A snapshot at index i must carry the window as it stood right after the
// entry at i applied: a replica restored from it applies the entries
// after i, and each of them enters its window then; a key already in the
// snapshot would take two places in its client's ring, so the window
// would remember fewer requests than the others' and evict other ones.
// The plane compacts at an index applied long ago (the last batch of the
// removed segments), so the live window, which has taken every entry
// applied since, is not that state. stateAt rebuilds it: the window of
// the log's current snapshot, then every windowed entry after the
// snapshot up to i, read from the raft log's headers, in log order, as
// apply commits them.
//
// Apply commits a windowed entry only when it succeeds (a delete of a
// missing offset, a partition stopped by a hole, a failed replicated
// append do not enter the window). Those outcomes depend on state the
// headers do not hold, so apply records the indices of the windowed
// entries it did not commit (missedWindow), and stateAt leaves them out.
// The record covers the entries after the log's snapshot and is trimmed
// when the log is compacted; it holds at most missedWindowMax indices
// (past that the oldest are forgotten, and such an entry counts as
// committed in a later snapshot's window — a retry of it then gets the
// duplicate's empty success instead of the error again).

// PartitionState is what a partition snapshot at an index carries besides
// its position: the duplicate window, the identity of the last purge
// applied, and the consumer offsets, each as it stood right after the
// entry at that index applied.
type PartitionState struct {
	Window  []session.ClientWindow
	Purge   uint64
	Offsets []storage.OffsetEntry
	// Tier is the remote tier's state (Local.TierSnapshot) as it is now,
	// not at the index: it may list segments uploaded after it, which
	// the restored replica then receives again as records and keeps
	// (a record is applied once), and its epoch may be a later purge's,
	// which the replayed purge entry then leaves as it is.
	Tier []byte
}

// stateAt returns rep's partition state right after the entry at index
// applied (see above), rebuilt from the log's snapshot and the headers
// after it; index must have applied. The live state has taken every
// entry applied since, so a snapshot made of it would claim effects its
// restored replica then applies again: a later purge's identity, which
// makes that replica skip the purge entry itself, or later offset
// writes. Offsets follow apply: a store sets, an advance only moves
// forward, a delete removes, a purge (one not applied before) clears
// them; a windowed entry whose apply failed is left out (missedWindow).
// An index at or below the log's snapshot is replication.ErrCompactRange.
func (s *Set) stateAt(rep *Replica, index uint64) (PartitionState, error) {
	seg := rep.seg.Load()
	if seg == nil {
		return PartitionState{}, fmt.Errorf("partition state at %d: the group's log is not open", index)
	}
	inner := seg.headers()
	snap, err := inner.Snapshot()
	if err != nil {
		return PartitionState{}, fmt.Errorf("partition state at %d: %w", index, err)
	}
	from := snap.GetMetadata().GetIndex()
	if index <= from && from > 0 {
		return PartitionState{}, fmt.Errorf("partition state at %d, the log's snapshot is at %d: %w", index, from, replication.ErrCompactRange)
	}
	w := session.NewPartitionWindow(s.opts.WindowClients)
	var purge uint64
	offsets := map[offsetKey]uint64{}
	if len(snap.GetData()) > 0 {
		ps, err := decodeSnapshot(snap.GetData())
		if err != nil {
			return PartitionState{}, fmt.Errorf("partition state at %d: the raft log's snapshot at %d: %w", index, from, err)
		}
		w.Restore(ps.window)
		purge = ps.purge
		for _, o := range ps.offsets {
			offsets[offsetKey{o.Kind, o.ID}] = o.Offset
		}
	}
	missed := rep.reqs.missed.in(from+1, index)
	err = forEntries(inner, from+1, index, func(e *raftpb.Entry) (bool, error) {
		if e.GetType() != raftpb.EntryNormal || missed[e.GetIndex()] {
			return true, nil
		}
		ent, err := decodeEntry(e.GetData())
		if err != nil {
			return true, nil // apply skipped it too
		}
		if ent.windowed {
			w.Commit(ent.key.Client, ent.key.Request, ent.key.Hash)
		}
		k := offsetKey{ent.consumer, ent.id}
		switch ent.kind {
		case entryOffsetStore:
			offsets[k] = ent.offset
		case entryOffsetAdvance:
			if cur, ok := offsets[k]; !ok || cur < ent.offset {
				offsets[k] = ent.offset
			}
		case entryOffsetDelete:
			delete(offsets, k)
		case entryPurge:
			if ent.purgeID == 0 || ent.purgeID > purge {
				clear(offsets)
				purge = max(purge, ent.purgeID)
			}
		}
		return true, nil
	})
	if err != nil {
		return PartitionState{}, fmt.Errorf("partition state at %d: %w", index, err)
	}
	st := PartitionState{Window: w.Export(snapshotWindowClients), Purge: purge, Offsets: make([]storage.OffsetEntry, 0, len(offsets))}
	st.Tier = rep.tierSnapshot()
	for k, off := range offsets {
		st.Offsets = append(st.Offsets, storage.OffsetEntry{Kind: k.kind, ID: k.id, Offset: off})
	}
	slices.SortFunc(st.Offsets, func(a, b storage.OffsetEntry) int {
		if a.Kind != b.Kind {
			return cmp.Compare(a.Kind, b.Kind)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return st, nil
}

// StateAt returns the partition's state right after the entry at index
// applied, rebuilt from the group's log as a compaction at index
// snapshots it (stateAt); index must have applied.
func (rep *Replica) StateAt(index uint64) (PartitionState, error) { return rep.set.stateAt(rep, index) }

// withState puts st into s.
func (s *partSnapshot) withState(st PartitionState) {
	s.window, s.purge, s.offsets, s.tier = st.Window, st.Purge, st.Offsets, st.Tier
}

// offsetKey names one consumer's offset in stateAt.
type offsetKey struct {
	kind storage.ConsumerKind
	id   uint32
}
