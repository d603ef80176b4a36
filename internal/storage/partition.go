package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Partition is the log of one partition: sealed segments plus one active
// segment in a directory. All methods are safe for concurrent use.
type Partition struct {
	dir    string
	opts   Options
	format Format

	// syncMu serialises syncs: the holder fdatasyncs for everyone who
	// appended before it captured the append counter (group commit).
	syncMu sync.Mutex

	// mu guards the append state below and changes of the segment list.
	mu        sync.Mutex
	active    *segment
	next      uint64 // next offset to assign
	lastTs    uint64 // timestamp of the last record; stamps never go back
	appended  uint64 // records appended so far (group-commit sequence)
	pendMsgs  uint64 // messages appended since the last sync capture
	pendBytes uint64 // bytes appended since the last sync capture
	gen       uint64 // incremented by Purge; stale syncs must not publish
	failed    error  // sticky: a write or sync failed, the log is read-only
	full      bool   // the last append was refused for lack of space
	closed    bool

	// Published state, readable without locks.
	segs        atomic.Pointer[segList]
	visNext     atomic.Uint64 // offset after the last visible message
	durable     atomic.Uint64 // records known to be on disk (sequence)
	sealedBytes atomic.Int64  // sum of sealed segment sizes in segs
	syncRounds  atomic.Uint64 // fdatasync rounds done by syncTo
	// truncGen is a sequence counter of TruncateFrom (held_cut.go): odd
	// while a cut runs (under mu), incremented again when it is done. A
	// ReadRecord that read unrevealed bytes outside mu can tell they may
	// have been replaced (readrecord.go), and a lock-free lookup that
	// failed on an index shortened under it retries (cutRaced).
	truncGen atomic.Uint64

	// qmu serialises changes of the segments' quarantines and their
	// files (quarantine.go, sidecar.go): Scrub and RepairRecord take it
	// alone; a roll, retention, purge, reset or cut takes it under mu
	// while it changes the segment list, so a quarantine file is never
	// written for a segment being removed.
	qmu sync.Mutex

	offsets *Offsets

	// The background flusher (flusher.go), guarded by mu.
	flushing   bool        // a flush goroutine runs
	timer      *time.Timer // interval timer, created on first use
	timerArmed bool
	wg         sync.WaitGroup // running flushes and timer callbacks

	// afterFlush, if set (tests), runs after each background flush.
	afterFlush func()
	// afterCutStep, if set (tests), runs under mu after each durable step
	// of a TruncateFrom into a sealed segment (held_cut.go).
	afterCutStep func()
}

// segList is an immutable snapshot of the segments, oldest first; the last
// one is the active segment.
type segList struct {
	segs []*segment
}

// AppendResult is what Append assigned to a record.
type AppendResult struct {
	// BaseOffset is the offset of the record's first message.
	BaseOffset uint64
	// Timestamp is the server timestamp stamped into the record (µs).
	Timestamp uint64
}

// Stats are exact counters of what the partition holds.
type Stats struct {
	// Messages is the number of stored messages (NextOffset - FirstOffset).
	Messages uint64
	// Bytes is the total size of the segment logs.
	Bytes uint64
	// Segments is the number of segments including the active one.
	Segments int
	// FirstOffset is the oldest retained offset (the active segment's start
	// when everything was removed).
	FirstOffset uint64
	// NextOffset is the offset the next message will get, among committed
	// (visible) messages; the current offset C of the spec is NextOffset-1
	// when Messages > 0.
	NextOffset uint64
}

// Dir returns the partition directory.
func (p *Partition) Dir() string { return p.dir }

// Offsets returns the partition's consumer-offset store.
func (p *Partition) Offsets() *Offsets { return p.offsets }

// Open opens (creating if needed) the partition log in dir and recovers it
// (see recover.go). A *CorruptError (errors.Is(err, ErrCorrupt)) means the
// data on disk cannot be served safely; nothing was modified in that case.
func Open(dir string, opts Options) (*Partition, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Partition{dir: dir, opts: o, format: o.Format}
	if err := p.recover(); err != nil {
		return nil, err
	}
	// Recovery used the OS; from here the append path uses Options.FileIO.
	for _, s := range p.segs.Load().segs {
		s.io = o.FileIO
	}
	offs, err := OpenOffsets(filepath.Join(dir, offsetsDirName), o.Fsync || o.OffsetsFsync)
	if err != nil {
		p.releaseAll()
		return nil, err
	}
	p.offsets = offs
	return p, nil
}

func (p *Partition) nowMicros() uint64 {
	t := p.opts.Clock().UnixMicro()
	if t < 0 {
		return 0
	}
	return uint64(t)
}

// Append stamps rec (via Format.Stamp) with the next offset and the server
// time, writes it to the active segment and indexes it. count is the number
// of messages in rec (>= 1); rec must already be validated by the caller.
// With Options.Fsync the call returns after the record is on disk. rec is not
// retained.
//
// Timestamps never go backwards within a partition: a clock that steps back
// yields the previous record's timestamp, which keeps lookup by timestamp a
// binary search.
func (p *Partition) Append(rec []byte, count uint32) (AppendResult, error) {
	return p.write(rec, count, false, 0, 0)
}

// write is Append (stamped false: the record gets the next offset and the
// server time) and AppendStamped (stamped true: rec already carries base
// and ts, which must continue the log).
func (p *Partition) write(rec []byte, count uint32, stamped bool, base, ts uint64) (AppendResult, error) {
	res, seq, err := p.writeRecord(rec, count, stamped, base, ts)
	if err != nil {
		return res, err
	}
	if p.opts.Fsync {
		if err := p.syncTo(seq); err != nil {
			return res, err
		}
	}
	return res, nil
}

// writeRecord is write up to the fsync of Options.Fsync; seq is the
// append's sequence number for syncTo.
func (p *Partition) writeRecord(rec []byte, count uint32, stamped bool, base, ts uint64) (AppendResult, uint64, error) {
	if len(rec) == 0 || count == 0 {
		return AppendResult{}, 0, ErrEmptyRecord
	}
	if int64(len(rec)) > p.opts.MaxRecordBytes {
		return AppendResult{}, 0, ErrRecordTooLarge
	}
	p.mu.Lock()
	if err := p.writableLocked(); err != nil {
		p.mu.Unlock()
		return AppendResult{}, 0, err
	}
	if err := p.rollFullLocked(); err != nil {
		p.mu.Unlock()
		return AppendResult{}, 0, err
	}
	seg := p.active
	if stamped {
		if base != p.next {
			next := p.next
			p.mu.Unlock()
			return AppendResult{}, 0, fmt.Errorf("%w: record base offset %d, next offset %d", ErrOffsetMismatch, base, next)
		}
	} else {
		base = p.next
		ts = max(p.nowMicros(), p.lastTs)
		p.format.Stamp(rec, base, ts)
	}
	pos := seg.size
	seg.reserveAhead(pos+int64(len(rec)), p.opts.SegmentBytes)
	wstart := p.observeStart()
	if _, err := p.opts.FileIO.WriteAt(seg.log, rec, pos); err != nil {
		err = p.writeFailedLocked(seg, pos, err)
		p.mu.Unlock()
		return AppendResult{}, 0, err
	}
	p.observeWrite(wstart, len(rec))
	if p.full {
		p.spaceBackLocked()
	}
	m := seg.mem.Load()
	m.add(memEntry{off: base, ts: ts, pos: pos, count: count, length: uint32(len(rec))})
	seg.size += int64(len(rec))
	p.next = base + uint64(count)
	seg.end = p.next
	p.lastTs = max(p.lastTs, ts)
	p.appended++
	seq := p.appended
	flush := false
	if !p.opts.Fsync {
		if !p.opts.Held {
			m.publish(m.n)
			p.visNext.Store(p.next)
		}
		p.pendMsgs += uint64(count)
		p.pendBytes += uint64(len(rec))
		if p.thresholdLocked() {
			flush = p.startFlushLocked()
		} else {
			p.armFlushTimerLocked()
		}
	}
	var rollErr error
	// Held or not: a held segment may be sealed with unrevealed records
	// at its end (held.go). A roll refused for lack of space does not fail
	// this append, whose record is written: the next append retries it
	// (rollFullLocked).
	if seg.size >= p.opts.SegmentBytes {
		if rollErr = p.rollLocked(); errors.Is(rollErr, ErrDiskFull) {
			rollErr = nil
		}
	}
	p.mu.Unlock()
	if flush {
		go p.flushRun()
	}
	res := AppendResult{BaseOffset: base, Timestamp: ts}
	if rollErr != nil {
		return res, 0, rollErr
	}
	return res, seq, nil
}

// writeFailedLocked handles the failed write of a record at pos of seg:
// a write refused for lack of space is cut back to pos, so the log keeps
// ending with a whole record, and the partition stays open; any other
// failure (or a failed cut) stops it. Caller must hold p.mu.
func (p *Partition) writeFailedLocked(seg *segment, pos int64, err error) error {
	err = fmt.Errorf("append to %s at %d: %w", seg.logPath, pos, err)
	if !noSpace(err) {
		return p.stopLocked(err)
	}
	if terr := p.opts.FileIO.Truncate(seg.log, pos); terr != nil {
		return p.stopLocked(fmt.Errorf("%w; cut back to %d: %w", err, pos, terr))
	}
	// The cut released any reservation past pos (reserve.go).
	seg.reserved = min(seg.reserved, pos)
	return p.fullLocked(err)
}

// writableLocked reports why appends are refused. Caller must hold p.mu.
func (p *Partition) writableLocked() error {
	if p.closed {
		return ErrClosed
	}
	return p.failed
}

// rollLocked seals the active segment (syncing it, so no sealed segment
// can hold a torn record after a crash) and starts a new one at p.next.
// Caller must hold p.mu.
func (p *Partition) rollLocked() error {
	old := p.active
	if err := old.seal(!p.opts.Held); err != nil {
		return p.diskErrLocked(fmt.Errorf("seal segment %d: %w", old.start, err))
	}
	// The quarantine file must say what the segment's quarantine is:
	// recovery trusts a sealed index without walking it (sidecar.go).
	p.qmu.Lock()
	err := old.writeSidecar(p.dir, old.damage())
	p.qmu.Unlock()
	if err != nil {
		p.failed = fmt.Errorf("seal segment %d: %w", old.start, err)
		return p.failed
	}
	// Everything appended is now durable and, in fsync mode, visible. A
	// held partition reveals nothing here: only Reveal does (held.go).
	if !p.opts.Held {
		p.visNext.Store(p.next)
	}
	storeMax(&p.durable, p.appended)
	p.pendMsgs, p.pendBytes = 0, 0
	seg, err := p.newSegmentLocked(p.next, old.sealedN)
	if err != nil {
		// Out of space, the sealed segment stays active and the next
		// append retries the roll (rollFullLocked, seal is done once).
		return p.diskErrLocked(err)
	}
	cur := p.segs.Load().segs
	segs := make([]*segment, len(cur), len(cur)+1)
	copy(segs, cur)
	segs = append(segs, seg)
	p.sealedBytes.Add(old.sealedSize)
	p.active = seg
	p.segs.Store(&segList{segs: segs})
	return nil
}

// rollFullLocked rolls an active segment that is already at or over
// SegmentBytes before an append adds to it. Appends roll as soon as they
// fill a segment, so this only happens after TruncateFrom made an older,
// larger segment active again (held.go) or when SegmentBytes shrank
// between opens of a held partition. Caller must hold p.mu.
func (p *Partition) rollFullLocked() error {
	if p.active.size == 0 || p.active.size < p.opts.SegmentBytes {
		return nil
	}
	return p.rollLocked()
}

// newSegmentLocked creates a segment file pair at start and makes the
// directory entries durable.
func (p *Partition) newSegmentLocked(start uint64, memCap int) (*segment, error) {
	var prealloc int64
	if p.opts.Preallocate {
		prealloc = p.opts.SegmentBytes
	}
	seg, err := createSegment(p.dir, start, 0, memCap)
	if err != nil {
		return nil, err
	}
	seg.io = p.opts.FileIO
	if prealloc > 0 {
		seg.preallocate(prealloc)
	}
	if err := syncDir(p.dir); err != nil {
		seg.release()
		return nil, err
	}
	return seg, nil
}

func storeMax(a *atomic.Uint64, v uint64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// syncTo makes every record up to sequence target durable, sharing one
// fdatasync among all appenders that arrive while another sync runs.
func (p *Partition) syncTo(target uint64) error {
	if p.durable.Load() >= target {
		return nil
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.durable.Load() >= target {
		return nil
	}
	p.mu.Lock()
	if p.failed != nil {
		p.mu.Unlock()
		return p.failed
	}
	seg := p.active
	seg.acquire()
	m := seg.mem.Load()
	n := 0
	if m != nil {
		n = m.n
	}
	capSeq, capNext, gen := p.appended, p.next, p.gen
	p.pendMsgs, p.pendBytes = 0, 0
	p.mu.Unlock()

	sstart := p.observeStart()
	err := seg.flush(n, syncLog)
	p.observeSync(sstart)
	p.syncRounds.Add(1)

	p.mu.Lock()
	if err != nil {
		// Never retried: see diskerr.go.
		err = p.stopLocked(fmt.Errorf("sync segment %d: %w", seg.start, err))
	} else {
		// In held mode only Reveal publishes.
		if !p.opts.Held {
			if m := seg.mem.Load(); m != nil {
				m.publish(n)
			}
			if gen == p.gen && capNext > p.visNext.Load() {
				p.visNext.Store(capNext)
			}
		}
		storeMax(&p.durable, capSeq)
	}
	p.mu.Unlock()
	seg.release()
	return err
}

// Flush writes all index entries and fdatasyncs the active segment.
func (p *Partition) Flush() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	target := p.appended
	p.mu.Unlock()
	return p.syncTo(target)
}

// Close stops the flusher, syncs everything and closes the files (files
// still pinned by readers close when those readers release them). Appends
// after or during Close return ErrClosed.
func (p *Partition) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.closed = true
	p.stopFlusherLocked()
	target := p.appended
	p.mu.Unlock()
	p.wg.Wait()
	err := p.syncTo(target)
	p.releaseAll()
	if cerr := p.offsets.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *Partition) releaseAll() {
	if l := p.segs.Swap(&segList{}); l != nil {
		for _, s := range l.segs {
			s.release()
		}
	}
}

// Stats returns the partition's counters. They are exact when no append or
// retention runs concurrently, and otherwise a recent consistent-enough view.
func (p *Partition) Stats() Stats {
	next := p.visNext.Load()
	l := p.segs.Load()
	if len(l.segs) == 0 {
		return Stats{NextOffset: next, FirstOffset: next}
	}
	first := l.segs[0].start
	active := l.segs[len(l.segs)-1]
	var activeBytes int64
	if v := active.view(); v.mem != nil {
		if len(v.mem) > 0 {
			activeBytes = v.mem[len(v.mem)-1].endPos()
		}
	} else {
		activeBytes = active.sealedSize
	}
	msgs := uint64(0)
	if next > first {
		msgs = next - first
	}
	return Stats{
		Messages:    msgs,
		Bytes:       uint64(p.sealedBytes.Load() + activeBytes),
		Segments:    len(l.segs),
		FirstOffset: first,
		NextOffset:  next,
	}
}

// Bounds returns the oldest retained offset and the offset after the last
// committed message (first == next means empty).
func (p *Partition) Bounds() (first, next uint64) {
	next = p.visNext.Load()
	l := p.segs.Load()
	if len(l.segs) == 0 {
		return next, next
	}
	return l.segs[0].start, next
}
