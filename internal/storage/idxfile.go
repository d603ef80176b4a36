package storage

import (
	"fmt"
	"os"
)

// The index file of the active segment is open only while it has to be:
// its entries live in memory and reach the file when they are flushed,
// so a new or recovered active segment closes it (parkIndex) and the
// first flush reopens it (indexFile), which then stays open, as it does
// for every sealed segment (lookups read it). An idle partition therefore
// holds one descriptor (its log), a written one two; 10,000 idle
// partitions fit a 20,000-descriptor limit next to 1,000 connections.

// parkIndex closes the index file of an active segment whose entries are
// all written and synced. Caller must own the segment (creation,
// recovery) or hold flushMu.
func (s *segment) parkIndex() {
	if s.idx != nil {
		s.idx.Close()
		s.idx = nil
	}
}

// indexFile returns the open index file, reopening a parked one. Caller
// must hold flushMu (or own the segment).
func (s *segment) indexFile() (*os.File, error) {
	if s.idx != nil {
		return s.idx, nil
	}
	f, err := openFile(s.idxPath, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open segment %d index: %w", s.start, err)
	}
	s.idx = f
	return f, nil
}
