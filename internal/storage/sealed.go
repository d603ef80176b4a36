package storage

import (
	"errors"
	"fmt"
)

// ErrNoSegment is returned for a segment that is not (or no longer) there.
var ErrNoSegment = errors.New("storage: no such segment")

// SealedInfo describes one sealed segment, for a caller that copies
// sealed segments elsewhere (the remote tier, internal/tier).
type SealedInfo struct {
	// Start and End are the offsets the segment holds: Start .. End-1.
	Start, End uint64
	// Bytes is the size of the log; Records the number of its index
	// entries (stored records).
	Bytes   int64
	Records int
	// FirstTimestamp and LastTimestamp are the server timestamps of its
	// first and last record (µs).
	FirstTimestamp, LastTimestamp uint64
	// LogPath and IndexPath are its files. They are immutable while the
	// segment is listed; retention, purge or a cut may remove them.
	LogPath, IndexPath string
	// Damaged is true when some of its records are quarantined.
	Damaged bool
}

// Sealed lists the segments retention may remove (every sealed segment;
// in held mode those wholly revealed), oldest first.
func (p *Partition) Sealed() []SealedInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	segs := p.segs.Load().segs
	n := p.removableLocked()
	out := make([]SealedInfo, 0, n)
	for _, s := range segs[:n] {
		out = append(out, SealedInfo{
			Start: s.start, End: s.sealedEnd, Bytes: s.sealedSize, Records: s.sealedN,
			FirstTimestamp: s.firstTs, LastTimestamp: s.maxTs,
			LogPath: s.logPath, IndexPath: s.idxPath, Damaged: len(s.damage()) > 0,
		})
	}
	return out
}

// VerifySegment verifies every record of the sealed segment at start that
// no read, Scrub or Open verified yet, quarantining those that fail (as a
// read does, reported through Options.DamageFound), so that a caller
// about to copy the segment knows its records are intact. It returns
// whether the segment holds quarantined records; ErrNoSegment when no
// sealed segment starts at start.
func (p *Partition) VerifySegment(start uint64) (damaged bool, err error) {
	for {
		gen := p.truncGen.Load()
		seg, n, ok := p.pinSealed(start)
		if !ok {
			return false, fmt.Errorf("%w: no sealed segment starts at offset %d", ErrNoSegment, start)
		}
		found := false
		if n > 0 && !seg.verifiedBelow(n-1) {
			found, err = p.verifyRecords(seg, gen, 0, n-1)
		}
		damaged = len(seg.damage()) > 0
		seg.release()
		if err != nil || !found || damaged {
			return damaged, err
		}
		// A cut raced the verification: look again.
	}
}

// pinSealed pins the sealed segment starting at start and returns its
// index entry count.
func (p *Partition) pinSealed(start uint64) (*segment, int, bool) {
	l := p.segs.Load()
	for i, s := range l.segs {
		if s.start != start || i == len(l.segs)-1 || s.mem.Load() != nil {
			continue
		}
		if !s.acquire() {
			return nil, 0, false
		}
		return s, s.sealedN, true
	}
	return nil, 0, false
}
