package storage

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

const (
	// purgeMarkerName marks a purge in progress; Open completes it.
	purgeMarkerName = "purge.pending"
	// offsetsDirName holds the consumer-offset files.
	offsetsDirName = "offsets"
	// walkWindowBytes is the read-ahead window of the recovery walk.
	walkWindowBytes = 1 << 20
	// maxIndexReadBytes bounds how much of a damaged index recovery reads
	// when looking for records past a bad one.
	maxIndexReadBytes = 64 << 20
)

// recover loads the partition directory. Recovery (../shared/design/storage.md
// §5, architecture.md "Storage"):
//
//   - a pending reset (ResetTo, reset.go), then a pending purge, is
//     completed first;
//   - .index files without a .log are deleted; a .log is never deleted;
//   - a sealed segment is trusted when its index is well formed, its last
//     record verifies (or is quarantined) and ends exactly at the end of
//     the log, and its quarantine file (sidecar.go) names slots of that
//     index; every record is verified with Options.VerifySealed or when
//     the index or the quarantine file is not trusted, and then the index
//     and the quarantine file are rebuilt from the walk;
//   - a record that fails verification is quarantined, not refused, when
//     its position and offsets can be located (recover_locate.go): valid
//     records resume where its own length header ends or at an old index
//     entry (or quarantine range end) past it whose record verifies, and
//     damage running to the end of a sealed segment ends where the next
//     segment starts. Reads skip quarantined records (Damaged lists them);
//     only damage that cannot be located is a *CorruptError;
//   - the last segment is walked record by record; the log is cut at the
//     first bad record after which no valid record can be located (a torn
//     tail); damage before valid records, or a range its quarantine file
//     names, is quarantined. Its index is rebuilt from the walk;
//   - segments must be contiguous (each starts where the previous ends);
//   - a held partition (Options.Held) reveals nothing: its revealed end
//     starts at the oldest segment's start (held.go). A full active
//     segment is rolled in both modes; sealing reveals nothing.
func (p *Partition) recover() error {
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("create partition dir: %w", err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, resetMarkerName)); err == nil {
		if err := p.completeReset(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, purgeMarkerName)); err == nil {
		if err := p.completePurge(); err != nil {
			return err
		}
	}
	starts, err := p.scanDir()
	if err != nil {
		return err
	}
	var segs []*segment
	fail := func(err error) error {
		for _, s := range segs {
			s.release()
		}
		return err
	}
	if len(starts) == 0 {
		seg, err := p.newSegmentLocked(0, 0)
		if err != nil {
			return err
		}
		segs = append(segs, seg)
	}
	var sealedBytes int64
	for i, start := range starts {
		var seg *segment
		if i == len(starts)-1 {
			seg, err = p.recoverActive(start)
		} else {
			seg, err = p.recoverSealed(start, starts[i+1])
		}
		if err != nil {
			return fail(err)
		}
		if i > 0 && segs[i-1].sealedEnd != start {
			seg.release()
			return fail(&CorruptError{Path: seg.logPath, Pos: -1,
				Reason: fmt.Sprintf("gap: previous segment ends at offset %d, this one starts at %d", segs[i-1].sealedEnd, start)})
		}
		if i < len(starts)-1 {
			sealedBytes += seg.sealedSize
		}
		segs = append(segs, seg)
	}
	act := segs[len(segs)-1]
	p.active = act
	p.next = act.end
	m := act.mem.Load()
	if m.n > 0 {
		p.lastTs = m.last().ts
	} else if len(segs) > 1 {
		p.lastTs = segs[len(segs)-2].maxTs
	}
	ts, err := p.resetTimestamp()
	if err != nil {
		return fail(err)
	}
	p.lastTs = max(p.lastTs, ts)
	p.sealedBytes.Store(sealedBytes)
	if p.opts.Held {
		// Nothing is revealed until the caller says what is committed;
		// the roll of a full active segment waits for that too.
		p.visNext.Store(segs[0].start)
	} else {
		p.visNext.Store(p.next)
	}
	p.segs.Store(&segList{segs: segs})
	if act.size >= p.opts.SegmentBytes {
		p.mu.Lock()
		err := p.rollLocked()
		p.mu.Unlock()
		if err != nil {
			p.releaseAll()
			return err
		}
	}
	return nil
}

// scanDir removes orphan index files and returns the segment start offsets
// in order.
func (p *Partition) scanDir() ([]uint64, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("read partition dir: %w", err)
	}
	logs := map[uint64]bool{}
	var starts []uint64
	for _, e := range ents {
		if start, ok := parseSegmentName(e.Name(), logSuffix); ok && e.Type().IsRegular() {
			logs[start] = true
			starts = append(starts, start)
		}
	}
	for _, e := range ents {
		if orphanFile(e.Name(), logs) {
			if err := os.Remove(filepath.Join(p.dir, e.Name())); err != nil {
				return nil, fmt.Errorf("remove orphan %s: %w", e.Name(), err)
			}
		}
	}
	slices.Sort(starts)
	return starts, nil
}

// orphanFile reports whether name is an index or quarantine file without
// its log, or a quarantine temp file a crash left (sidecar.go).
func orphanFile(name string, logs map[uint64]bool) bool {
	if start, ok := parseSegmentName(name, indexSuffix); ok {
		return !logs[start]
	}
	start, ok := parseSegmentName(strings.TrimSuffix(name, tempSuffix), quarSuffix)
	return ok && (!logs[start] || strings.HasSuffix(name, tempSuffix))
}

func openSegmentFiles(dir string, start uint64) (*segment, int64, error) {
	s := &segment{start: start, end: start}
	s.logPath = filepath.Join(dir, segmentStem(start)+logSuffix)
	s.idxPath = filepath.Join(dir, segmentStem(start)+indexSuffix)
	var err error
	if s.log, err = openFile(s.logPath, os.O_RDWR, 0); err != nil {
		return nil, 0, fmt.Errorf("open segment %d: %w", start, err)
	}
	if s.idx, err = openFile(s.idxPath, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		s.log.Close()
		return nil, 0, fmt.Errorf("open segment %d index: %w", start, err)
	}
	s.logFd = int(s.log.Fd())
	s.refs.Store(1)
	fi, err := s.log.Stat()
	if err != nil {
		s.release()
		return nil, 0, fmt.Errorf("stat segment %d: %w", start, err)
	}
	return s, fi.Size(), nil
}

// recoverSealed opens the sealed segment at start, which the next segment
// follows at offset end.
func (p *Partition) recoverSealed(start, end uint64) (*segment, error) {
	s, logSize, err := openSegmentFiles(p.dir, start)
	if err != nil {
		return nil, err
	}
	if logSize == 0 {
		s.release()
		return nil, &CorruptError{Path: s.logPath, Pos: 0, Reason: "sealed segment is empty"}
	}
	side, sideErr := s.readSidecar(logSize)
	if sideErr != nil && !errors.Is(sideErr, errSidecar) {
		s.release()
		return nil, sideErr
	}
	trusted := false
	if !p.opts.VerifySealed && sideErr == nil {
		trusted = p.trustSealedIndex(s, logSize, side)
	}
	if trusted {
		// Records before the last are verified by the reads that first
		// return them, or by Scrub (verify.go): s.verified stays 0.
		err = p.keepSidecar(s, side)
	} else {
		err = p.walkSealed(s, logSize, end, side)
		s.markVerified()
	}
	if err != nil {
		s.release()
		return nil, err
	}
	s.sealedSize, s.size, s.end = logSize, logSize, s.sealedEnd
	s.sealedDone = true
	return s, nil
}

// walkSealed verifies every record of a sealed segment, quarantines what
// fails where it can be located (recover_locate.go; damage running to the
// end of the log is located by the next segment's start, end), and
// rebuilds the index and the quarantine file. Caller owns s.
func (p *Partition) walkSealed(s *segment, logSize int64, end uint64, side []Damage) error {
	res, err := p.locate(s, logSize, oldAnchors(s, logSize, side), side)
	if err != nil {
		return err
	}
	if res.bad >= 0 {
		if err := damageToEnd(s, &res, logSize, end); err != nil {
			return err
		}
	}
	entries := res.entries
	if err := s.rewriteIndex(entries); err != nil {
		return err
	}
	if err := s.writeSidecar(p.dir, res.damage); err != nil {
		return err
	}
	s.setDamage(res.damage)
	last := &entries[len(entries)-1]
	s.sealedN, s.sealedEnd, s.firstTs, s.maxTs = len(entries), last.endOff(), entries[0].ts, last.ts
	s.fence = fenceOfMem(entries)
	return nil
}

// keepSidecar installs the quarantine file's ranges of a trusted sealed
// segment, lifting those whose record verifies now (a repair whose file
// update a crash interrupted). Caller owns s.
func (p *Partition) keepSidecar(s *segment, side []Damage) error {
	q := p.liftVerified(s, side)
	if len(q) != len(side) {
		if err := s.writeSidecar(p.dir, q); err != nil {
			return err
		}
	}
	s.setDamage(q)
	return nil
}

// trustSealedIndex checks the index of a sealed segment, its last record
// (unless quarantined) and that every quarantined range of side is one
// slot of the index; on success it fills the sealed fields.
func (p *Partition) trustSealedIndex(s *segment, logSize int64, side []Damage) bool {
	fi, err := s.idx.Stat()
	if err != nil || fi.Size() == 0 || fi.Size() > logSize/int64(p.format.HeaderLen())*IndexEntryBytes+IndexEntryBytes {
		return false
	}
	b := make([]byte, fi.Size())
	if _, err := s.idx.ReadAt(b, 0); err != nil {
		return false
	}
	entries, err := DecodeIndex(b, s.start, logSize)
	if err != nil {
		return false
	}
	last := entries[len(entries)-1]
	var end uint64
	if n := len(side); n > 0 && side[n-1].Pos == int64(last.Position) {
		end = side[n-1].Last + 1
	} else {
		w := walker{f: s.log, size: logSize, format: p.format, maxRecord: p.opts.MaxRecordBytes, pos: int64(last.Position)}
		e, err := w.next(last.Offset)
		if err != nil || w.pos != logSize || e.ts != last.Timestamp {
			return false
		}
		end = e.endOff()
	}
	if !slotsMatch(entries, side, logSize, end) {
		return false
	}
	s.sealedN, s.sealedEnd, s.firstTs, s.maxTs = len(entries), end, entries[0].Timestamp, last.Timestamp
	s.fence = fenceOfIndex(entries)
	return true
}

// slotsMatch reports whether every range of q is exactly one slot of the
// index entries (of a log of logSize bytes ending at offset end).
func slotsMatch(entries []IndexEntry, q []Damage, logSize int64, end uint64) bool {
	for _, d := range q {
		i, ok := slices.BinarySearchFunc(entries, uint64(d.Pos), func(e IndexEntry, pos uint64) int {
			return cmp.Compare(e.Position, pos)
		})
		if !ok || entries[i].Offset != d.First {
			return false
		}
		nextOff, nextPos := end, logSize
		if i+1 < len(entries) {
			nextOff, nextPos = entries[i+1].Offset, int64(entries[i+1].Position)
		}
		if nextOff != d.Last+1 || nextPos != d.Pos+d.Len {
			return false
		}
	}
	return true
}

// liftVerified returns q without the ranges whose bytes now hold one
// record that verifies and covers exactly the range.
func (p *Partition) liftVerified(s *segment, q []Damage) []Damage {
	var out []Damage
	for _, d := range q {
		if !p.slotVerifies(s, d) {
			out = append(out, d)
		}
	}
	return out
}

// slotVerifies reports whether the bytes of range d of s are one record
// that verifies and covers exactly d.
func (p *Partition) slotVerifies(s *segment, d Damage) bool {
	if d.Len > p.opts.MaxRecordBytes {
		return false
	}
	b := make([]byte, d.Len)
	if _, err := s.log.ReadAt(b, d.Pos); err != nil {
		return false
	}
	return p.checkSlot(b, d) == nil
}

// checkSlot checks that rec is one record that verifies and covers
// exactly the offsets and length of range d.
func (p *Partition) checkSlot(rec []byte, d Damage) error {
	hl := p.format.HeaderLen()
	if len(rec) < hl || int64(len(rec)) != d.Len {
		return fmt.Errorf("record of %d bytes for a slot of %d", len(rec), d.Len)
	}
	n, err := p.format.RecordLen(rec[:hl])
	if err != nil || n != d.Len {
		return fmt.Errorf("record length %d for a slot of %d: %v", n, d.Len, err)
	}
	info, err := p.format.Verify(rec)
	if err != nil {
		return fmt.Errorf("verify record: %w", err)
	}
	if info.BaseOffset != d.First || uint64(info.Count) != d.Last-d.First+1 {
		return fmt.Errorf("record holds offsets %d+%d, the slot %d..%d", info.BaseOffset, info.Count, d.First, d.Last)
	}
	return nil
}

func (p *Partition) recoverActive(start uint64) (*segment, error) {
	s, logSize, err := openSegmentFiles(p.dir, start)
	if err != nil {
		return nil, err
	}
	// The old index locates valid records past damage; its entries are
	// only believed where a record verifies at them. The quarantine file
	// keeps what earlier Opens located (a file that does not decode is
	// ignored: the walk finds the damage again).
	side, err := s.readSidecar(logSize)
	if err != nil && !errors.Is(err, errSidecar) {
		s.release()
		return nil, err
	}
	res, err := p.locate(s, logSize, oldAnchors(s, logSize, side), side)
	if err != nil {
		s.release()
		return nil, err
	}
	size := logSize
	if res.bad >= 0 {
		// A torn tail: cut it so the next append overwrites it.
		if err := s.log.Truncate(res.bad); err != nil {
			s.release()
			return nil, fmt.Errorf("truncate torn tail of %s: %w", s.logPath, err)
		}
		if err := syncData(s.log); err != nil {
			s.release()
			return nil, fmt.Errorf("sync %s: %w", s.logPath, err)
		}
		size = res.bad
	}
	if err := s.rewriteIndex(res.entries); err != nil {
		s.release()
		return nil, err
	}
	if err := s.writeSidecar(p.dir, res.damage); err != nil {
		s.release()
		return nil, err
	}
	vis := ^uint64(0)
	if p.opts.Held {
		vis = 0 // nothing is revealed at Open
	}
	s.setDamage(res.damage)
	s.markVerified() // walked
	p.activate(s, res.entries, size, vis)
	return s, nil
}

// activate turns s, freshly opened with its log holding exactly entries
// (size bytes) and its index file holding exactly their entries, synced,
// into an active segment: the in-memory index, the append state and the
// reservation. The entries ending at or before vis are published to
// readers. Used by recovery for the last segment and by TruncateFrom for
// a sealed segment it makes active again (held_cut.go). Caller owns s.
func (p *Partition) activate(s *segment, entries []memEntry, size int64, vis uint64) {
	s.parkIndex() // written and synced; idxfile.go
	m := newMemIndex(2 * len(entries))
	for _, e := range entries {
		m.add(e)
	}
	m.publish(sort.Search(len(entries), func(i int) bool { return entries[i].endOff() > vis }))
	s.mem.Store(m)
	s.flushedN = m.n
	s.size = size
	s.end = s.start
	if m.n > 0 {
		s.end = m.last().endOff()
	}
	if p.opts.Preallocate {
		s.preallocate(p.opts.SegmentBytes)
	}
}

// rewriteIndex makes the index file equal to the encoding of entries,
// writing only when it differs.
func (s *segment) rewriteIndex(entries []memEntry) error {
	want := make([]byte, 0, len(entries)*IndexEntryBytes)
	for i := range entries {
		e := &entries[i]
		want = IndexEntry{Offset: e.off, Timestamp: e.ts, Position: uint64(e.pos)}.AppendTo(want)
	}
	fi, err := s.idx.Stat()
	if err == nil && fi.Size() == int64(len(want)) {
		have := make([]byte, len(want))
		if _, err := s.idx.ReadAt(have, 0); err == nil && bytes.Equal(have, want) {
			return nil
		}
	}
	if err := s.idx.Truncate(0); err != nil {
		return fmt.Errorf("rebuild index %s: %w", s.idxPath, err)
	}
	if _, err := s.idx.WriteAt(want, 0); err != nil {
		return fmt.Errorf("rebuild index %s: %w", s.idxPath, err)
	}
	if err := syncData(s.idx); err != nil {
		return fmt.Errorf("sync %s: %w", s.idxPath, err)
	}
	return nil
}

// walker reads records of one log sequentially through a window.
type walker struct {
	f         *os.File
	size      int64
	format    Format
	maxRecord int64
	pos       int64 // position of the next record

	buf    []byte
	bufOff int64
	bufLen int
}

// errTorn marks a record that does not fit in the file.
var errTorn = errors.New("incomplete record")

// at returns the n bytes at position pos.
func (w *walker) at(pos int64, n int) ([]byte, error) {
	if pos >= w.bufOff && pos+int64(n) <= w.bufOff+int64(w.bufLen) {
		i := int(pos - w.bufOff)
		return w.buf[i : i+n], nil
	}
	if pos+int64(n) > w.size {
		return nil, errTorn
	}
	want := int(min(max(int64(n), walkWindowBytes), w.size-pos))
	if cap(w.buf) < want {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:want]
	if _, err := w.f.ReadAt(w.buf, pos); err != nil {
		w.bufLen = 0
		return nil, &readError{fmt.Errorf("read %s at %d: %w", w.f.Name(), pos, err)}
	}
	w.bufOff, w.bufLen = pos, want
	return w.buf[:n], nil
}

// next verifies the record at w.pos, which must have base offset want,
// and advances past it.
func (w *walker) next(want uint64) (memEntry, error) {
	e, err := w.record(w.pos)
	if err != nil {
		return memEntry{}, err
	}
	if e.off != want {
		return memEntry{}, fmt.Errorf("record base offset %d (count %d), want %d", e.off, e.count, want)
	}
	w.pos += int64(e.length)
	return e, nil
}

// record verifies the record at pos and returns its entry, with the base
// offset the record carries.
func (w *walker) record(pos int64) (memEntry, error) {
	hl := w.format.HeaderLen()
	h, err := w.at(pos, hl)
	if err != nil {
		return memEntry{}, err
	}
	n, err := w.format.RecordLen(h)
	if err != nil {
		return memEntry{}, fmt.Errorf("record header: %w", err)
	}
	if n < int64(hl) || n > w.maxRecord {
		return memEntry{}, fmt.Errorf("record length %d out of range", n)
	}
	rec, err := w.at(pos, int(n))
	if err != nil {
		return memEntry{}, err
	}
	info, err := w.format.Verify(rec)
	if err != nil {
		return memEntry{}, fmt.Errorf("verify record: %w", err)
	}
	if info.Count == 0 {
		return memEntry{}, fmt.Errorf("record at %d holds no message", pos)
	}
	return memEntry{off: info.BaseOffset, ts: info.Timestamp, pos: pos, count: info.Count, length: uint32(n)}, nil
}

// walk verifies records from w.pos to the end of the file. It returns the
// complete records; a non-nil error means the record at w.pos is bad.
func (w *walker) walk(start uint64) ([]memEntry, error) {
	var out []memEntry
	next := start
	for w.pos < w.size {
		e, err := w.next(next)
		if err != nil {
			return out, err
		}
		out = append(out, e)
		next = e.endOff()
	}
	return out, nil
}

// readError is an I/O failure while reading a log; unlike bad data it never
// leads to truncation.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }
