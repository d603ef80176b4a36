package replication

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
)

// Compact snapshots group g's machine (GroupMachine.Snapshot) at the applied index and
// drops the log before it; followers behind that point catch up from the
// snapshot. When the storage already holds a snapshot at or past the
// applied index it answers ErrCompactRange (wrapped) and leaves the group
// as it is.
func (h *Host) Compact(ctx context.Context, g GroupID) (uint64, error) {
	type res struct {
		index uint64
		err   error
	}
	c := make(chan res, 1)
	if err := h.do(ctx, func() {
		grp := h.groups[g]
		if grp == nil {
			c <- res{err: ErrUnknownGroup}
			return
		}
		data, err := grp.machine.Snapshot()
		if err != nil {
			c <- res{err: fmt.Errorf("snapshot state machine: %w", err)}
			return
		}
		if _, err := grp.storage.CreateSnapshot(grp.applied, grp.confState, data); err != nil {
			if errors.Is(err, raft.ErrSnapOutOfDate) || errors.Is(err, raft.ErrCompacted) {
				// Nothing applied since the last snapshot (or a newer
				// one was installed): nothing to compact, the log is fine.
				c <- res{err: fmt.Errorf("%w: %w", ErrCompactRange, err)}
				return
			}
			c <- res{err: h.storageFailed(grp, fmt.Errorf("%w: create snapshot: %w", ErrStorage, err))}
			return
		}
		if err := grp.storage.Compact(grp.applied); err != nil {
			c <- res{err: h.storageFailed(grp, fmt.Errorf("%w: compact: %w", ErrStorage, err))}
			return
		}
		c <- res{index: grp.applied}
	}); err != nil {
		return 0, fmt.Errorf("compact group %d: %w", g, err)
	}
	r := <-c
	if r.err != nil {
		return 0, fmt.Errorf("compact group %d: %w", g, r.err)
	}
	return r.index, nil
}

// CompactTo records data as group g's snapshot at index and discards the
// log up to index: followers whose log ends before index catch up from
// that snapshot. index must be at most the group's applied index and above
// its current snapshot index (ErrCompactRange, wrapped, otherwise). It
// refuses with ErrCompactConf (wrapped) when a configuration change was
// applied after index, because the snapshot records the current ConfState,
// which must be the configuration as of index. Unlike Compact, the caller
// supplies the state (the partition plane snapshots a position it knows to
// hold at index).
//
// The configuration check covers the changes applied since the group was
// added to this host: after a restart raft applies again every entry
// after the storage's snapshot, or the caller replayed them and handed
// over the membership they made (GroupOptions.Conf, whose last change's
// index the group records), so the changes that can matter (those above
// the snapshot index, which index exceeds) are known again.
func (h *Host) CompactTo(ctx context.Context, g GroupID, index uint64, data []byte) error {
	errc := make(chan error, 1)
	if err := h.do(ctx, func() { errc <- h.compactTo(g, index, data) }); err != nil {
		return fmt.Errorf("compact group %d to %d: %w", g, index, err)
	}
	if err := <-errc; err != nil {
		return fmt.Errorf("compact group %d to %d: %w", g, index, err)
	}
	return nil
}

// compactTo is CompactTo on the loop.
func (h *Host) compactTo(g GroupID, index uint64, data []byte) error {
	grp := h.groups[g]
	if grp == nil {
		return ErrUnknownGroup
	}
	if index > grp.applied {
		return fmt.Errorf("%w: index is past the applied index %d", ErrCompactRange, grp.applied)
	}
	first, err := grp.storage.FirstIndex()
	if err != nil {
		return h.storageFailed(grp, fmt.Errorf("%w: first index: %w", ErrStorage, err))
	}
	if index < first {
		return fmt.Errorf("%w: the log is already compacted to %d", ErrCompactRange, first-1)
	}
	if grp.confIndex > index {
		return fmt.Errorf("%w: configuration change applied at %d", ErrCompactConf, grp.confIndex)
	}
	if _, err := grp.storage.CreateSnapshot(index, grp.confState, data); err != nil {
		if errors.Is(err, raft.ErrSnapOutOfDate) || errors.Is(err, raft.ErrCompacted) {
			return fmt.Errorf("%w: %w", ErrCompactRange, err)
		}
		return h.storageFailed(grp, fmt.Errorf("%w: create snapshot: %w", ErrStorage, err))
	}
	if err := grp.storage.Compact(index); err != nil {
		return h.storageFailed(grp, fmt.Errorf("%w: compact: %w", ErrStorage, err))
	}
	return nil
}

// storageFailed stops group g after its log failed a write (a log that
// failed once stays unusable, and raft would panic on its next read) and
// returns err.
func (h *Host) storageFailed(g *group, err error) error {
	h.fail(g, err)
	return err
}
