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
// (Damaged): the bytes of a damaged record are never returned. A record
// not verified since Open (a sealed segment Open trusted) is verified
// first and, when it fails, quarantined and refused the same way
// (verify.go).
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
	out, count, retry, err = p.lookupRecord(dst, base, gen)
	if !retry && p.cutRaced(gen) {
		return out, 0, true, nil
	}
	return out, count, retry, err
}

// lookupRecord is readRecord without the truncation check.
func (p *Partition) lookupRecord(dst []byte, base, gen uint64) (out []byte, count uint32, retry bool, err error) {
	l := p.segs.Load()
	if len(l.segs) == 0 || base < l.segs[0].start {
		return dst, 0, false, noRecord(base)
	}
	seg := l.segs[segmentFor(l.segs, base)]
	if !seg.acquire() {
		return dst, 0, true, nil
	}
	defer seg.release()
	w := seg.verified.Load() // before the quarantine (verify.go)
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
	sealed, n := v.mem == nil, v.n
	v.done()
	if err != nil {
		return dst, 0, false, err
	}
	switch {
	case k >= 0 && off == base:
		out, err = readAppend(dst, seg, pos, endPos-pos)
		if err == nil && w <= int64(k) {
			d := Damage{Path: seg.logPath, Pos: pos, Len: endPos - pos, First: off, Last: endOff - 1}
			return p.verifyRead(dst, out, seg, d, k, n, sealed, gen)
		}
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
	return p.readUnrevealed(dst, seg, base, w)
}

// readUnrevealed reads the record at base among the written but unrevealed
// records of seg, the active segment when the caller looked (pinned by the
// caller), whose verified watermark was w before the caller looked at its
// quarantine.
func (p *Partition) readUnrevealed(dst []byte, seg *segment, base uint64, w int64) ([]byte, uint32, bool, error) {
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
	if err == nil && w <= int64(k) {
		// A sealed segment made active again by a cut may hold records
		// no read verified yet.
		d := Damage{Path: seg.logPath, Pos: e.pos, Len: int64(e.length), First: e.off, Last: e.endOff() - 1}
		return p.verifyRead(dst, out, seg, d, k, len(entries), false, gen)
	}
	return out, e.count, false, err
}

// verifyRead verifies the record ReadRecord just read into out (dst
// extended), entry k of seg's n entries, whose slot is d (verify.go): it
// returns out and the message count when the record verifies, and
// quarantines it and fails with a *CorruptError otherwise.
func (p *Partition) verifyRead(dst, out []byte, seg *segment, d Damage, k, n int, sealed bool, gen uint64) ([]byte, uint32, bool, error) {
	cerr := p.checkSlot(out[len(dst):], d)
	if cerr == nil {
		seg.noteVerified(int64(k), int64(k)+1, n, sealed)
		return out, uint32(d.Last - d.First + 1), false, nil
	}
	d.Reason = cerr.Error()
	ok, err := p.addReadDamage(seg, []Damage{d}, gen)
	if !ok {
		return dst, 0, true, nil
	}
	seg.noteVerified(int64(k), int64(k)+1, n, sealed)
	if err != nil {
		return dst, 0, false, fmt.Errorf("read record %d: %w", d.First, err)
	}
	return dst, 0, false, quarantined(d, d.First)
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
