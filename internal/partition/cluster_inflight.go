package partition

import (
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
)

// Requests in flight in a partition group's log (see stampLog): the keys
// of windowed entries appended or accepted but not yet applied, and the
// start-up replay gate.

// inflightUnbound marks a key accepted by raft but not yet appended.
const inflightUnbound = ^uint64(0)

// Errors of prepare.
var (
	errInFlight  = errors.New("partition: the same request is in flight in the raft log")
	errDuplicate = errors.New("partition: the same request is already committed")
	errReplaying = errors.New("partition: the raft log is still being replayed")
)

// seedInflight records the windowed entries after the stored commit index
// (a restart: the committed ones are applied again before any proposal).
func (s *stampLog) seedInflight(last uint64) error {
	hs, _, err := s.LogStorage.InitialState()
	if err != nil {
		return fmt.Errorf("partition %d raft state: %w", s.pid, err)
	}
	first, err := s.LogStorage.FirstIndex()
	if err != nil {
		return fmt.Errorf("partition %d raft log: %w", s.pid, err)
	}
	for lo := max(hs.GetCommit()+1, first); lo <= last; lo += scanBackChunk {
		hi := min(lo+scanBackChunk, last+1)
		ents, err := s.LogStorage.Entries(lo, hi, ^uint64(0))
		if err != nil {
			return fmt.Errorf("partition %d raft log entries %d..%d: %w", s.pid, lo, hi-1, err)
		}
		s.bindInflight(ents)
	}
	return nil
}

// findReplayEnd sets replayTo: the last entry with data at or below the
// stored commit index.
func (s *stampLog) findReplayEnd() error {
	hs, _, err := s.LogStorage.InitialState()
	if err != nil {
		return fmt.Errorf("partition %d raft state: %w", s.pid, err)
	}
	first, err := s.LogStorage.FirstIndex()
	if err != nil {
		return fmt.Errorf("partition %d raft log: %w", s.pid, err)
	}
	for hi := hs.GetCommit(); hi >= first && hi > 0; {
		lo := max(first, hi-min(hi, scanBackChunk-1))
		ents, err := s.LogStorage.Entries(lo, hi+1, ^uint64(0))
		if err != nil {
			return fmt.Errorf("partition %d raft log entries %d..%d: %w", s.pid, lo, hi, err)
		}
		for i := len(ents) - 1; i >= 0; i-- {
			if ents[i].GetType() == raftpb.EntryNormal && len(ents[i].GetData()) > 0 {
				s.replayTo = ents[i].GetIndex()
				return nil
			}
		}
		hi = lo - 1
	}
	s.replayed = true
	return nil
}

// bindInflight records the windowed entries among ents at their index.
func (s *stampLog) bindInflight(ents []*raftpb.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range ents {
		if e.GetType() != raftpb.EntryNormal {
			continue
		}
		if key, ok := windowKeyOf(e.GetData()); ok {
			s.inflight[key] = e.GetIndex()
		}
	}
}

// applied notes that the entry at index with data has applied (called by
// ApplyReplicated on the loop): its request leaves the in-flight set, and
// the start-up replay may be complete.
func (s *stampLog) applied(index uint64, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index >= s.replayTo {
		s.replayed = true
	}
	key, ok := windowKeyOf(data)
	if !ok {
		return
	}
	if at, ok := s.inflight[key]; ok && (at <= index || at == inflightUnbound) {
		delete(s.inflight, key)
	}
}
