package raftlog

import (
	"bytes"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// CreateSnapshot records a snapshot of the state machine at index i (with
// the term of entry i), replacing the previous one; cs, if not nil,
// becomes its ConfState. The snapshot file is replaced atomically and
// durably before it returns. The log itself is unchanged (see Compact).
// Returns raft.ErrSnapOutOfDate if i is not above the current snapshot's
// index, raft.ErrCompacted if entry i's term is no longer known, and an
// error (MemoryStorage panics) if i is past the last index.
func (l *Log) CreateSnapshot(i uint64, cs *pb.ConfState, data []byte) (*pb.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return nil, err
	}
	if i <= l.snap.GetMetadata().GetIndex() {
		return nil, raft.ErrSnapOutOfDate
	}
	if i > l.lastIndex() {
		return nil, fmt.Errorf("create snapshot: index %d is past last index %d", i, l.lastIndex())
	}
	if i < l.first.index {
		return nil, fmt.Errorf("create snapshot at %d: %w", i, raft.ErrCompacted)
	}
	term := l.first.term
	if i > l.first.index {
		term = l.loc(i).term
	}
	snap := proto.CloneOf(l.snap)
	snap.Metadata.Index = new(i)
	snap.Metadata.Term = new(term)
	if cs != nil {
		snap.Metadata.ConfState = proto.CloneOf(cs)
	}
	snap.Data = bytes.Clone(data)
	if err := l.storeSnapshot(snapshotRecord{kind: snapCreated, gen: l.first.gen, snap: snap}); err != nil {
		return nil, l.fail(fmt.Errorf("create snapshot: %w", err))
	}
	l.snap = snap
	return proto.CloneOf(snap), nil
}

// ApplySnapshot replaces the log and the snapshot with snap (a follower
// catching up): every entry is dropped and the log continues after the
// snapshot's index. Returns raft.ErrSnapOutOfDate if the current snapshot
// is at or above snap's index (an index-0 snapshot may be replaced, as in
// MemoryStorage).
//
// Crash safety: the snapshot file is written first, marked as applied
// with a new generation; then the segments are removed; then the first
// marker takes the snapshot's index, term and generation. Open finds an
// applied snapshot whose generation the marker lacks and finishes the job,
// so a crash leaves either the old log or the new one.
func (l *Log) ApplySnapshot(snap *pb.Snapshot) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	snap = pb.EnsureSnapshot(proto.CloneOf(snap))
	cur := l.snap.GetMetadata().GetIndex()
	if cur != 0 && cur >= snap.GetMetadata().GetIndex() {
		return raft.ErrSnapOutOfDate
	}
	gen := l.first.gen + 1
	if err := l.storeSnapshot(snapshotRecord{kind: snapApplied, gen: gen, snap: snap}); err != nil {
		return l.fail(fmt.Errorf("apply snapshot: %w", err))
	}
	l.snap = snap
	if err := l.resetLog(firstMarker{index: snap.GetMetadata().GetIndex(), term: snap.GetMetadata().GetTerm(), gen: gen}); err != nil {
		return l.fail(fmt.Errorf("apply snapshot: %w", err))
	}
	return nil
}

// resetLog removes every segment and makes m the first marker.
func (l *Log) resetLog(m firstMarker) error {
	for len(l.segs) > 0 {
		if err := closeAndRemove(l.segs[len(l.segs)-1]); err != nil {
			return err
		}
		l.segs = l.segs[:len(l.segs)-1]
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	if err := writeFileAtomic(l.opts.FileIO, l.dir, firstFile, encodeFirst(m)); err != nil {
		return err
	}
	l.first = m
	l.locs = nil
	l.cache.reset(m.index + 1)
	return nil
}

func (l *Log) storeSnapshot(r snapshotRecord) error {
	payload, err := encodeSnapshot(r)
	if err != nil {
		return err
	}
	if len(payload) > MaxEntryBytes {
		return fmt.Errorf("snapshot of %d bytes is over the %d limit", len(payload), MaxEntryBytes)
	}
	return writeFileAtomic(l.opts.FileIO, l.dir, snapshotFile, payload)
}

// Compact discards the entries up to compactIndex: the first marker takes
// compactIndex and its term (durably), then every segment whose entries
// are all at or below compactIndex is deleted. Entries of a segment that
// is only partly compacted stay on disk but are no longer served. Returns
// raft.ErrCompacted if compactIndex is not above the current compaction
// point, an error (MemoryStorage panics) if it is past the last index.
func (l *Log) Compact(compactIndex uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if compactIndex <= l.first.index {
		return raft.ErrCompacted
	}
	if compactIndex > l.lastIndex() {
		return fmt.Errorf("compact %d is out of bound lastindex(%d)", compactIndex, l.lastIndex())
	}
	m := firstMarker{index: compactIndex, term: l.loc(compactIndex).term, gen: l.first.gen}
	if err := writeFileAtomic(l.opts.FileIO, l.dir, firstFile, encodeFirst(m)); err != nil {
		return l.fail(fmt.Errorf("compact: %w", err))
	}
	drop := compactIndex - l.first.index
	rest := l.locs[drop:]
	if cap(rest) > 2*len(rest)+64 {
		rest = append([]entryLoc(nil), rest...)
	}
	l.locs = rest
	l.first = m
	l.cache.dropThrough(compactIndex)
	for len(l.segs) > 0 && segmentEnd(l.segs, 0, l.lastIndex()) <= compactIndex {
		if err := closeAndRemove(l.segs[0]); err != nil {
			return l.fail(fmt.Errorf("compact: %w", err))
		}
		l.segs[0] = nil
		l.segs = l.segs[1:]
	}
	return nil
}

// segmentEnd is the index of the last entry segs[k] holds (first-1 when
// it holds none).
func segmentEnd(segs []*segment, k int, last uint64) uint64 {
	if k+1 < len(segs) {
		return segs[k+1].first - 1
	}
	return max(last, segs[k].first-1)
}
