package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"syscall"
)

// Extent is a run of whole stored records in one segment log, ready to be
// sent as they are (no re-encoding). It stays valid, even if retention
// removes the segment, until the ReadResult holding it is released.
type Extent struct {
	seg *segment
	// chunk, when set, holds the bytes instead of seg (ChunkExtent).
	chunk Chunk
	// Pos is the byte position of the first record in the segment log.
	Pos int64
	// Len is the byte length of the run.
	Len int64
	// FirstOffset is the base offset of the first record; the caller slices
	// that record when it wants to start at a later offset.
	FirstOffset uint64
	// LastPos is the byte position (in the log) of the last record.
	LastPos int64
	// LastOffset is the base offset of the last record.
	LastOffset uint64
	// EndOffset is the offset after the last message of the last record.
	EndOffset uint64
}

// File returns the file holding the extent's bytes: the segment log, or
// the chunk of a ChunkExtent (whose file offsets are log positions minus
// Chunk.Base). Use ReadAt or WriteTo; never Seek or Read it, the descriptor
// is shared by concurrent readers.
func (e *Extent) File() *os.File {
	if e.chunk != nil {
		return e.chunk.File()
	}
	return e.seg.log
}

// fileOffset is the offset in File of log position pos.
func (e *Extent) fileOffset(pos int64) int64 {
	if e.chunk != nil {
		return pos - e.chunk.Base()
	}
	return pos
}

// path names the extent's bytes in errors.
func (e *Extent) path() string {
	if e.chunk != nil {
		return e.chunk.Name()
	}
	return e.seg.logPath
}

// release unpins what holds the extent's bytes.
func (e *Extent) release() {
	if e.chunk != nil {
		e.chunk.Release()
		return
	}
	e.seg.release()
}

// ReadAt reads from the extent: off is relative to e.Pos and reads stop at
// e.Len (io.EOF).
func (e *Extent) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("storage: negative extent offset")
	}
	if off >= e.Len {
		return 0, io.EOF
	}
	short := false
	if int64(len(p)) > e.Len-off {
		p = p[:e.Len-off]
		short = true
	}
	n, err := e.File().ReadAt(p, e.fileOffset(e.Pos+off))
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// copyBufPool holds buffers for WriteTo when sendfile is not possible.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// WriteTo writes the whole extent to w. When w is a socket or file exposing
// syscall.Conn and the OS has a suitable sendfile (sendfile*.go), it uses
// sendfile with an explicit offset (zero copy, safe for concurrent readers
// of the same file); otherwise it copies through a pooled buffer with pread.
func (e *Extent) WriteTo(w io.Writer) (int64, error) {
	if sc, ok := w.(syscall.Conn); ok {
		if n, handled, err := e.sendfile(sc); handled {
			return n, err
		}
	}
	return e.copyTo(w)
}

// copyTo is the portable path of WriteTo: pread into a pooled buffer, then
// write. It never touches the shared file position.
func (e *Extent) copyTo(w io.Writer) (int64, error) {
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	f := e.File()
	var written int64
	for written < e.Len {
		chunk := buf[:min(int64(len(buf)), e.Len-written)]
		n, err := f.ReadAt(chunk, e.fileOffset(e.Pos+written))
		if n > 0 {
			m, werr := w.Write(chunk[:n])
			written += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if err != nil {
			if err == io.EOF && written == e.Len {
				break
			}
			return written, fmt.Errorf("read %s: %w", e.path(), err)
		}
	}
	return written, nil
}

// ReadResult collects the extents of one Read. Reuse it across reads: Read
// releases the previous extents and reuses the slice, so steady-state reads
// do not allocate. Call Release when done with the extents.
type ReadResult struct {
	// Extents are in offset order; consecutive extents are in consecutive
	// segments.
	Extents []Extent
}

// Release unpins the segments of the extents and empties the result.
func (r *ReadResult) Release() {
	for i := range r.Extents {
		r.Extents[i].release()
		r.Extents[i] = Extent{}
	}
	r.Extents = r.Extents[:0]
}

// Messages returns EndOffset of the last extent minus FirstOffset of the
// first: the messages in the whole records covered (before slicing).
func (r *ReadResult) Messages() uint64 {
	if len(r.Extents) == 0 {
		return 0
	}
	return r.Extents[len(r.Extents)-1].EndOffset - r.Extents[0].FirstOffset
}

// Read fills r with the committed records holding offsets from, from+1, ...
// up to maxMessages messages: the first extent starts with the record that
// contains offset from (or the oldest retained record if from is older) and
// the last record contains the last wanted offset or the last committed
// message. maxBytes > 0 stops adding records once the run would pass that
// many bytes (at least one record is always returned). Nothing past the
// committed end is ever returned; from at or past it gives no extents. Read
// never blocks appends.
//
// Quarantined records (Damaged) are never returned: a read starting at or
// inside a quarantined range starts after it (its offsets are skipped, and
// maxMessages counts from there), and a read reaching one stops before it,
// so the next read, from its first offset, skips it. Records no read,
// Scrub or Open verified yet are verified before they are returned, and
// those that fail are quarantined first (verify.go).
func (p *Partition) Read(r *ReadResult, from, maxMessages uint64, maxBytes int64) error {
	r.Release()
	if maxMessages == 0 {
		return nil
	}
	for {
		retry, err := p.read(r, from, maxMessages, maxBytes)
		if !retry {
			return err
		}
		r.Release()
	}
}

// read does one attempt; retry is true when a segment was removed under it.
func (p *Partition) read(r *ReadResult, from, maxMessages uint64, maxBytes int64) (retry bool, err error) {
	gen := p.truncGen.Load()
	next := p.visNext.Load()
	l := p.segs.Load()
	if len(l.segs) == 0 {
		return false, nil
	}
	// A read starting at or inside quarantined records starts after them,
	// as one older than the first retained offset starts at it.
	from = skipDamaged(l.segs, max(from, l.segs[0].start))
	if from >= next {
		return false, nil
	}
	target := next
	if maxMessages < math.MaxUint64-from {
		target = min(next, from+maxMessages)
	}
	i := segmentFor(l.segs, from)
	budget := maxBytes
	for ; i < len(l.segs) && from < target; i++ {
		seg := l.segs[i]
		// The watermark is loaded before the quarantine: whoever verified
		// what it covers quarantined what failed before moving it
		// (verify.go).
		w := seg.verified.Load()
		qp := seg.quar.Load()
		var q []Damage
		if qp != nil {
			q = *qp
		}
		// A read reaching quarantined records stops before them.
		segTarget, stop := target, false
		if d, ok := damageFrom(q, from); ok && d.First < target {
			if d.First <= from && len(r.Extents) == 0 && d.Last != ^uint64(0) {
				// Quarantined since skipDamaged looked: look again.
				return true, nil
			}
			segTarget, stop = d.First, true
		}
		if segTarget <= from {
			break
		}
		if !seg.acquire() {
			return true, nil
		}
		n, end, k, j, err := readSegment(r, seg, from, segTarget, maxBytes, budget)
		if err == nil && n > 0 && w <= int64(j) {
			// Records not verified since Open are verified before they
			// are first served (verify.go); one that fails is
			// quarantined and the read redone, stopping before it. So
			// is one another reader quarantined since q was loaded.
			var found bool
			if found, err = p.verifyRecords(seg, gen, k, j); err == nil && (found || seg.quar.Load() != qp) {
				return true, nil
			}
			if err != nil {
				r.Extents = r.Extents[:len(r.Extents)-1]
				n = 0
			}
		}
		if err != nil || n == 0 {
			seg.release()
			if err != nil && p.cutRaced(gen) {
				// A cut shortened this sealed segment's index under the
				// lookup (held_cut.go); the new list has it active.
				return true, nil
			}
			return false, err
		}
		from = end
		if maxBytes > 0 {
			budget -= n
			if budget <= 0 {
				break
			}
		}
		if stop {
			break
		}
	}
	return false, nil
}

// readSegment appends to r the extent of seg (pinned by the caller) holding
// offsets from..target-1 within budget bytes (if maxBytes > 0). It returns
// the extent length (0 if nothing was added; the caller then releases seg),
// the offset after the extent and the index entries k..j of its records.
func readSegment(r *ReadResult, seg *segment, from, target uint64, maxBytes, budget int64) (n int64, next uint64, k, j int, err error) {
	v := seg.view()
	defer v.done()
	if v.n == 0 {
		return 0, 0, 0, 0, nil
	}
	// from >= seg.start, which is the first record's offset, so k >= 0.
	if k, err = v.lastAtOrBelow(0, from); err != nil {
		return 0, 0, 0, 0, err
	}
	k = max(k, 0)
	firstOff, _, pos, _, _, err := v.entry(k)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if j, err = v.lastAtOrBelow(k, target-1); err != nil {
		return 0, 0, 0, 0, err
	}
	lastOff, _, lastPos, endOff, endPos, err := v.entry(j)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if maxBytes > 0 && endPos-pos > budget && (j > k || len(r.Extents) > 0) {
		// Trim to the records that fit; keep at least one record overall.
		if j, err = v.lastEndingWithin(k, j, pos+budget); err != nil {
			return 0, 0, 0, 0, err
		}
		if j < k {
			if len(r.Extents) > 0 {
				return 0, 0, 0, 0, nil
			}
			j = k
		}
		if lastOff, _, lastPos, endOff, endPos, err = v.entry(j); err != nil {
			return 0, 0, 0, 0, err
		}
	}
	r.Extents = append(r.Extents, Extent{seg: seg, Pos: pos, Len: endPos - pos,
		FirstOffset: firstOff, LastPos: lastPos, LastOffset: lastOff, EndOffset: endOff})
	return endPos - pos, endOff, k, j, nil
}

// lastEndingWithin returns the largest i in [k, j] whose record ends at or
// before limit, or k-1 if none.
func (v *segView) lastEndingWithin(k, j int, limit int64) (int, error) {
	lo, hi := k, j+1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		_, _, _, _, end, err := v.entry(mid)
		if err != nil {
			return 0, err
		}
		if end <= limit {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1, nil
}

// segmentFor returns the index of the last segment starting at or before
// off (segs is non-empty and segs[0].start <= off).
func segmentFor(segs []*segment, off uint64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if segs[mid].start <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return max(lo-1, 0)
}

// OffsetForTimestamp returns the base offset of the first committed record
// whose server timestamp is >= ts (µs), for polling by timestamp; ok is
// false when no such record exists. Quarantined records are passed over:
// the answer is the first offset after them.
func (p *Partition) OffsetForTimestamp(ts uint64) (off uint64, ok bool, err error) {
	for {
		off, ok, retry, err := p.offsetForTimestamp(ts)
		if !retry {
			return off, ok, err
		}
	}
}

func (p *Partition) offsetForTimestamp(ts uint64) (off uint64, ok, retry bool, err error) {
	gen := p.truncGen.Load()
	next := p.visNext.Load()
	l := p.segs.Load()
	for i, seg := range l.segs {
		// Sealed segments know their newest timestamp; skip older ones
		// without touching their index.
		if i < len(l.segs)-1 && seg.mem.Load() == nil && seg.maxTs < ts {
			continue
		}
		if !seg.acquire() {
			return 0, false, true, nil
		}
		v := seg.view()
		k, err := v.firstTimestampAtOrAbove(ts)
		if err == nil && k < v.n {
			off, err = v.key(k, true)
			v.done()
			if err == nil && !seg.verifiedBelow(k) {
				// The answer must not be a damaged record (verify.go).
				var found bool
				if found, err = p.verifyRecords(seg, gen, k, k); found && err == nil {
					seg.release()
					return 0, false, true, nil
				}
			}
			seg.release()
			if err != nil {
				return 0, false, p.cutRaced(gen), err
			}
			// The first record at or after ts may be quarantined: answer
			// the first offset a read from there returns.
			off = skipDamaged(l.segs, off)
			return off, off < next, false, nil
		}
		v.done()
		seg.release()
		if err != nil {
			// As in read: an index shortened by a cut is looked up again.
			return 0, false, p.cutRaced(gen), err
		}
	}
	return 0, false, false, nil
}
