package replicated

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
)

// stampLog is a partition group's raft log wrapped to know what the log
// holds, as the Prepare hook (prepare.go) needs it: the stamping tail (the
// offset the next proposed batch gets: the end of the last batch in the
// log, committed or not, or 0 after a purge entry, and the timestamp of
// that batch), the start-up replay gate, a purge in the log not yet
// applied, and the purge identities the log holds. It tells the
// partition's requests (requests.go) which windowed entries the log holds.
// It does no state-machine work: it stores and returns entries through
// the log it wraps.
//
// What prepare accepted (raft admitted the proposal to its log in memory)
// counts as in the log until the next Append, which settles it: a Ready
// carries every entry raft admitted since the previous one, unless raft
// replaced them before they were stored (a stale leader's proposals and,
// in the same loop pass, a new leader's append). Such a replacement cuts
// nothing that was stored, so each Append takes the tail, the pending
// purge and the requests in flight from what the log stores, never from
// what was accepted before it.
//
// The host calls Append and ApplySnapshot on its loop only; the mutex
// makes the start-up computation and tests race-free.
type stampLog struct {
	replication.LogStorage
	// hdr is the log scanned for marks and keys: the inner log of a
	// segLog (headers only, no batch read back), else the log itself.
	hdr replication.LogStorage
	pid uint32
	// stored returns the partition's own next offset and last timestamp,
	// the tail when the log holds no batch or purge entry.
	stored func() (next, ts uint64)
	// reqs learns which windowed entries the log holds.
	reqs *requests

	mu sync.Mutex
	// tail is the offset the next proposed batch gets: logTail moved past
	// what prepare accepted since the last Append. tailTs is the last
	// timestamp stamped or stored (it only grows).
	tail   uint64
	tailTs uint64
	// logTail is the tail of the stored log alone.
	logTail uint64
	// acceptedPurge: prepare accepted a purge since the last Append.
	acceptedPurge bool
	// replayTo is the last data entry at or below the commit index stored
	// when the log was opened; until it has applied again (replayed) the
	// duplicate window is incomplete and prepare refuses proposals
	// (errReplaying, answered 58).
	replayTo uint64
	replayed bool
	// purging is the index of the last purge entry in the log and not yet
	// applied (inflightUnbound: accepted, not yet appended; 0: none).
	// While it is set prepare refuses batches (errPurgePending): a batch
	// after a purge is stamped only once the purge has applied, which
	// segLog relies on.
	purging uint64
	// lastApplied is the last index applied.
	lastApplied uint64
	// purgeSeen is the highest purge identity among the unapplied purge
	// entries in the log or accepted.
	purgeSeen uint64
}

// newStampLog wraps st and computes the initial tail: from the last batch
// or purge entry in the log (a batch ending below the partition's next
// offset counts as that offset), else the partition's next offset. The
// windowed entries after the stored commit index are told to reqs.
func newStampLog(st replication.LogStorage, pid uint32, stored func() (uint64, uint64), reqs *requests) (*stampLog, error) {
	s := &stampLog{LogStorage: st, hdr: st, pid: pid, stored: stored, reqs: reqs}
	if h, ok := st.(interface{ headers() replication.LogStorage }); ok {
		s.hdr = h.headers()
	}
	last, err := st.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("partition %d raft log: %w", pid, err)
	}
	if err := s.seedInflight(last); err != nil {
		return nil, err
	}
	if err := s.findReplayEnd(); err != nil {
		return nil, err
	}
	next, ts := stored()
	m, end, mts, at, err := s.scanBack(last)
	if err != nil {
		return nil, err
	}
	switch m {
	case markBatch:
		s.logTail, s.tailTs = max(end, next), max(mts, ts)
	case markPurge:
		s.logTail, s.tailTs = 0, ts
		s.purging = at
	default:
		s.logTail, s.tailTs = next, ts
	}
	s.tail = s.logTail
	return s, nil
}

// scanBack finds the last batch or purge entry at or before index hi
// (its mark, end offset, timestamp and index).
func (s *stampLog) scanBack(hi uint64) (entryMark, uint64, uint64, uint64, error) {
	m, end, ts, at := markNone, uint64(0), uint64(0), uint64(0)
	err := forEntriesBack(s.hdr, hi, func(e *raftpb.Entry) (bool, error) {
		if e.GetType() == raftpb.EntryNormal {
			if m, end, ts = markOf(e.GetData()); m != markNone {
				at = e.GetIndex()
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return markNone, 0, 0, 0, fmt.Errorf("partition %d: %w", s.pid, err)
	}
	return m, end, ts, at, nil
}

// Append stores entries and settles what prepare accepted (see
// stampLog): the tail becomes that of the stored log (the last batch or
// purge among entries; after a replaced suffix without one, the last
// before it), and the requests and purge accepted and not among entries
// are forgotten.
func (s *stampLog) Append(entries []*raftpb.Entry) error {
	return s.appendWith(entries, s.LogStorage.Append)
}

// AppendDeferred implements replication.DeferredSync over the segment
// log's own.
func (s *stampLog) AppendDeferred(entries []*raftpb.Entry) (func() error, error) {
	d, ok := s.LogStorage.(replication.DeferredSync)
	if !ok {
		return nil, s.Append(entries)
	}
	var sync func() error
	err := s.appendWith(entries, func(es []*raftpb.Entry) error {
		var err error
		sync, err = d.AppendDeferred(es)
		return err
	})
	return sync, err
}

// appendWith is Append storing the entries with store.
func (s *stampLog) appendWith(entries []*raftpb.Entry, store func([]*raftpb.Entry) error) error {
	if len(entries) == 0 {
		return store(entries)
	}
	last, err := s.LogStorage.LastIndex()
	if err != nil {
		return err
	}
	if err := store(entries); err != nil {
		return err
	}
	from, to := entries[0].GetIndex(), entries[len(entries)-1].GetIndex()
	if from <= last {
		// A conflicting suffix was replaced: its requests are gone.
		s.reqs.cut(from)
		s.mu.Lock()
		cut := s.purging != inflightUnbound && s.purging >= from
		s.mu.Unlock()
		if cut {
			if err := s.rescanPurge(from - 1); err != nil {
				return err
			}
		}
		if err := s.rescanPurgeSeen(from - 1); err != nil {
			return err
		}
	}
	s.reqs.bind(entries)
	s.reqs.dropUnbound()
	s.bindPurge(entries)
	if err := s.settlePurge(to); err != nil {
		return err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].GetType() != raftpb.EntryNormal {
			continue
		}
		if m, end, ts := markOf(entries[i].GetData()); m != markNone {
			s.setLogMark(m, end, ts)
			return nil
		}
	}
	if from > last {
		s.setLogMark(markNone, 0, 0) // no batch stored: the stored tail stands
		return nil
	}
	m, end, ts, _, err := s.scanBack(from - 1)
	if err != nil {
		return err
	}
	if m == markNone {
		next, nts := s.stored()
		s.setLogMark(markBatch, next, nts)
		return nil
	}
	s.setLogMark(m, end, ts)
	return nil
}

// settlePurge, after an append ending at index to, recomputes the pending
// purge and the identities in the log when a purge prepare accepted is
// not among the appended entries (raft replaced it before it was stored).
func (s *stampLog) settlePurge(to uint64) error {
	s.mu.Lock()
	accepted, lost := s.acceptedPurge, s.purging == inflightUnbound
	s.acceptedPurge = false
	s.mu.Unlock()
	if !accepted {
		return nil
	}
	if lost {
		if err := s.rescanPurge(to); err != nil {
			return err
		}
	}
	// The identities: a lost purge's may also hide behind another purge
	// among the entries.
	return s.rescanPurgeSeen(to)
}

// ApplySnapshot replaces the log with snap; the tail becomes the
// snapshot's next offset, and what the replaced log held (a pending
// purge, requests in flight, the replay gate) is forgotten.
func (s *stampLog) ApplySnapshot(snap *raftpb.Snapshot) error {
	if err := s.LogStorage.ApplySnapshot(snap); err != nil {
		return err
	}
	st, err := decodeSnapshot(snap.GetData())
	if err != nil {
		return err
	}
	s.setLogMark(markBatch, st.next, st.ts)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purging = 0
	s.acceptedPurge = false
	s.purgeSeen = 0
	s.reqs.reset()
	s.lastApplied = max(s.lastApplied, snap.GetMetadata().GetIndex())
	s.replayed = true
	return nil
}

// setMark moves the tail past a batch (its end and timestamp) or purge
// prepare accepted; the next Append settles it.
func (s *stampLog) setMark(m entryMark, end, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == markPurge {
		s.tail = 0
		return
	}
	s.tail = end
	s.tailTs = max(s.tailTs, ts)
}

// setLogMark records the last batch or purge of the stored log (markNone:
// it did not change) and makes the stored log's tail the tail, dropping
// what was accepted before the append that stored it.
func (s *stampLog) setLogMark(m entryMark, end, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m {
	case markPurge:
		s.logTail = 0
	case markBatch:
		s.logTail = end
		s.tailTs = max(s.tailTs, ts)
	}
	s.tail = s.logTail
}

// Tail returns the offset the next proposed batch gets and the last
// stamped timestamp.
func (s *stampLog) Tail() (next, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tail, s.tailTs
}

// replayDone reports whether the start-up replay has applied again.
func (s *stampLog) replayDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replayed
}

// purgePending reports a purge in the log (or accepted) not yet applied.
func (s *stampLog) purgePending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.purging != 0
}

// purgeInLog reports whether purge identity id is among the unapplied
// purge entries in the log or accepted.
func (s *stampLog) purgeInLog(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id <= s.purgeSeen
}

// acceptPurge records a purge entry of identity id raft has just
// admitted: the tail restarts at 0 and batches wait for its apply.
func (s *stampLog) acceptPurge(id uint64) {
	s.setMark(markPurge, 0, 0)
	s.mu.Lock()
	s.purging = inflightUnbound
	s.purgeSeen = max(s.purgeSeen, id)
	s.acceptedPurge = true
	s.mu.Unlock()
}

// The upkeep of what a stampLog knows of its log: the windowed entries
// after the stored commit index (told to the partition's requests), the
// start-up replay gate and the purge in the log.

// seedInflight records the windowed entries after the stored commit index
// (a restart: the committed ones are applied again before any proposal).
func (s *stampLog) seedInflight(last uint64) error {
	hs, _, err := s.hdr.InitialState()
	if err != nil {
		return fmt.Errorf("partition %d raft state: %w", s.pid, err)
	}
	first, err := s.hdr.FirstIndex()
	if err != nil {
		return fmt.Errorf("partition %d raft log: %w", s.pid, err)
	}
	err = forEntries(s.hdr, max(hs.GetCommit()+1, first), last, func(e *raftpb.Entry) (bool, error) {
		s.reqs.bind([]*raftpb.Entry{e})
		s.purgeSeen = max(s.purgeSeen, entryPurgeID(e))
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("partition %d: %w", s.pid, err)
	}
	return nil
}

// findReplayEnd sets replayTo: the last entry with data at or below the
// stored commit index.
func (s *stampLog) findReplayEnd() error {
	hs, _, err := s.hdr.InitialState()
	if err != nil {
		return fmt.Errorf("partition %d raft state: %w", s.pid, err)
	}
	found := false
	err = forEntriesBack(s.hdr, hs.GetCommit(), func(e *raftpb.Entry) (bool, error) {
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			s.replayTo, found = e.GetIndex(), true
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("partition %d: %w", s.pid, err)
	}
	if !found {
		s.replayed = true
	}
	return nil
}

// applied notes that the entry at index with data has applied (called by
// Apply on the loop): the start-up replay may be complete, and a purge
// no longer pending.
func (s *stampLog) applied(index uint64, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastApplied = index
	if index >= s.replayTo {
		s.replayed = true
	}
	if len(data) >= entryCommonLen && data[0] == entryPurge && s.purging != inflightUnbound && index >= s.purging {
		s.purging = 0
	}
}

// bindPurge records the last purge entry among ents as the pending one,
// and the identities of all of them as seen.
func (s *stampLog) bindPurge(ents []*raftpb.Entry) {
	s.mu.Lock()
	for _, e := range ents {
		s.purgeSeen = max(s.purgeSeen, entryPurgeID(e))
	}
	s.mu.Unlock()
	for i := len(ents) - 1; i >= 0; i-- {
		if m, _, _ := markOf(ents[i].GetData()); m == markPurge && ents[i].GetType() == raftpb.EntryNormal {
			s.mu.Lock()
			s.purging = ents[i].GetIndex()
			s.mu.Unlock()
			return
		}
	}
}

// rescanPurge recomputes purging after the entries above hi were
// replaced: the last mark at or below hi, when it is a purge after the
// last applied index (a batch after a purge proves that purge committed,
// so it needs no guard).
func (s *stampLog) rescanPurge(hi uint64) error {
	s.mu.Lock()
	applied := s.lastApplied
	s.purging = 0
	s.mu.Unlock()
	m, _, _, at, err := s.scanBack(hi)
	if err != nil {
		return err
	}
	if m == markPurge && at > applied {
		s.mu.Lock()
		s.purging = at
		s.mu.Unlock()
	}
	return nil
}

// rescanPurgeSeen recomputes purgeSeen after the entries above hi were
// replaced: the highest identity among the purge entries after the last
// applied index up to hi (those applied are purgeDone's).
func (s *stampLog) rescanPurgeSeen(hi uint64) error {
	s.mu.Lock()
	from := s.lastApplied + 1
	s.mu.Unlock()
	first, err := s.hdr.FirstIndex()
	if err != nil {
		return fmt.Errorf("partition %d raft log: %w", s.pid, err)
	}
	seen := uint64(0)
	if from = max(from, first); from <= hi {
		err = forEntries(s.hdr, from, hi, func(e *raftpb.Entry) (bool, error) {
			seen = max(seen, entryPurgeID(e))
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("partition %d: %w", s.pid, err)
		}
	}
	s.mu.Lock()
	s.purgeSeen = seen
	s.mu.Unlock()
	return nil
}
