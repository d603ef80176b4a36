package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ErrClosed is returned by every method of a closed Log.
var ErrClosed = errors.New("raft log closed")

// entryLoc locates one entry on disk: its term (Term needs no read), the
// offset of its record in its segment, and its encoded size. 24 bytes per
// entry is the whole per-entry memory cost of the log.
type entryLoc struct {
	term uint64
	off  int64
	size uint32
}

// Log is a durable raft log and state for one raft group, stored in one
// directory. It implements raft.Storage and the host's LogStorage with
// the semantics of raft.MemoryStorage, and survives restarts. It is safe
// for concurrent use (one mutex).
type Log struct {
	mu   sync.Mutex
	dir  string
	opts Options
	log  *slog.Logger

	first firstMarker // the dummy entry before the first served one
	locs  []entryLoc  // locs[k] is entry first.index+1+k
	segs  []*segment  // ordered by first index; the last one is written
	cache entryCache

	hs       *pb.HardState
	hsSeq    uint64
	durable  hardStateRecord // what the hardstate file holds
	commitFd *os.File        // the commit file, written in place

	snap *pb.Snapshot

	buf    []byte // scratch for encoding appended records
	err    error  // sticky: a failed write leaves the Log unusable
	closed bool
}

// check returns the error every call fails with when the Log is closed
// or broken.
func (l *Log) check() error {
	if l.closed {
		return ErrClosed
	}
	return l.err
}

// fail records err as sticky and returns it.
func (l *Log) fail(err error) error {
	l.err = fmt.Errorf("raft log %s unusable after failed write: %w", l.dir, err)
	return err
}

func (l *Log) lastIndex() uint64 { return l.first.index + uint64(len(l.locs)) }

func (l *Log) loc(i uint64) entryLoc { return l.locs[i-l.first.index-1] }

// segFor returns the position in l.segs of the segment holding entry i.
func (l *Log) segFor(i uint64) int {
	return sort.Search(len(l.segs), func(k int) bool { return l.segs[k].first > i }) - 1
}

// InitialState returns the stored HardState (nil if none was ever set)
// and the ConfState of the latest snapshot, as MemoryStorage does.
func (l *Log) InitialState() (*pb.HardState, *pb.ConfState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return nil, nil, err
	}
	var hs *pb.HardState
	if l.hs != nil {
		hs = proto.CloneOf(l.hs)
		// The commit index may trail the compaction point: the commit
		// file is written without fsync, and after it is lost or torn the
		// hardstate file's older commit is all there is. Everything up to
		// the compaction point was applied, so it was committed; raft
		// refuses a commit below its first index.
		if !raft.IsEmptyHardState(hs) && hs.GetCommit() < l.first.index {
			hs.Commit = proto.Uint64(l.first.index)
		}
	}
	return hs, proto.CloneOf(pb.EnsureConfState(l.snap.GetMetadata().GetConfState())), nil
}

// Entries returns entries [lo, hi), at least one if any, and no more than
// fit maxSize bytes (proto.Size of each entry) after the first. Entries
// are served from the cache of recent entries or read from the files.
// Where MemoryStorage panics (hi past the last index + 1, lo > hi) it
// returns an error.
func (l *Log) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return nil, err
	}
	if lo <= l.first.index {
		return nil, raft.ErrCompacted
	}
	last := l.lastIndex()
	if hi > last+1 {
		return nil, fmt.Errorf("entries [%d, %d) past last index %d: %w", lo, hi, last, raft.ErrUnavailable)
	}
	if len(l.locs) == 0 {
		return nil, raft.ErrUnavailable
	}
	if lo > hi {
		return nil, fmt.Errorf("entries [%d, %d): lo above hi: %w", lo, hi, raft.ErrUnavailable)
	}
	if lo == hi {
		return []*pb.Entry{}, nil
	}
	end := lo + 1
	size := uint64(l.loc(lo).size)
	for ; end < hi; end++ {
		size += uint64(l.loc(end).size)
		if size > maxSize {
			break
		}
	}
	out := make([]*pb.Entry, 0, end-lo)
	diskEnd := min(end, max(lo, l.cache.first))
	if lo < diskEnd {
		var err error
		if out, err = l.readEntries(out, lo, diskEnd); err != nil {
			return nil, err
		}
	}
	for i := diskEnd; i < end; i++ {
		e, ok := l.cache.get(i)
		if !ok {
			return nil, fmt.Errorf("entry %d missing from cache starting at %d", i, l.cache.first)
		}
		out = append(out, e)
	}
	return out, nil
}

// readEntries appends entries [lo, hi) read from the segment files to out,
// with one read per segment touched.
func (l *Log) readEntries(out []*pb.Entry, lo, hi uint64) ([]*pb.Entry, error) {
	for lo < hi {
		k := l.segFor(lo)
		if k < 0 {
			return nil, fmt.Errorf("no segment holds entry %d", lo)
		}
		s := l.segs[k]
		segEnd := hi
		if k+1 < len(l.segs) {
			segEnd = min(hi, l.segs[k+1].first)
		}
		from := l.loc(lo).off
		lastLoc := l.loc(segEnd - 1)
		buf := make([]byte, lastLoc.off+recordHeaderBytes+int64(lastLoc.size)-from)
		if _, err := s.f.ReadAt(buf, from); err != nil {
			return nil, fmt.Errorf("read %s at offset %d: %w", s.path, from, err)
		}
		for i := lo; i < segEnd; i++ {
			payload, n, err := decodeRecord(buf)
			if err != nil {
				return nil, fmt.Errorf("%s at offset %d: entry %d: %w", s.path, l.loc(i).off, i, err)
			}
			e, err := decodeEntry(payload)
			if err != nil {
				return nil, fmt.Errorf("%s at offset %d: %w", s.path, l.loc(i).off, err)
			}
			if e.GetIndex() != i {
				return nil, fmt.Errorf("%s at offset %d: entry index %d, want %d: %w", s.path, l.loc(i).off, e.GetIndex(), i, errCorrupt)
			}
			out = append(out, e)
			buf = buf[n:]
		}
		lo = segEnd
	}
	return out, nil
}

// Term returns the term of entry i, for i in [FirstIndex()-1, LastIndex()].
func (l *Log) Term(i uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return 0, err
	}
	switch {
	case i < l.first.index:
		return 0, raft.ErrCompacted
	case i == l.first.index:
		return l.first.term, nil
	case i > l.lastIndex():
		return 0, raft.ErrUnavailable
	}
	return l.loc(i).term, nil
}

// LastIndex returns the index of the last entry (the snapshot or
// compaction index when the log holds none).
func (l *Log) LastIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return 0, err
	}
	return l.lastIndex(), nil
}

// FirstIndex returns the index of the first entry possibly available.
func (l *Log) FirstIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return 0, err
	}
	return l.first.index + 1, nil
}

// Snapshot returns a copy of the latest snapshot.
func (l *Log) Snapshot() (*pb.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return nil, err
	}
	return proto.CloneOf(l.snap), nil
}

// Closed reports whether Close has run.
func (l *Log) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Close closes the files. Every later call returns ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.closed = true
	var errs []error
	for _, s := range l.segs {
		if err := s.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.path, err))
		}
	}
	if l.commitFd != nil {
		if err := l.commitFd.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close commit file: %w", err))
		}
	}
	l.segs, l.locs, l.commitFd = nil, nil, nil
	l.cache.reset(0)
	return errors.Join(errs...)
}
