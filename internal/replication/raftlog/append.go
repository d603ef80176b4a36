package raftlog

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/iggo-dev/iggo/internal/fileio"

	pb "go.etcd.io/raft/v3/raftpb"
)

// writeChunkBytes is how much encoded data Append gathers before one
// write(2); a single larger entry is written alone.
const writeChunkBytes = 1 << 20

// Append stores entries, which must have consecutive indexes. Entries at
// or below the compaction point are skipped; an entry at an index the log
// already holds truncates the log there first (the segment holding it is
// cut at that record, later segments are removed). As in MemoryStorage,
// appending past LastIndex()+1 is refused (an error here, a panic there).
// With Options.Sync the written files are fsynced before Append returns.
func (l *Log) Append(entries []*pb.Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, err := l.appendLocked(entries)
	if err != nil || !l.opts.Sync {
		return err
	}
	if err := w.sync(l.opts.FileIO, l.dir); err != nil {
		return l.fail(err)
	}
	return nil
}

// AppendDeferred is Append leaving the fsync of Options.Sync to the
// returned function (nil when there is nothing to sync): the host runs
// the syncs of several groups' logs at once (replication.DeferredSync).
// The entries are not durable until it returned nil; a sync failure
// stops the log as a failed Append does.
func (l *Log) AppendDeferred(entries []*pb.Entry) (func() error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, err := l.appendLocked(entries)
	if err != nil || !l.opts.Sync || len(w.touched) == 0 {
		return nil, err
	}
	return func() error {
		if err := w.sync(l.opts.FileIO, l.dir); err != nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.fail(err)
		}
		return nil
	}, nil
}

// written is what one append wrote: the segments to sync, and whether one
// was created (then the directory is synced too).
type written struct {
	touched []*segment
	created bool
}

// sync makes w durable. A failed fsync is never retried (the log
// fails): the kernel may have dropped the pages it could not write.
func (w written) sync(fio fileio.IO, dir string) error {
	for _, t := range w.touched {
		if err := fio.Sync(t.f); err != nil {
			return fmt.Errorf("fsync %s: %w", t.path, err)
		}
	}
	if w.created {
		return syncDir(dir)
	}
	return nil
}

// appendLocked is Append up to the sync. Caller holds l.mu.
func (l *Log) appendLocked(entries []*pb.Entry) (written, error) {
	if len(entries) == 0 {
		return written{}, nil
	}
	if err := l.check(); err != nil {
		return written{}, err
	}
	for k := 1; k < len(entries); k++ {
		if entries[k].GetIndex() != entries[0].GetIndex()+uint64(k) {
			return written{}, fmt.Errorf("append: entry %d follows entry %d", entries[k].GetIndex(), entries[k-1].GetIndex())
		}
	}
	first := l.first.index + 1
	if entries[0].GetIndex()+uint64(len(entries))-1 < first {
		return written{}, nil
	}
	if first > entries[0].GetIndex() {
		entries = entries[first-entries[0].GetIndex():]
	}
	at := entries[0].GetIndex()
	last := l.lastIndex()
	if at > last+1 {
		return written{}, fmt.Errorf("append: missing log entry [last: %d, append at: %d]", last, at)
	}
	if at <= last {
		if err := l.truncateFrom(at); err != nil {
			return written{}, l.fail(err)
		}
	}
	w, err := l.write(entries)
	if err != nil {
		return written{}, l.fail(err)
	}
	return w, nil
}

// truncateFrom removes entries with index >= i (first.index < i <=
// lastIndex): later segments are deleted (directory fsynced, so they
// cannot reappear after the entries that replace them), the segment
// holding i is cut at i's record.
func (l *Log) truncateFrom(i uint64) error {
	k := l.segFor(i)
	removed := false
	for len(l.segs) > k+1 {
		s := l.segs[len(l.segs)-1]
		if err := closeAndRemove(s); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
		removed = true
	}
	if removed {
		if err := syncDir(l.dir); err != nil {
			return err
		}
	}
	s := l.segs[k]
	off := l.loc(i).off
	if err := l.opts.FileIO.Truncate(s.f, off); err != nil {
		return fmt.Errorf("truncate %s at offset %d: %w", s.path, off, err)
	}
	s.size = off
	l.locs = l.locs[:i-l.first.index-1]
	l.cache.truncateFrom(i)
	return nil
}

// write appends the records of entries (starting at lastIndex()+1) to the
// last segment, rolling to a new segment past Options.SegmentBytes.
func (l *Log) write(entries []*pb.Entry) (written, error) {
	var touched []*segment
	created := false
	s := l.active()
	pending := l.buf[:0]
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if _, err := l.opts.FileIO.WriteAt(s.f, pending, s.size); err != nil {
			return fmt.Errorf("write %s at offset %d: %w", s.path, s.size, err)
		}
		s.size += int64(len(pending))
		pending = pending[:0]
		return nil
	}
	for _, e := range entries {
		if s == nil || s.size+int64(len(pending)) >= l.opts.SegmentBytes {
			if err := flush(); err != nil {
				return written{}, err
			}
			ns, err := l.createSegment(e.GetIndex())
			if err != nil {
				return written{}, err
			}
			s, created = ns, true
		}
		if len(touched) == 0 || touched[len(touched)-1] != s {
			touched = append(touched, s)
		}
		off := s.size + int64(len(pending))
		var size uint32
		var err error
		pending, size, err = appendEntryRecord(pending, e)
		if err != nil {
			return written{}, err
		}
		l.locs = append(l.locs, entryLoc{term: e.GetTerm(), off: off, size: size})
		l.cache.add(e, size)
		if len(pending) >= writeChunkBytes {
			if err := flush(); err != nil {
				return written{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return written{}, err
	}
	if cap(pending) <= 4*writeChunkBytes {
		l.buf = pending[:0]
	}
	return written{touched: touched, created: created}, nil
}

// active returns the segment new entries go to, or nil if there is none.
func (l *Log) active() *segment {
	if len(l.segs) == 0 {
		return nil
	}
	return l.segs[len(l.segs)-1]
}

// createSegment starts a new, empty segment whose first entry is first.
func (l *Log) createSegment(first uint64) (*segment, error) {
	path := filepath.Join(l.dir, segmentName(first))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	s := &segment{first: first, path: path, f: f}
	l.segs = append(l.segs, s)
	return s, nil
}

// closeAndRemove closes and deletes a segment file.
func closeAndRemove(s *segment) error {
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	if err := os.Remove(s.path); err != nil {
		return fmt.Errorf("remove %s: %w", s.path, err)
	}
	return nil
}
