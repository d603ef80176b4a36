package storage

import (
	"errors"
	"fmt"
	"slices"
)

// ErrNoRecord is returned (wrapped) by ReadRecord when no record starts at
// the requested offset, and by TruncateFrom for an offset that is not a
// record boundary.
var ErrNoRecord = errors.New("storage: no record at that offset")

// ReadRecord appends to dst the stored bytes of the record whose base offset
// is exactly base, revealed or not, and returns them with the record's message
// count. It fails with an error wrapping ErrNoRecord when no record starts at
// base (removed by retention or purge, truncated, or never appended), and
// with a *CorruptError (errors.Is ErrCorrupt) when base is quarantined
// (Damaged): the bytes of a damaged record are never returned.
//
// The returned slice is dst extended by the record (dst itself on error).
// Revealed records and sealed segments are looked up without locks, like
// Read; an unrevealed record of the active segment is located under the
// partition lock and read outside it, and read again should TruncateFrom
// run meanwhile. The segment is pinned against concurrent removal while it
// is read. Nothing is allocated beyond growing dst. A closed partition
// holds no record (ErrNoRecord).
func (p *Partition) ReadRecord(dst []byte, base uint64) ([]byte, uint32, error) {
	for {
		out, count, retry, err := p.readRecord(dst, base)
		if !retry {
			return out, count, err
		}
		dst = out[:len(dst)]
	}
}

// readRecord is one attempt of ReadRecord; retry is true when the segment
// list or the active tail changed under it, or when TruncateFrom ran
// during the attempt: a cut into a sealed segment (held_cut.go) may have
// shortened the index being read, or let an append overwrite the bytes
// just read with another record.
func (p *Partition) readRecord(dst []byte, base uint64) (out []byte, count uint32, retry bool, err error) {
	gen := p.truncGen.Load()
	out, count, retry, err = p.lookupRecord(dst, base)
	if !retry && p.cutRaced(gen) {
		return out, 0, true, nil
	}
	return out, count, retry, err
}

// lookupRecord is readRecord without the truncation check.
func (p *Partition) lookupRecord(dst []byte, base uint64) (out []byte, count uint32, retry bool, err error) {
	l := p.segs.Load()
	if len(l.segs) == 0 || base < l.segs[0].start {
		return dst, 0, false, noRecord(base)
	}
	seg := l.segs[segmentFor(l.segs, base)]
	if !seg.acquire() {
		return dst, 0, true, nil
	}
	defer seg.release()
	if d, ok := damageAt(seg.damage(), base); ok {
		return dst, 0, false, quarantined(d, base)
	}
	v := seg.view()
	k, err := v.lastAtOrBelow(0, base)
	var off, endOff uint64
	var pos, endPos int64
	if err == nil && k >= 0 {
		off, _, pos, endOff, endPos, err = v.entry(k)
	}
	sealed := v.mem == nil
	v.done()
	if err != nil {
		return dst, 0, false, err
	}
	switch {
	case k >= 0 && off == base:
		out, err = readAppend(dst, seg, pos, endPos-pos)
		return out, uint32(endOff - off), false, err
	case k >= 0 && base < endOff:
		// Inside a visible record: not a record start.
		return dst, 0, false, noRecord(base)
	case sealed:
		// Past the end of a sealed segment: it was the active one when the
		// list was loaded and rolled since; look again.
		if p.segs.Load() != l {
			return dst, 0, true, nil
		}
		return dst, 0, false, noRecord(base)
	}
	return p.readUnrevealed(dst, seg, base)
}

// readUnrevealed reads the record at base among the written but unrevealed
// records of seg, the active segment when the caller looked (pinned by the
// caller).
func (p *Partition) readUnrevealed(dst []byte, seg *segment, base uint64) ([]byte, uint32, bool, error) {
	p.mu.Lock()
	if p.active != seg {
		// Rolled (now sealed and fully listed) or replaced by a reset.
		p.mu.Unlock()
		return dst, 0, true, nil
	}
	m := seg.mem.Load()
	entries := m.written(m.n)
	k, found := findEntry(entries, base)
	if !found {
		p.mu.Unlock()
		return dst, 0, false, noRecord(base)
	}
	e := entries[k]
	gen := p.truncGen.Load()
	p.mu.Unlock()
	out, err := readAppend(dst, seg, e.pos, int64(e.length))
	if p.truncGen.Load() != gen {
		// The bytes may belong to a record appended after a cut.
		return out, 0, true, nil
	}
	return out, e.count, false, err
}

// readAppend appends n bytes of seg's log at pos to dst with pread.
func readAppend(dst []byte, seg *segment, pos, n int64) ([]byte, error) {
	l := len(dst)
	dst = slices.Grow(dst, int(n))[:l+int(n)]
	if _, err := seg.log.ReadAt(dst[l:], pos); err != nil {
		return dst[:l], fmt.Errorf("read record at %d of %s: %w", pos, seg.logPath, err)
	}
	return dst, nil
}

func noRecord(base uint64) error {
	return fmt.Errorf("read record %d: %w", base, ErrNoRecord)
}

// quarantined is ReadRecord's error for a base offset inside range d.
func quarantined(d Damage, base uint64) error {
	return fmt.Errorf("read record %d: %w", base, &CorruptError{Path: d.Path, Pos: d.Pos,
		Reason: fmt.Sprintf("offsets %d..%d are quarantined: %s", d.First, d.Last, d.Reason)})
}
