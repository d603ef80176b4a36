package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
//   - a sealed segment is trusted when its index is well formed and its last
//     record verifies and ends exactly at the end of the log (every record is
//     verified with Options.VerifySealed); otherwise the log is walked record
//     by record and the index rebuilt. Any bad record in a sealed segment is a
//     *CorruptError: sealed segments are synced before the next one is
//     created, so damage there is never a torn write;
//   - the last segment is walked record by record; the log is cut at the
//     first record that is incomplete or fails verification (a torn tail),
//     unless the old index points at a verifiable record beyond it, which
//     means the damage is in the middle (*CorruptError). Its index is
//     rebuilt from the walk;
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
			seg, err = p.recoverSealed(start)
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
		if start, ok := parseSegmentName(e.Name(), indexSuffix); ok && !logs[start] {
			if err := os.Remove(filepath.Join(p.dir, e.Name())); err != nil {
				return nil, fmt.Errorf("remove orphan index: %w", err)
			}
		}
	}
	slices.Sort(starts)
	return starts, nil
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

func (p *Partition) recoverSealed(start uint64) (*segment, error) {
	s, logSize, err := openSegmentFiles(p.dir, start)
	if err != nil {
		return nil, err
	}
	if logSize == 0 {
		s.release()
		return nil, &CorruptError{Path: s.logPath, Pos: 0, Reason: "sealed segment is empty"}
	}
	trusted := false
	if !p.opts.VerifySealed {
		trusted = p.trustSealedIndex(s, logSize)
	}
	if !trusted {
		w := walker{f: s.log, size: logSize, format: p.format, maxRecord: p.opts.MaxRecordBytes}
		entries, err := w.walk(start)
		if _, ok := errors.AsType[*readError](err); ok {
			s.release()
			return nil, err
		}
		if err != nil {
			s.release()
			return nil, &CorruptError{Path: s.logPath, Pos: w.pos, Reason: "bad record in sealed segment", Err: err}
		}
		if err := s.rewriteIndex(entries); err != nil {
			s.release()
			return nil, err
		}
		last := &entries[len(entries)-1]
		s.sealedN, s.sealedEnd, s.firstTs, s.maxTs = len(entries), last.endOff(), entries[0].ts, last.ts
		s.fence = fenceOfMem(entries)
	}
	s.sealedSize, s.size, s.end = logSize, logSize, s.sealedEnd
	s.sealedDone = true
	return s, nil
}

// trustSealedIndex checks the index of a sealed segment and its last
// record; on success it fills the sealed fields.
func (p *Partition) trustSealedIndex(s *segment, logSize int64) bool {
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
	w := walker{f: s.log, size: logSize, format: p.format, maxRecord: p.opts.MaxRecordBytes, pos: int64(last.Position)}
	e, err := w.next(last.Offset)
	if err != nil || w.pos != logSize || e.ts != last.Timestamp {
		return false
	}
	s.sealedN, s.sealedEnd, s.firstTs, s.maxTs = len(entries), e.endOff(), entries[0].Timestamp, last.Timestamp
	s.fence = fenceOfIndex(entries)
	return true
}

func (p *Partition) recoverActive(start uint64) (*segment, error) {
	s, logSize, err := openSegmentFiles(p.dir, start)
	if err != nil {
		return nil, err
	}
	w := walker{f: s.log, size: logSize, format: p.format, maxRecord: p.opts.MaxRecordBytes}
	entries, werr := w.walk(start)
	if _, ok := errors.AsType[*readError](werr); ok {
		s.release()
		return nil, werr
	}
	if werr != nil {
		if p.verifiableBeyond(s, logSize, w.pos) {
			s.release()
			return nil, &CorruptError{Path: s.logPath, Pos: w.pos,
				Reason: "bad record followed by valid indexed records", Err: werr}
		}
		// A torn tail: cut it so the next append overwrites it.
		if err := s.log.Truncate(w.pos); err != nil {
			s.release()
			return nil, fmt.Errorf("truncate torn tail of %s: %w", s.logPath, err)
		}
		if err := syncData(s.log); err != nil {
			s.release()
			return nil, fmt.Errorf("sync %s: %w", s.logPath, err)
		}
	}
	if err := s.rewriteIndex(entries); err != nil {
		s.release()
		return nil, err
	}
	vis := ^uint64(0)
	if p.opts.Held {
		vis = 0 // nothing is revealed at Open
	}
	p.activate(s, entries, w.pos, vis)
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

// verifiableBeyond reports whether the segment's old index names a record
// after position bad that verifies, i.e. whether valid data follows the bad
// record (corruption in the middle rather than a torn tail).
func (p *Partition) verifiableBeyond(s *segment, logSize, bad int64) bool {
	fi, err := s.idx.Stat()
	if err != nil {
		return false
	}
	n := min(fi.Size(), maxIndexReadBytes) / IndexEntryBytes
	b := make([]byte, n*IndexEntryBytes)
	if _, err := io.ReadFull(io.NewSectionReader(s.idx, 0, int64(len(b))), b); err != nil {
		return false
	}
	for i := int64(0); i < n; i++ {
		e := getIndexEntry(b[i*IndexEntryBytes:])
		if e.Position <= uint64(bad) || e.Position >= uint64(logSize) {
			continue
		}
		w := walker{f: s.log, size: logSize, format: p.format, maxRecord: p.opts.MaxRecordBytes, pos: int64(e.Position)}
		if _, err := w.next(e.Offset); err == nil {
			return true
		}
	}
	return false
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
	hl := w.format.HeaderLen()
	h, err := w.at(w.pos, hl)
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
	rec, err := w.at(w.pos, int(n))
	if err != nil {
		return memEntry{}, err
	}
	info, err := w.format.Verify(rec)
	if err != nil {
		return memEntry{}, fmt.Errorf("verify record: %w", err)
	}
	if info.BaseOffset != want || info.Count == 0 {
		return memEntry{}, fmt.Errorf("record base offset %d (count %d), want %d", info.BaseOffset, info.Count, want)
	}
	e := memEntry{off: want, ts: info.Timestamp, pos: w.pos, count: info.Count, length: uint32(n)}
	w.pos += n
	return e, nil
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
