package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Retention is the removal policy of ../shared/design/semantics.md §4.4.
// Only whole sealed segments are removed, oldest first; the active segment
// is never removed, and in held mode neither is a sealed segment holding a
// record not yet revealed, nor any segment after it (see removableLocked).
type Retention struct {
	// MaxAge is message_expiry: a sealed segment is removed once the
	// timestamp of its newest record plus MaxAge is <= now (Options.Clock).
	// Zero means never.
	MaxAge time.Duration
	// MaxBytes is the partition's byte budget (the caller derives it from
	// max_topic_size, e.g. max(max_topic_size / partitions,
	// segment_size + max_message_size)): oldest sealed segments are removed
	// while the total size of all segments, active included, exceeds it.
	// Zero means unlimited.
	MaxBytes uint64
}

// Removed counts what a retention call removed.
type Removed struct {
	Segments int
	Messages uint64
	Bytes    uint64
}

// Retain removes sealed segments by age and size. Segments are removed as
// a prefix (oldest first) so the retained offsets stay contiguous; an
// unexpired old segment stops age-based removal.
func (p *Partition) Retain(r Retention) (Removed, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Removed{}, ErrClosed
	}
	return p.removeOldestLocked(p.retainCountLocked(r))
}

// retainCountLocked is the number of oldest sealed segments r removes
// now. Caller must hold p.mu.
func (p *Partition) retainCountLocked(r Retention) int {
	segs := p.segs.Load().segs
	total := uint64(p.sealedBytes.Load() + p.active.size)
	return RetainPrefix(p.removableLocked(), func(i int) Span {
		return Span{Bytes: segs[i].sealedSize, MaxTimestamp: segs[i].maxTs}
	}, total, r, p.nowMicros())
}

// Span is a sealed segment as retention sees it.
type Span struct {
	// Bytes is the segment's size.
	Bytes int64
	// MaxTimestamp is the timestamp of its newest record (µs); 0 when
	// unknown, which age-based removal never removes.
	MaxTimestamp uint64
}

// RetainPrefix is the rule of Retention: how many of the n oldest
// removable segments (span(0) the oldest) r removes at now (µs), where
// total is the size of the whole log, removable segments and the rest.
// Age removes a prefix of expired segments and stops at the first that is
// not; size then removes more, oldest first, while the log is larger
// than MaxBytes. The partition applies it to its segments, and the remote
// tier (internal/tier) to both tiers together.
func RetainPrefix(n int, span func(i int) Span, total uint64, r Retention, now uint64) int {
	k := 0
	if r.MaxAge > 0 {
		age := uint64(r.MaxAge / time.Microsecond)
		for k < n {
			ts := span(k).MaxTimestamp
			if ts == 0 || ts > now || now-ts < age {
				break
			}
			k++
		}
	}
	if r.MaxBytes > 0 {
		for i := 0; i < k; i++ {
			total -= uint64(span(i).Bytes)
		}
		for k < n && total > r.MaxBytes {
			total -= uint64(span(k).Bytes)
			k++
		}
	}
	return k
}

// removableLocked is the number of oldest segments that may be removed:
// every sealed segment, except in held mode, where the prefix stops at the
// first segment ending after the revealed end (a segment holding an
// unrevealed record, which raft may still cut or the caller still needs).
// Caller must hold p.mu.
func (p *Partition) removableLocked() int {
	segs := p.segs.Load().segs
	n := max(len(segs)-1, 0)
	if !p.opts.Held {
		return n
	}
	vis := p.visNext.Load()
	k := 0
	for k < n && segs[k].sealedEnd <= vis {
		k++
	}
	return k
}

// RetainCount is the number of oldest sealed segments Retain(r) would
// remove now (cluster mode compacts the raft log past them first, then
// removes them with DeleteOldestSegments).
func (p *Partition) RetainCount(r Retention) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0
	}
	return p.retainCountLocked(r)
}

// OldestSegmentsEnd returns how many segments DeleteOldestSegments(n)
// would remove now (at most the removable ones: sealed and, in held mode,
// fully revealed) and the first offset kept after them.
func (p *Partition) OldestSegmentsEnd(n int) (k int, keep uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	segs := p.segs.Load().segs
	if p.closed || len(segs) == 0 {
		return 0, 0
	}
	k = min(max(n, 0), p.removableLocked())
	return k, segs[k].start
}

// DeleteOldestSegments removes the n oldest sealed segments
// (DELETE_SEGMENTS); n larger than the number of sealed segments removes
// them all. The active segment is never removed; in held mode the removal
// also stops at the first segment holding an unrevealed record.
func (p *Partition) DeleteOldestSegments(n int) (Removed, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Removed{}, ErrClosed
	}
	return p.removeOldestLocked(min(max(n, 0), p.removableLocked()))
}

// removeOldestLocked drops the first k (sealed) segments from the list,
// then unlinks their files outside the lock. Caller must hold p.mu; it is
// released.
func (p *Partition) removeOldestLocked(k int) (Removed, error) {
	var rm Removed
	if k == 0 {
		p.mu.Unlock()
		return rm, nil
	}
	segs := p.segs.Load().segs
	victims := segs[:k:k]
	rest := make([]*segment, len(segs)-k)
	copy(rest, segs[k:])
	for _, s := range victims {
		rm.Segments++
		rm.Bytes += uint64(s.sealedSize)
		rm.Messages += s.sealedEnd - s.start
		p.sealedBytes.Add(-s.sealedSize)
	}
	p.qmu.Lock()
	p.segs.Store(&segList{segs: rest})
	p.qmu.Unlock()
	p.mu.Unlock()
	var err error
	for _, s := range victims {
		err = errors.Join(err, s.unlink())
		s.release()
	}
	return rm, err
}

// unlink removes the segment's files; open descriptors stay usable. The log
// goes first: an index left without its log is cleaned up by recovery.
func (s *segment) unlink() error {
	var err error
	for _, path := range []string{s.logPath, s.idxPath, s.quarPath()} {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove segment file: %w", rerr))
		}
	}
	return err
}

// Purge deletes every message and every consumer offset of the partition;
// offsets restart at 0 with a single empty segment (semantics.md §3.3-3.4:
// "offsets restart at 0"). A marker file makes the purge complete at the
// next Open if the process dies in the middle. Readers holding extents of
// the old segments keep reading them until they release.
func (p *Partition) Purge() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	marker := filepath.Join(p.dir, purgeMarkerName)
	if err := writeFileSync(marker, nil); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	if err := syncDir(p.dir); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	p.qmu.Lock()
	defer p.qmu.Unlock()
	old := p.segs.Load().segs
	var err error
	for _, s := range old {
		err = errors.Join(err, s.unlink())
	}
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	if err := p.offsets.Clear(); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	seg, err := p.newSegmentLocked(0, 0)
	if err != nil {
		p.failed = fmt.Errorf("purge: %w", err)
		return p.failed
	}
	p.gen++
	p.active = seg
	p.next = 0
	p.pendMsgs, p.pendBytes = 0, 0
	storeMax(&p.durable, p.appended)
	p.sealedBytes.Store(0)
	p.visNext.Store(0)
	p.segs.Store(&segList{segs: []*segment{seg}})
	for _, s := range old {
		s.release()
	}
	if err := os.Remove(marker); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	return syncDir(p.dir)
}

// completePurge finishes a purge interrupted by a crash: it removes all
// segment files and consumer offsets, then the marker.
func (p *Partition) completePurge() error {
	if err := removeSegmentFiles(p.dir); err != nil {
		return fmt.Errorf("complete purge: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(p.dir, offsetsDirName)); err != nil {
		return fmt.Errorf("complete purge: %w", err)
	}
	if err := os.Remove(filepath.Join(p.dir, purgeMarkerName)); err != nil {
		return fmt.Errorf("complete purge: %w", err)
	}
	return syncDir(p.dir)
}

// removeSegmentFiles removes every segment log and index file in dir.
func removeSegmentFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		_, isLog := parseSegmentName(e.Name(), logSuffix)
		_, isIdx := parseSegmentName(e.Name(), indexSuffix)
		_, isQuar := parseSegmentName(strings.TrimSuffix(e.Name(), tempSuffix), quarSuffix)
		if isLog || isIdx || isQuar {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFileSync creates or replaces path with data and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
