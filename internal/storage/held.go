package storage

import (
	"errors"
	"fmt"
	"sort"
)

// Held mode (Options.Held) turns the partition into a replicated log whose
// tail may still be uncommitted:
//
//   - Append and AppendStamped write, index and (with Fsync) sync records
//     as usual but never publish them; neither do the background flusher,
//     Flush, Close or a segment roll. Only Reveal moves the revealed end
//     (visNext, and the memIndex vis counter of the active segment); Purge
//     and ResetTo restart it.
//   - Segments roll exactly as without Held: at the append that brings the
//     active segment to SegmentBytes, revealed or not, so a sealed segment
//     may end with unrevealed records and a steady pipelined load cannot
//     grow one segment without bound. Readers of a sealed segment are
//     bounded by the revealed end; ReadRecord reads its unrevealed records.
//   - Retention never removes a segment holding an unrevealed record, nor
//     anything after it (retention.go).
//   - TruncateFrom cuts the active segment, or, for an offset in a sealed
//     segment, removes the newer segments and makes the cut one active
//     again (held_cut.go).
//   - Open recovers every intact record, but reveals none: the revealed end
//     starts at the oldest segment's start. Records of sealed segments were
//     usually revealed before the restart, but the caller decides again.

// ErrTruncateRevealed is returned (wrapped) by TruncateFrom when the cut
// would remove revealed records.
var ErrTruncateRevealed = errors.New("storage: truncating revealed records")

// errNotHeld is returned (wrapped) by operations that exist for Held mode
// only.
var errNotHeld = errors.New("storage: partition is not in held mode")

// Reveal makes every appended record that ends at or before next visible
// (whole records only; a next beyond the appended tail is clamped; it never
// goes backwards), in the active segment and in sealed ones. Held mode only
// (a no-op otherwise).
//
// Reveal returns no error: a failed index read while rounding next down
// inside a sealed segment rounds down to that segment's start instead.
func (p *Partition) Reveal(next uint64) {
	if !p.opts.Held {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	next = min(next, p.next)
	if next > p.visNext.Load() {
		p.revealLocked(next)
	}
}

// revealLocked moves the revealed end to the last record boundary at or
// below next (visNext < next <= p.next). Caller must hold p.mu.
func (p *Partition) revealLocked(next uint64) {
	act := p.active
	if next < act.start {
		// Inside the sealed segments (rolled with unrevealed records, or
		// reopened): they are fully indexed, visNext alone gates them.
		storeMax(&p.visNext, p.sealedBoundary(next))
		return
	}
	m := act.mem.Load()
	entries := m.written(m.n)
	vis := int(m.vis.Load())
	// k: the number of records ending at or before next.
	k := vis + sort.Search(m.n-vis, func(i int) bool { return entries[vis+i].endOff() > next })
	if k > vis {
		m.publish(k)
		storeMax(&p.visNext, entries[k-1].endOff())
	} else {
		storeMax(&p.visNext, act.start)
	}
}

// sealedBoundary returns the last record boundary at or below x, which lies
// in a sealed segment: the start of the record holding x. On an index read failure it returns that segment's
// start (a boundary too). Caller must hold p.mu, which keeps the listed
// segments open.
func (p *Partition) sealedBoundary(x uint64) uint64 {
	segs := p.segs.Load().segs
	if len(segs) == 0 || x < segs[0].start {
		return p.visNext.Load()
	}
	seg := segs[segmentFor(segs, x)]
	v := seg.view()
	defer v.done()
	k, err := v.lastAtOrBelow(0, x)
	if err != nil || k < 0 {
		return seg.start
	}
	// x is below the segment's end (the next segment's start), so record
	// k contains it.
	off, err := v.key(k, true)
	if err != nil {
		return seg.start
	}
	return off
}

// TruncateFrom removes every record whose base offset is >= off, so that the
// next append gets offset off (raft replacing an uncommitted suffix). off must
// be a record boundary (or the tail: a no-op) and must not be below the
// revealed end (ErrTruncateRevealed, wrapped, nothing changed). The last
// timestamp becomes the last remaining record's (kept as is when none remains
// in the segment). Held mode only.
//
// An off that is not a record boundary, or beyond the tail, fails with an
// error wrapping ErrNoRecord (nothing changed). An off inside a sealed
// segment (at or above the revealed end) removes every newer segment and
// makes that segment active again, cut at off (held_cut.go); a cut exactly
// at a sealed segment's start leaves that segment as an empty active one
// (the choice made here: the full segment before it stays sealed). Such a
// cut reads the kept index entries of the segment (24 bytes per record)
// under the partition lock. The cut log
// and index, and the directory, are synced before TruncateFrom returns, so
// a crash cannot bring the removed records back. A failure while cutting
// leaves the file state unknown and makes the log read-only (like a failed
// append). With Fsync, an append whose record is cut while it waits for its
// fdatasync still returns its result: the record existed, and was then
// replaced.
func (p *Partition) TruncateFrom(off uint64) error {
	if !p.opts.Held {
		return fmt.Errorf("truncate from %d: %w", off, errNotHeld)
	}
	// syncMu first: no syncTo may be writing index entries being dropped.
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writableLocked(); err != nil {
		return fmt.Errorf("truncate from %d: %w", off, err)
	}
	if off == p.next {
		return nil
	}
	if off > p.next {
		return fmt.Errorf("truncate from %d beyond the tail %d: %w", off, p.next, ErrNoRecord)
	}
	if vis := p.visNext.Load(); off < vis {
		return fmt.Errorf("%w: offset %d, revealed end %d", ErrTruncateRevealed, off, vis)
	}
	seg := p.active
	if off < seg.start {
		return p.truncateSealedLocked(off)
	}
	m := seg.mem.Load()
	entries := m.written(m.n)
	k, found := findEntry(entries, off)
	if !found {
		return fmt.Errorf("truncate from %d: not a record boundary: %w", off, ErrNoRecord)
	}
	pos := entries[k].pos
	defer p.beginCutLocked()()
	if err := seg.cut(k, pos); err != nil {
		p.failed = fmt.Errorf("truncate segment %d at offset %d: %w", seg.start, off, err)
		return p.failed
	}
	m.n = k
	seg.size = pos
	seg.end = off
	if err := p.dropDamageFrom(seg, off); err != nil {
		p.failed = fmt.Errorf("truncate segment %d at offset %d: %w", seg.start, off, err)
		return p.failed
	}
	p.next = off
	if k > 0 {
		p.lastTs = entries[k-1].ts
	}
	// Truncation released the reservation past pos (reserve.go).
	seg.reserved = min(seg.reserved, pos)
	if p.opts.Preallocate {
		seg.preallocate(p.opts.SegmentBytes)
	}
	return nil
}

// cut truncates the active segment to its first n records (pos bytes):
// the log, and the index file if entries past n were flushed to it; both
// are synced. Caller must hold Partition.syncMu and Partition.mu.
func (s *segment) cut(n int, pos int64) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if err := s.log.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s: %w", s.logPath, err)
	}
	if s.flushedN > n {
		idx, err := s.indexFile()
		if err != nil {
			return err
		}
		if err := idx.Truncate(int64(n) * IndexEntryBytes); err != nil {
			return fmt.Errorf("truncate %s: %w", s.idxPath, err)
		}
		s.flushedN = n
	}
	return s.flushLocked(0, syncAll)
}
