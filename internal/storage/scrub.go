package storage

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// ScrubReport is what one Scrub pass checked and found.
type ScrubReport struct {
	// Segments is the number of sealed segments checked.
	Segments int
	// Records is the number of records verified (quarantined slots are
	// not read again).
	Records int64
	// Bytes is the number of log bytes read.
	Bytes int64
	// Damaged is everything quarantined after the pass (old and new).
	Damaged []Damage
	// New is what this pass found.
	New []Damage
}

// Scrub re-verifies every record of the sealed segments and their index
// against the log, reading at most bytesPerSec (0: unlimited); newly found
// damage is quarantined (and reported by Damaged from then on).
//
// Each record is read where the index says it is and must verify, carry
// the base offset and message count the index gives it and be exactly as
// long as its slot; anything else (a flipped bit, a truncated log, an
// index entry that no longer describes its record) quarantines that slot,
// and its quarantine file is updated before Scrub moves on. Scrub runs
// beside appends, reads and retention: each segment is pinned while it is
// read, and a segment removed meanwhile is passed over. The active segment
// is not scrubbed (recovery walks it at every Open). A closed partition
// fails with ErrClosed; ctx ending, or a failure to read the index or to
// write a quarantine file, ends the pass with what was found so far.
func (p *Partition) Scrub(ctx context.Context, bytesPerSec int64) (ScrubReport, error) {
	var rep ScrubReport
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return rep, ErrClosed
	}
	pc := newPacer(bytesPerSec, time.Now, sleepCtx)
	var buf []byte
	for _, seg := range p.segs.Load().segs {
		if err := ctx.Err(); err != nil {
			rep.Damaged = p.Damaged()
			return rep, err
		}
		if seg.mem.Load() != nil || !seg.acquire() {
			continue // active, or removed meanwhile
		}
		found, err := p.scrubSegment(ctx, seg, pc, &buf, &rep)
		if err == nil && len(found) > 0 {
			found, err = p.addDamage(seg, found)
			rep.New = append(rep.New, found...)
		}
		if err == nil {
			// Every record was verified or is quarantined now: reads
			// need not verify it again (verify.go).
			seg.markVerified()
		}
		seg.release()
		if err != nil {
			rep.Damaged = p.Damaged()
			return rep, fmt.Errorf("scrub %s: %w", seg.logPath, err)
		}
		rep.Segments++
	}
	rep.Damaged = p.Damaged()
	return rep, nil
}

// scrubSegment verifies every slot of the sealed segment seg (pinned by the
// caller) that is not quarantined and returns the ranges that fail.
func (p *Partition) scrubSegment(ctx context.Context, seg *segment, pc *pacer, buf *[]byte, rep *ScrubReport) ([]Damage, error) {
	v := seg.view()
	defer v.done()
	q := seg.damage()
	var found []Damage
	for i := 0; i < v.n; i++ {
		off, _, pos, endOff, endPos, err := v.entry(i)
		if err != nil {
			return found, err
		}
		if _, ok := damageAt(q, off); ok {
			continue
		}
		if endOff <= off || endPos <= pos {
			continue // not a slot; recovery rebuilds such an index
		}
		d := Damage{Path: seg.logPath, Pos: pos, Len: endPos - pos, First: off, Last: endOff - 1}
		if d.Len > p.opts.MaxRecordBytes {
			d.Reason = fmt.Sprintf("index mismatch: slot of %d bytes is longer than a record", d.Len)
			found = append(found, d)
			continue
		}
		if err := pc.wait(ctx, d.Len); err != nil {
			return found, err
		}
		if int64(cap(*buf)) < d.Len {
			*buf = make([]byte, d.Len)
		}
		rec := (*buf)[:d.Len]
		if _, err := seg.log.ReadAt(rec, pos); err != nil {
			d.Reason = "read: " + err.Error()
			found = append(found, d)
			continue
		}
		rep.Bytes += d.Len
		rep.Records++
		if err := p.checkSlot(rec, d); err != nil {
			d.Reason = err.Error()
			found = append(found, d)
		}
	}
	return found, nil
}

// addDamage quarantines found in seg, unless seg was removed meanwhile,
// and returns what it added. Readers stop returning the records at once;
// the quarantine file of a sealed segment is rewritten before it returns.
func (p *Partition) addDamage(seg *segment, found []Damage) ([]Damage, error) {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	return p.addDamageLocked(seg, found)
}

// addDamageLocked is addDamage with Partition.qmu held.
func (p *Partition) addDamageLocked(seg *segment, found []Damage) ([]Damage, error) {
	if !slices.Contains(p.segs.Load().segs, seg) {
		return nil, nil
	}
	old := seg.damage()
	q := slices.Clone(old)
	var added []Damage
	for _, d := range found {
		if _, ok := damageAt(old, d.First); !ok {
			q = append(q, d)
			added = append(added, d)
		}
	}
	slices.SortFunc(q, func(a, b Damage) int {
		if a.First < b.First {
			return -1
		}
		if a.First > b.First {
			return 1
		}
		return 0
	})
	seg.setDamage(q)
	if err := seg.writeSidecar(p.dir, q); err != nil {
		return added, err
	}
	return added, nil
}

// dropDamageFrom removes the ranges of the active segment seg at or after
// offset off (cut away by TruncateFrom) and rewrites its quarantine file.
// Caller must hold p.mu.
func (p *Partition) dropDamageFrom(seg *segment, off uint64) error {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	q := seg.damage()
	k := 0
	for k < len(q) && q[k].First < off {
		k++
	}
	if k == len(q) {
		return nil
	}
	nq := slices.Clone(q[:k])
	seg.setDamage(nq)
	return seg.writeSidecar(p.dir, nq)
}
