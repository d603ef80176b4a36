package replicated

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
)

// The upkeep of what a stampLog knows of its log: the windowed entries
// after the stored commit index (told to the partition's requests), the
// start-up replay gate and the purge in the log.

// inflightUnbound marks a key accepted by raft but not yet appended.
const inflightUnbound = ^uint64(0)

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
