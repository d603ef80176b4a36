package replicated

import (
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
)

// errSegmentsBehind: the raft log holds a batch header whose record is not
// in the segment files.
var errSegmentsBehind = errors.New("partition: the segment files end before the raft log's last batch")

// openSegLog wraps inner over part and reconciles them (see segLog);
// purgedAt is the index of the last purge applied to part.
func openSegLog(inner replication.LogStorage, part *storage.Partition, purgedAt uint64) (*segLog, error) {
	s := &segLog{inner: inner, part: part, purgedAt: purgedAt}
	s.cache.max = segCacheBytes
	if err := s.reconcile(); err != nil {
		return nil, err
	}
	return s, nil
}

// segMark is what a scan of the inner log found: a batch (stored in the
// segment, or kept whole) and its end, or a purge entry.
type segMark struct {
	index uint64
	purge bool
	whole bool
	end   uint64
}

// lastMark scans the inner log back from hi for the last batch or purge
// entry; ok is false when there is none.
func (s *segLog) lastMark(hi uint64) (segMark, bool, error) {
	var m segMark
	found := false
	err := forEntriesBack(s.inner, hi, func(e *raftpb.Entry) (bool, error) {
		m, found = markAt(e)
		return !found, nil
	})
	return m, found, err
}

// markAt is the mark of entry e, if it has one.
func markAt(e *raftpb.Entry) (segMark, bool) {
	if isPurge(e) {
		return segMark{index: e.GetIndex(), purge: true}, true
	}
	if b, ok := storedHeader(e); ok {
		return segMark{index: e.GetIndex(), end: b.end()}, true
	}
	if e.GetType() == raftpb.EntryNormal {
		if mk, end, _ := markOf(e.GetData()); mk == markBatch {
			return segMark{index: e.GetIndex(), whole: true, end: end}, true
		}
	}
	return segMark{}, false
}

// reconcile cuts records no batch of the inner log accounts for, finds
// what is kept whole until it applies, and reveals the committed records.
func (s *segLog) reconcile() error {
	if err := s.dropUnbacked(); err != nil {
		return err
	}
	last, err := s.inner.LastIndex()
	if err != nil {
		return err
	}
	// The segment's end must lie between expect (the last stored batch
	// after the last applied purge, or 0 right after it) and hi (whole
	// batches after that one may have applied, and so be in the segment,
	// unless an unapplied purge precedes them).
	expect, hi, known := uint64(0), uint64(0), false
	for at := last; at > s.purgedAt; {
		m, ok, err := s.lastMark(at)
		if err != nil {
			return err
		}
		if !ok || m.index <= s.purgedAt {
			break
		}
		switch {
		case m.purge:
			// Not applied: the batches after it cannot be in the segment.
			s.pendingPurge = max(s.pendingPurge, m.index)
			hi = 0
		case m.whole:
			s.lastWhole = max(s.lastWhole, m.index)
			hi = max(hi, m.end)
		default:
			expect, known = m.end, true
		}
		if known {
			break
		}
		at = m.index - 1
	}
	if !known && s.purgedAt > 0 {
		// The last applied purge emptied the partition.
		known = true
	}
	next, _ := s.part.Tail()
	if !known {
		// No stored batch or purge after the log's snapshot: the snapshot
		// says where the segments end (orphan records from a crash between
		// the two writes are cut; a snapshot received from the leader
		// whose restore a crash interrupted is restored again).
		if err := s.reconcileSnapshot(next, hi); err != nil {
			return err
		}
	} else {
		hi = max(hi, expect)
		switch {
		case next > hi:
			if err := s.part.TruncateFrom(hi); err != nil {
				return fmt.Errorf("cut records beyond the raft log: %w", err)
			}
		case next < expect:
			return fmt.Errorf("%w: segments end at offset %d, the raft log's last batch at %d", errSegmentsBehind, next, expect)
		}
	}
	// Reveal what is committed: the last batch at or below the commit
	// index that is in the segment, unless a purge applied after it.
	hs, _, err := s.inner.InitialState()
	if err != nil {
		return err
	}
	next, _ = s.part.Tail()
	for at := min(hs.GetCommit(), last); at > s.purgedAt; {
		m, ok, err := s.lastMark(at)
		if err != nil || !ok || m.index <= s.purgedAt {
			return err
		}
		if !m.purge && m.end <= next {
			s.part.Reveal(m.end)
			return nil
		}
		at = m.index - 1
	}
	return nil
}

// dropUnbacked cuts the inner log before the first uncommitted stored
// header whose record is missing from the segment or is another record:
// the process died while raft was replacing an uncommitted suffix
// (Append cuts and rewrites the segment before the inner log). Those
// entries were never acknowledged as stored; raft sends them again.
// Committed headers are not touched (reconcile reports them).
func (s *segLog) dropUnbacked() error {
	hs, _, err := s.inner.InitialState()
	if err != nil {
		return err
	}
	first, err := s.inner.FirstIndex()
	if err != nil {
		return err
	}
	last, err := s.inner.LastIndex()
	if err != nil {
		return err
	}
	var buf []byte
	bad := uint64(0) // the first unbacked header since the last purge entry
	err = forEntries(s.inner, max(hs.GetCommit()+1, first), last, func(e *raftpb.Entry) (bool, error) {
		if isPurge(e) {
			bad = 0 // what precedes a purge may be gone with it
			return true, nil
		}
		b, ok := storedHeader(e)
		if !ok || bad != 0 || e.GetIndex() <= s.purgedAt {
			return true, nil
		}
		var count uint32
		var err error
		buf, count, err = s.part.ReadRecord(buf[:0], b.base)
		if err == nil && count == b.count && len(buf) == int(b.recLen) {
			return true, nil
		}
		if err != nil && !errors.Is(err, storage.ErrNoRecord) {
			return false, fmt.Errorf("raft entry %d: read batch at offset %d: %w", e.GetIndex(), b.base, err)
		}
		bad = e.GetIndex()
		return true, nil
	})
	if err != nil {
		return err
	}
	if bad != 0 {
		return s.cutInner(bad)
	}
	return nil
}

// cutInner removes the inner log's entries from index i on (i above the
// snapshot index: the entry before it is appended again, which replaces
// everything after it).
func (s *segLog) cutInner(i uint64) error {
	first, err := s.inner.FirstIndex()
	if err != nil {
		return err
	}
	if i <= first {
		return fmt.Errorf("%w: the raft log's first entry %d has no record", errSegmentsBehind, i)
	}
	prev, err := s.inner.Entries(i-1, i, ^uint64(0))
	if err != nil {
		return fmt.Errorf("raft log entry %d: %w", i-1, err)
	}
	if err := s.inner.Append(prev); err != nil {
		return fmt.Errorf("cut the raft log at %d: %w", i, err)
	}
	return nil
}

// reconcileSnapshot brings the partition to the inner log's snapshot
// position (when it has one) at start-up and reveals it; records of whole
// batches after it (up to hi) are kept.
func (s *segLog) reconcileSnapshot(next, hi uint64) error {
	snap, err := s.inner.Snapshot()
	if err != nil {
		return err
	}
	if snap.GetMetadata().GetIndex() == 0 || len(snap.GetData()) == 0 {
		return nil
	}
	ps, err := decodeSnapshot(snap.GetData())
	if err != nil {
		return fmt.Errorf("raft log snapshot at %d: %w", snap.GetMetadata().GetIndex(), err)
	}
	switch {
	case next > max(ps.next, hi):
		if err := s.part.TruncateFrom(max(ps.next, hi)); err != nil {
			return fmt.Errorf("cut records beyond the raft log's snapshot: %w", err)
		}
	case next < ps.next:
		if err := s.part.ResetTo(ps.next, ps.ts); err != nil {
			return fmt.Errorf("restore the raft log's snapshot at %d: %w", snap.GetMetadata().GetIndex(), err)
		}
	}
	if err := restoreOffsets(s.part.Offsets(), ps.offsets); err != nil {
		return fmt.Errorf("restore the raft log's snapshot at %d: %w", snap.GetMetadata().GetIndex(), err)
	}
	s.part.Reveal(ps.next)
	return nil
}
