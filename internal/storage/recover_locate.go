package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// maxAnchorTries bounds how many old index entries past a bad record the
// recovery walk verifies while looking for where valid records resume.
const maxAnchorTries = 256

// anchor is a place where a record may start: an entry of the segment's
// old index, or the end of a range of its quarantine file.
type anchor struct {
	off   uint64
	ts    uint64
	pos   int64
	hasTs bool // ts comes from an index entry
}

// located is the outcome of a recovery walk over one segment log.
type located struct {
	// entries are the verified records and the quarantined slots, in
	// order; they tile the log from 0 to end.
	entries []memEntry
	// damage holds one range per quarantined slot.
	damage []Damage
	// bad is the position of a bad record after which no valid record
	// could be located (-1 if none), and badErr what was wrong with it.
	bad    int64
	badErr error
	// next is the offset after the last entry.
	next uint64
}

// locate walks the log of s (size bytes) record by record from its start.
// At a record that is incomplete or fails verification it looks for where
// valid records resume: where a range of the segment's quarantine file
// side starting there ends, at the end the damaged record's own length
// header gives, or at an anchor (old index entry or quarantine range end)
// past it, whichever verifies first; the bytes and offsets in between
// become a quarantined slot. When nothing after a bad record verifies, the walk
// stops there (located.bad). A read failure is returned as a *readError.
func (p *Partition) locate(s *segment, size int64, anchors []anchor, side []Damage) (located, error) {
	w := walker{f: s.log, size: size, format: p.format, maxRecord: p.opts.MaxRecordBytes}
	res := located{bad: -1, next: s.start}
	var prevTs uint64
	hasPrev := false
	for w.pos < size {
		e, err := w.next(res.next)
		if _, ok := errors.AsType[*readError](err); ok {
			return res, err
		}
		if err == nil {
			res.entries = append(res.entries, e)
			res.next, prevTs, hasPrev = e.endOff(), e.ts, true
			continue
		}
		a, ok, aerr := w.resume(w.pos, res.next, anchors, side)
		if aerr != nil {
			return res, aerr
		}
		if !ok {
			res.bad, res.badErr = w.pos, err
			break
		}
		ts := a.ts
		if hasPrev {
			ts = prevTs
		}
		if it, ok := indexTsAt(anchors, w.pos, res.next); ok && it >= prevTs && it <= a.ts {
			ts = it
		}
		res.entries = append(res.entries, memEntry{off: res.next, ts: ts, pos: w.pos,
			count: uint32(a.off - res.next), length: uint32(a.pos - w.pos)})
		res.damage = append(res.damage, Damage{Path: s.logPath, Pos: w.pos, Len: a.pos - w.pos,
			First: res.next, Last: a.off - 1, Reason: err.Error()})
		res.next, prevTs, hasPrev = a.off, ts, true
		w.pos = a.pos
	}
	return res, nil
}

// resume finds where valid records resume after the bad record at
// position bad, which should have held offset want: the first position
// after it where a record verifies whose base offset is past want, taken
// from the bad record's length header or from anchors (sorted by
// position), or where the length header ends at an anchor (the next
// record may be damaged too; the anchor gives its offset); a range of the
// quarantine file side that starts at bad and holds want is taken as it
// is. The slot in between must fit a record's length and count.
func (w *walker) resume(bad int64, want uint64, anchors []anchor, side []Damage) (anchor, bool, error) {
	var best anchor
	found := false
	fits := func(off uint64, pos int64) bool {
		return off > want && off-want <= math.MaxUint32 && pos > bad && pos < w.size && pos-bad <= maxRecordLimit
	}
	// A range quarantined before (by an earlier Open or a Scrub) stays
	// one, even where nothing after it verifies now (the end of the log).
	for _, d := range side {
		if d.Pos == bad && d.First == want && d.Last < math.MaxUint64 && d.Pos+d.Len <= w.size &&
			d.Len <= maxRecordLimit && d.Last-d.First < math.MaxUint32 {
			return anchor{off: d.Last + 1, pos: d.Pos + d.Len}, true, nil
		}
	}
	hl := w.format.HeaderLen()
	if h, err := w.at(bad, hl); err == nil {
		if n, err := w.format.RecordLen(h); err == nil && n >= int64(hl) && n <= w.maxRecord {
			end := bad + n
			e, err := w.record(end)
			if _, ok := errors.AsType[*readError](err); ok {
				return anchor{}, false, err
			}
			if err == nil && fits(e.off, end) {
				best, found = anchor{off: e.off, ts: e.ts, pos: end}, true
			} else if a, ok := anchorAt(anchors, end, fits); ok {
				// The next record is damaged too, but the length header
				// and an anchor agree on where it starts, and the anchor
				// says which offset: the bad record alone is the slot.
				best, found = a, true
			}
		}
	} else if _, ok := errors.AsType[*readError](err); ok {
		return anchor{}, false, err
	}
	i := sort.Search(len(anchors), func(i int) bool { return anchors[i].pos > bad })
	for tries := 0; i < len(anchors) && tries < maxAnchorTries; i++ {
		a := anchors[i]
		if found && a.pos >= best.pos {
			break
		}
		if !fits(a.off, a.pos) {
			continue
		}
		tries++
		e, err := w.record(a.pos)
		if _, ok := errors.AsType[*readError](err); ok {
			return anchor{}, false, err
		}
		if err == nil && e.off == a.off {
			return anchor{off: e.off, ts: e.ts, pos: a.pos}, true, nil
		}
	}
	return best, found, nil
}

// anchorAt returns an anchor at position pos that fits.
func anchorAt(anchors []anchor, pos int64, fits func(uint64, int64) bool) (anchor, bool) {
	i := sort.Search(len(anchors), func(i int) bool { return anchors[i].pos >= pos })
	for ; i < len(anchors) && anchors[i].pos == pos; i++ {
		if fits(anchors[i].off, pos) {
			return anchors[i], true
		}
	}
	return anchor{}, false
}

// indexTsAt returns the timestamp an old index entry gives the record at
// pos with base offset off.
func indexTsAt(anchors []anchor, pos int64, off uint64) (uint64, bool) {
	i := sort.Search(len(anchors), func(i int) bool { return anchors[i].pos >= pos })
	for ; i < len(anchors) && anchors[i].pos == pos; i++ {
		if a := anchors[i]; a.hasTs && a.off == off {
			return a.ts, true
		}
	}
	return 0, false
}

// oldAnchors reads the segment's old index file (at most
// maxIndexReadBytes of it, whatever its state) and the ends of the ranges
// of its quarantine file q, as anchors sorted by position. An unreadable
// index gives none.
func oldAnchors(s *segment, size int64, q []Damage) []anchor {
	var out []anchor
	if s.idx != nil {
		if fi, err := s.idx.Stat(); err == nil {
			n := min(fi.Size(), maxIndexReadBytes) / IndexEntryBytes
			b := make([]byte, n*IndexEntryBytes)
			if _, err := io.ReadFull(io.NewSectionReader(s.idx, 0, int64(len(b))), b); err == nil {
				for i := range n {
					e := ParseIndexEntry(b[i*IndexEntryBytes:])
					if e.Position < uint64(size) {
						out = append(out, anchor{off: e.Offset, ts: e.Timestamp, pos: int64(e.Position), hasTs: true})
					}
				}
			}
		}
	}
	for _, d := range q {
		if d.Last < math.MaxUint64 {
			out = append(out, anchor{off: d.Last + 1, pos: d.Pos + d.Len})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

// damageToEnd quarantines the rest of a sealed segment from the bad record
// the walk stopped at to the end of its log: the segment ends where the
// next one starts (end), so the slot's offsets are known. It fails with a
// *CorruptError when they are not (no offset left for the slot, or a slot
// too large for one index entry).
func damageToEnd(s *segment, res *located, size int64, end uint64) error {
	if res.next >= end || end-res.next > math.MaxUint32 || size-res.bad > maxRecordLimit {
		return &CorruptError{Path: s.logPath, Pos: res.bad, Reason: "bad record in sealed segment", Err: res.badErr}
	}
	ts := uint64(0)
	if n := len(res.entries); n > 0 {
		ts = res.entries[n-1].ts
	}
	res.entries = append(res.entries, memEntry{off: res.next, ts: ts, pos: res.bad,
		count: uint32(end - res.next), length: uint32(size - res.bad)})
	res.damage = append(res.damage, Damage{Path: s.logPath, Pos: res.bad, Len: size - res.bad,
		First: res.next, Last: end - 1, Reason: fmt.Sprint(res.badErr)})
	res.next, res.bad, res.badErr = end, -1, nil
	return nil
}
