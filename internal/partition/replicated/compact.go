package replicated

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Compaction of partition raft logs (cluster mode).
//
// A partition group's log holds a header for every batch still in the
// segment files (seglog.go). When segments go — retention by age
// or size, DELETE_SEGMENTS, both node-local as in single-node mode — the
// log is first compacted up to the last batch they hold (Host.CompactTo
// with a snapshot of the position right after it, snapshot.go),
// and only then are the files removed: raft never finds a header whose
// record is gone, and a replica behind that point is sent the snapshot. A
// compaction the host refuses (a membership change applied after the
// point: the snapshot would record the newer configuration) keeps the
// segments until a later round can compact past it. After a purge
// applies, the log is compacted at the purge entry, since every batch
// before it is gone.

// compactTimeout bounds one CompactTo call.
const compactTimeout = 10 * time.Second

// removeOldest removes the k oldest sealed segments of rep's partition,
// compacting its group's log past them first.
func (s *Set) removeOldest(rep *Replica, k int) (storage.Removed, error) {
	if k <= 0 {
		return storage.Removed{}, nil
	}
	part := rep.part
	if s.replicaOf(rep.group) != rep || rep.seg.Load() == nil {
		return storage.Removed{}, nil // not replicated here (yet): keep the data
	}
	var keep uint64
	if k, keep = part.Log.OldestSegmentsEnd(k); k == 0 {
		return storage.Removed{}, nil
	}
	if err := s.compactBefore(rep, keep); err != nil {
		return storage.Removed{}, err
	}
	if k2, keep2 := part.Log.OldestSegmentsEnd(k); k2 != k || keep2 != keep {
		// The segments changed meanwhile (a purge, a snapshot
		// restore): the next round decides again.
		return storage.Removed{}, nil
	}
	return part.Log.DeleteOldestSegments(k)
}

// compactBefore compacts rep's log up to its last stored batch below
// offset keep.
func (s *Set) compactBefore(rep *Replica, keep uint64) error {
	index, ts, found, err := rep.seg.Load().lastBatchBelow(keep, rep.purgedAt)
	if err != nil || !found {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ops.ctx, compactTimeout)
	defer cancel()
	// The batch is revealed, but its entry may not have applied yet (a
	// restart: start-up reveals up to the stored commit before raft
	// applies): compacting needs it applied.
	if _, err := s.r.WaitFor(ctx, rep.group, func(v replication.View) bool { return v.Applied >= index }); err != nil {
		return fmt.Errorf("compact the raft log of %s to index %d: not applied yet: %w", rep.part.Dir, index, err)
	}
	snap := partSnapshot{next: keep, ts: ts}
	var st PartitionState
	if st, err = s.stateAt(rep, index); err == nil {
		snap.withState(st)
		err = s.r.CompactTo(ctx, rep.group, index, snap.encode())
	}
	if errors.Is(err, replication.ErrCompactRange) {
		return nil // compacted past it already (it is applied, see above)
	}
	if err != nil {
		return fmt.Errorf("compact the raft log of %s to index %d before removing segments: %w", rep.part.Dir, index, err)
	}
	rep.reqs.missed.dropTo(index)
	return nil
}

// compactAtPurge queues the compaction of rep's log at the purge at
// index (the partition is empty at offset 0 there), once it has applied
// (a purge executed early by segLog.Append applies later).
func (s *Set) compactAtPurge(rep *Replica, index uint64) {
	_, ts := rep.part.Log.Tail()
	s.queueCompaction(rep, index, partSnapshot{ts: ts}, func(err error) {
		s.log.Info("raft log not compacted at a purge; it is compacted with the next removal of segments",
			"dir", rep.part.Dir, "index", index, "err", err)
	})
}

// queueCompaction queues the compaction of rep's log at index with snap's
// position and the state at index (stateAt: the duplicate window, the
// last purge, the offsets), once index has applied; failed reports an
// error other than "compacted past it already".
func (s *Set) queueCompaction(rep *Replica, index uint64, snap partSnapshot, failed func(error)) {
	s.ops.push(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, compactTimeout)
		defer cancel()
		_, err := s.r.WaitFor(ctx, rep.group, func(v replication.View) bool { return v.Applied >= index })
		if err == nil {
			var st PartitionState
			if st, err = s.stateAt(rep, index); err == nil {
				snap.withState(st)
			}
		}
		if err == nil {
			err = s.r.CompactTo(ctx, rep.group, index, snap.encode())
		}
		if err == nil {
			rep.reqs.missed.dropTo(index)
		}
		if err != nil && !errors.Is(err, replication.ErrCompactRange) {
			failed(err)
		}
	})
}

// lastBatchBelow scans the headers after the last executed purge for the
// last batch (stored, or kept whole: see segLog) whose base offset is
// below keep; it returns its index and timestamp.
func (s *segLog) lastBatchBelow(keep, purgedAt uint64) (index, ts uint64, found bool, err error) {
	first, err := s.inner.FirstIndex()
	if err != nil {
		return 0, 0, false, err
	}
	last, err := s.inner.LastIndex()
	if err != nil {
		return 0, 0, false, err
	}
	err = forEntries(s.inner, max(first, purgedAt+1), last, func(e *raftpb.Entry) (bool, error) {
		b, ok := batchHeader(e)
		if !ok {
			return true, nil
		}
		if b.base >= keep {
			return false, nil
		}
		index, ts, found = e.GetIndex(), b.ts, true
		return true, nil
	})
	return index, ts, found, err
}
