package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/fileio"
)

const (
	logSuffix   = ".log"
	indexSuffix = ".index"
	// segmentNameDigits is the zero-padded width of the start offset in
	// segment file names ({start_offset:020}).
	segmentNameDigits = 20
	// indexWriteChunk bounds the scratch buffer used to write index entries.
	indexWriteChunk = 64 << 10
)

func segmentStem(start uint64) string {
	s := strconv.FormatUint(start, 10)
	var pad [segmentNameDigits]byte
	n := copy(pad[:], "00000000000000000000"[:segmentNameDigits-len(s)])
	copy(pad[n:], s)
	return string(pad[:])
}

// parseSegmentName returns the start offset encoded in a segment file name
// (stem of exactly 20 decimal digits plus suffix).
func parseSegmentName(name, suffix string) (uint64, bool) {
	if len(name) != segmentNameDigits+len(suffix) || name[segmentNameDigits:] != suffix {
		return 0, false
	}
	for _, c := range name[:segmentNameDigits] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(name[:segmentNameDigits], 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// segment is one .log/.index pair.
//
// While active, the append state (size, end, mem.n) is guarded by
// Partition.mu and readers use mem. Sealing fills the sealed* fields, syncs
// both files and then stores nil into mem, so a reader that loads a nil mem
// sees the final sealed fields.
type segment struct {
	start   uint64
	logPath string
	idxPath string
	log     *os.File
	idx     *os.File
	logFd   int
	// io performs the writes, syncs, cuts and reservations of the append
	// path (Options.FileIO); nil (a segment being recovered) is the OS.
	io fileio.IO

	// refs counts the partition's reference (while listed) and readers'.
	// The files are closed when it drops to zero.
	refs atomic.Int32

	// Append state, guarded by Partition.mu.
	size int64  // bytes written to log
	end  uint64 // offset after the last written record

	mem atomic.Pointer[memIndex] // nil once sealed

	// quar is the segment's quarantine (quarantine.go): nil, or ranges
	// ordered by offset. Replaced under Partition.qmu.
	quar atomic.Pointer[[]Damage]

	// verified is the number of leading index entries whose records are
	// verified (verifiedAll: the whole segment); spans are verified runs
	// past it, guarded by vmu (verify.go).
	verified atomic.Int64
	vmu      sync.Mutex
	spans    [maxVerifiedSpans]span
	nspans   int

	// Sealed state, immutable once mem is nil (or once listed as sealed).
	sealedN    int    // index entries
	sealedSize int64  // log bytes
	sealedEnd  uint64 // offset after the last record
	firstTs    uint64 // timestamp of the first record
	maxTs      uint64 // timestamp of the last (newest) record; 0 if empty
	fence      fence  // sparse in-memory copy of the sealed index

	// flushMu guards index-file writes and syncing of this segment.
	flushMu      sync.Mutex
	flushedN     int  // entries written to the index file
	sealedDone   bool // sealed, everything written and synced
	preallocated bool
	// reserved is how much of the log, from its start, has disk space
	// reserved (preallocate, reserveAhead); noReserve is set once the file
	// system refused. Guarded by Partition.mu.
	reserved  int64
	noReserve bool
	scratch   []byte
}

func createSegment(dir string, start uint64, prealloc int64, memCap int) (*segment, error) {
	s := &segment{start: start}
	s.logPath = filepath.Join(dir, segmentStem(start)+logSuffix)
	s.idxPath = filepath.Join(dir, segmentStem(start)+indexSuffix)
	var err error
	if s.log, err = openFile(s.logPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("create segment %d: %w", start, err)
	}
	if s.idx, err = openFile(s.idxPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		s.log.Close()
		return nil, fmt.Errorf("create segment %d index: %w", start, err)
	}
	s.logFd = int(s.log.Fd())
	s.parkIndex() // idxfile.go: reopened by the first flush
	s.end = start
	s.refs.Store(1)
	s.verified.Store(verifiedAll) // every record is written here
	s.mem.Store(newMemIndex(memCap))
	if prealloc > 0 {
		s.preallocate(prealloc)
	}
	return s, nil
}

// fio returns the segment's IO.
func (s *segment) fio() fileio.IO {
	if s.io != nil {
		return s.io
	}
	return osIO{}
}

// preallocate reserves n bytes without changing the file size where the
// OS and file system can (prealloc_*.go). A refusal is ignored:
// preallocation is an optimisation. A full file system is asked again at
// the next reservation (space may come back); any other refusal stops
// reservations for this segment.
func (s *segment) preallocate(n int64) {
	if err := s.fio().Allocate(s.log, n); err == nil {
		s.preallocated = true
		s.reserved = max(s.reserved, n)
	} else if !fileio.NoSpace(err) {
		s.noReserve = true
	}
}

// acquire pins the segment for a reader; false if it is already released.
func (s *segment) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference and closes the files with the last one.
func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.log.Close()
		s.parkIndex()
	}
}

// syncMode says which files a flush makes durable.
type syncMode uint8

const (
	// syncLog syncs the log only. The active segment's index needs no
	// sync: recovery walks the last segment and rebuilds its index from
	// the log, so an index entry on disk adds nothing to durability. One
	// fdatasync per round instead of two (an extending index write makes
	// its own journal commit).
	syncLog syncMode = iota
	// syncAll syncs log and index: sealing and cuts, after which recovery
	// trusts the index of a sealed segment.
	syncAll
)

// flush writes index entries up to n (captured under Partition.mu) and
// syncs what mode says (syncData). Caller must not hold segment.flushMu.
func (s *segment) flush(n int, mode syncMode) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	return s.flushLocked(n, mode)
}

func (s *segment) flushLocked(n int, mode syncMode) error {
	if s.sealedDone {
		return nil
	}
	if m := s.mem.Load(); m != nil && s.flushedN < n {
		idx, err := s.indexFile()
		if err != nil {
			return err
		}
		entries := m.written(n)
		for s.flushedN < n {
			s.scratch = s.scratch[:0]
			first := s.flushedN
			for s.flushedN < n && len(s.scratch)+IndexEntryBytes <= indexWriteChunk {
				e := &entries[s.flushedN]
				s.scratch = IndexEntry{Offset: e.off, Timestamp: e.ts, Position: uint64(e.pos)}.AppendTo(s.scratch)
				s.flushedN++
			}
			if _, err := s.fio().WriteAt(idx, s.scratch, int64(first)*IndexEntryBytes); err != nil {
				s.flushedN = first
				err = fmt.Errorf("write index %s: %w", s.idxPath, err)
				if mode == syncAll || !fileio.NoSpace(err) {
					return err
				}
				// Recovery rebuilds the active segment's index from
				// the log, so a full disk only defers these entries to
				// a later flush (or the seal); the log sync goes on.
				break
			}
		}
	}
	if err := s.fio().Sync(s.log); err != nil {
		return fmt.Errorf("%w: sync %s: %w", errSync, s.logPath, err)
	}
	// A parked index has nothing unsynced (idxfile.go).
	if mode == syncAll && s.idx != nil {
		if err := s.fio().Sync(s.idx); err != nil {
			return fmt.Errorf("%w: sync %s: %w", errSync, s.idxPath, err)
		}
	}
	return nil
}

// seal writes the whole index, releases preallocated space, syncs both
// files and switches readers to the sealed fields. publish also makes
// every entry visible to readers still holding the memIndex; a held
// partition passes false, since only Reveal publishes there (readers of
// a sealed segment are bounded by the revealed end). Caller must hold
// Partition.mu (so the append state is stable).
func (s *segment) seal(publish bool) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	m := s.mem.Load()
	if m == nil {
		return nil
	}
	// Sealed segments are read through their index: keep it open.
	if _, err := s.indexFile(); err != nil {
		return err
	}
	if s.preallocated {
		if err := s.fio().Truncate(s.log, s.size); err != nil {
			return fmt.Errorf("trim %s: %w", s.logPath, err)
		}
	}
	if err := s.flushLocked(m.n, syncAll); err != nil {
		return err
	}
	s.sealedN = m.n
	s.fence = fenceOfMem(m.written(m.n))
	s.sealedSize = s.size
	s.sealedEnd = s.end
	if m.n > 0 {
		s.firstTs = (*m.arr.Load())[0].ts
		s.maxTs = m.last().ts
	}
	if publish {
		m.publish(m.n)
	}
	s.sealedDone = true
	s.mem.Store(nil)
	return nil
}

// fenceStride is the number of index entries per block of a sealed
// segment: the fence keeps the offset and timestamp of every block's first
// entry in memory, so a lookup is an in-memory binary search plus one pread
// of at most one block (3 KiB). Memory: 16 bytes per 128 records.
const fenceStride = 128

// fence is the sparse in-memory index of a sealed segment.
type fence struct {
	off []uint64
	ts  []uint64
}

func fenceOfMem(e []memEntry) fence {
	f := fence{off: make([]uint64, 0, (len(e)+fenceStride-1)/fenceStride), ts: make([]uint64, 0, (len(e)+fenceStride-1)/fenceStride)}
	for i := 0; i < len(e); i += fenceStride {
		f.off = append(f.off, e[i].off)
		f.ts = append(f.ts, e[i].ts)
	}
	return f
}

func fenceOfIndex(e []IndexEntry) fence {
	f := fence{off: make([]uint64, 0, (len(e)+fenceStride-1)/fenceStride), ts: make([]uint64, 0, (len(e)+fenceStride-1)/fenceStride)}
	for i := 0; i < len(e); i += fenceStride {
		f.off = append(f.off, e[i].Offset)
		f.ts = append(f.ts, e[i].Timestamp)
	}
	return f
}

// indexBlock caches one block of a sealed index file during a lookup.
type indexBlock struct {
	seg   *segment
	start int
	n     int
	b     [fenceStride * IndexEntryBytes]byte
}

var blockPool = sync.Pool{New: func() any { return new(indexBlock) }}

// segView is a reader's snapshot of one segment's visible records.
type segView struct {
	seg *segment
	mem []memEntry // active segment: visible entries
	n   int        // entries
	blk *indexBlock
}

func (s *segment) view() segView {
	if m := s.mem.Load(); m != nil {
		e := m.view()
		return segView{seg: s, mem: e, n: len(e)}
	}
	return segView{seg: s, n: s.sealedN}
}

// done returns the view's block buffer to the pool.
func (v *segView) done() {
	if v.blk != nil {
		v.blk.seg = nil
		blockPool.Put(v.blk)
		v.blk = nil
	}
}

// sealedEntry returns entry i of a sealed segment, reading its block.
func (v *segView) sealedEntry(i int) (IndexEntry, error) {
	start := i / fenceStride * fenceStride
	if v.blk == nil {
		v.blk = blockPool.Get().(*indexBlock)
		v.blk.n = 0
	}
	b := v.blk
	if b.seg != v.seg || b.start != start || b.n == 0 {
		n := min(fenceStride, v.n-start)
		b.seg, b.start, b.n = nil, start, 0
		if _, err := v.seg.idx.ReadAt(b.b[:n*IndexEntryBytes], int64(start)*IndexEntryBytes); err != nil {
			return IndexEntry{}, fmt.Errorf("read index %s: %w", v.seg.idxPath, err)
		}
		b.seg, b.n = v.seg, n
	}
	return ParseIndexEntry(b.b[(i-start)*IndexEntryBytes:]), nil
}

// entry returns record i: base offset, timestamp, position, and the end
// offset and end position of the record.
func (v *segView) entry(i int) (off, ts uint64, pos int64, endOff uint64, endPos int64, err error) {
	if v.mem != nil {
		e := &v.mem[i]
		return e.off, e.ts, e.pos, e.endOff(), e.endPos(), nil
	}
	e, err := v.sealedEntry(i)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if i+1 < v.n {
		nx, err := v.sealedEntry(i + 1)
		if err != nil {
			return 0, 0, 0, 0, 0, err
		}
		return e.Offset, e.Timestamp, int64(e.Position), nx.Offset, int64(nx.Position), nil
	}
	return e.Offset, e.Timestamp, int64(e.Position), v.seg.sealedEnd, v.seg.sealedSize, nil
}

// key returns the offset (byOffset) or timestamp of record i.
func (v *segView) key(i int, byOffset bool) (uint64, error) {
	if v.mem != nil {
		if byOffset {
			return v.mem[i].off, nil
		}
		return v.mem[i].ts, nil
	}
	e, err := v.sealedEntry(i)
	if byOffset {
		return e.Offset, err
	}
	return e.Timestamp, err
}

// lastAtOrBelow returns the largest i in [lo, v.n) whose offset is <= x, or
// lo-1 if none.
func (v *segView) lastAtOrBelow(lo int, x uint64) (int, error) {
	l, hi := lo, v.n
	if v.mem == nil {
		// Narrow to the block whose fence entry is the last <= x.
		f := v.seg.fence.off
		b := lastLE(f, x)
		if b < 0 {
			return lo - 1, nil
		}
		l, hi = max(lo, b*fenceStride), min(v.n, (b+1)*fenceStride)
		if l >= hi {
			return lo - 1, nil
		}
	}
	for l < hi { // invariant: entries below l are <= x (or l == lo), from hi on > x
		mid := int(uint(l+hi) >> 1)
		k, err := v.key(mid, true)
		if err != nil {
			return 0, err
		}
		if k <= x {
			l = mid + 1
		} else {
			hi = mid
		}
	}
	return l - 1, nil
}

// firstTimestampAtOrAbove returns the smallest i with timestamp >= ts, or
// v.n if none.
func (v *segView) firstTimestampAtOrAbove(ts uint64) (int, error) {
	lo, hi := 0, v.n
	if v.mem == nil {
		// The answer is in the last block whose first entry is below ts,
		// or it is the first entry of the following block, which the search
		// returns (hi) when no entry of the block qualifies.
		f := v.seg.fence.ts
		b := lastLT(f, ts)
		if b >= 0 {
			lo, hi = b*fenceStride, min(v.n, (b+1)*fenceStride)
		} else {
			hi = 0
		}
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, err := v.key(mid, false)
		if err != nil {
			return 0, err
		}
		if k < ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// lastLE returns the largest i with a[i] <= x, or -1.
func lastLE(a []uint64, x uint64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if a[mid] <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// lastLT returns the largest i with a[i] < x, or -1.
func lastLT(a []uint64, x uint64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if a[mid] < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}
