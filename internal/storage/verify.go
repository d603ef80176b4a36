package storage

import (
	"math"
	"sync"
	"sync/atomic"
)

// Verified before first served. A sealed segment that Open trusted without
// reading every record (Options.VerifySealed off) starts unverified; every
// other segment (created by this process, walked by recovery, or passed by
// Scrub) is verified whole. A read that would return records of an
// unverified part first verifies them (verifyRecords): pread into a pooled
// buffer, Format.Verify, and the base offset, message count and length the
// index gives each slot (checkSlot, as Scrub does). A record that fails is
// quarantined (addReadDamage) and the read is redone, so the extents stop
// before it or start after it; then the verified part grows.
//
// What is verified is tracked per segment in index entries: a watermark
// (entries [0, verified) are verified; verifiedAll once the whole segment
// is) plus at most maxVerifiedSpans spans [lo, hi) past it. A read whose
// first record is at most verifyGapBytes past the watermark verifies from
// the watermark on, so a sequential consumer moves the watermark and
// verifies each record once; a read deeper in the segment (a poll by
// timestamp) verifies just its records and keeps them as a span, which the
// following sequential reads extend and which joins the watermark when it
// reaches it. A span dropped when the set is full costs only a second
// verification. Quarantined records count as verified (they are never
// served).
//
// The watermark is read with one atomic load on every read (a verified
// segment costs nothing else) and only grows (storeMaxInt64); the spans are
// guarded by segment.vmu, taken only on the slow path. Nothing here takes
// Partition.mu: verification runs beside appends.
//
// Ordering: whoever verifies records (a read, Scrub, Open) quarantines
// those that fail (segment.quar) before it moves the watermark or adds a
// span. A reader therefore loads the watermark before the quarantine it
// cuts its extents by: a watermark covering its records means that
// quarantine holds every failure among them. A reader that had to verify
// (slow path) checks that the quarantine did not change while it did, and
// otherwise reads again, since another reader may have quarantined a
// record its verification then counted as verified.

const (
	// verifiedAll is the watermark of a segment verified whole.
	verifiedAll = math.MaxInt64
	// verifyGapBytes is how far past the watermark a read may start and
	// still verify from the watermark on.
	verifyGapBytes = 1 << 20
	// verifyWindowBytes is the size of the pooled read buffer: records
	// that fit are read together with one pread.
	verifyWindowBytes = 256 << 10
	// maxVerifiedSpans bounds the verified spans kept past the watermark.
	maxVerifiedSpans = 4
)

// span is a run [lo, hi) of index entries of one segment.
type span struct{ lo, hi int64 }

// verifyBufPool holds the read buffers of verifyRecords; one grows to the
// largest record verified through it.
var verifyBufPool = sync.Pool{New: func() any { b := make([]byte, verifyWindowBytes); return &b }}

// verifiedBelow reports whether records 0..i of the segment are verified.
func (s *segment) verifiedBelow(i int) bool { return s.verified.Load() > int64(i) }

// markVerified records that the whole segment is verified.
func (s *segment) markVerified() { s.verified.Store(verifiedAll) }

// noteVerified records that entries [lo, hi) of a segment holding n
// entries (sealed: n is final) are verified.
func (s *segment) noteVerified(lo, hi int64, n int, sealed bool) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if lo <= s.verified.Load() {
		storeMaxInt64(&s.verified, hi)
	} else {
		s.addSpanLocked(span{lo, hi})
	}
	// Spans the watermark reached join it.
	for moved := true; moved; {
		moved = false
		for i := 0; i < s.nspans; i++ {
			if sp := s.spans[i]; sp.lo <= s.verified.Load() {
				storeMaxInt64(&s.verified, sp.hi)
				s.removeSpanLocked(i)
				moved = true
				break
			}
		}
	}
	if sealed && s.verified.Load() >= int64(n) {
		s.verified.Store(verifiedAll)
		s.nspans = 0
	}
}

// addSpanLocked merges sp into the spans (those it overlaps or touches
// become one); when the set is full the newest span replaces the last.
// Caller holds vmu.
func (s *segment) addSpanLocked(sp span) {
	for i := 0; i < s.nspans; {
		if o := s.spans[i]; o.lo <= sp.hi && sp.lo <= o.hi {
			sp = span{min(o.lo, sp.lo), max(o.hi, sp.hi)}
			s.removeSpanLocked(i)
			continue
		}
		i++
	}
	if s.nspans == maxVerifiedSpans {
		s.nspans--
	}
	s.spans[s.nspans] = sp
	s.nspans++
}

func (s *segment) removeSpanLocked(i int) {
	copy(s.spans[i:s.nspans], s.spans[i+1:s.nspans])
	s.nspans--
}

// verifyFrom returns the first entry of k..j a read must verify: past the
// watermark and any span covering the start; from the watermark when k is
// close enough to it (v is a view of s).
func (s *segment) verifyFrom(v *segView, k int) (int64, error) {
	lo := int64(k)
	if w := s.verified.Load(); w >= lo {
		lo = w
	} else if w < int64(v.n) {
		_, _, wpos, _, _, err := v.entry(int(w))
		if err != nil {
			return 0, err
		}
		_, _, kpos, _, _, err := v.entry(k)
		if err != nil {
			return 0, err
		}
		if kpos-wpos <= verifyGapBytes {
			lo = w
		}
	}
	s.vmu.Lock()
	defer s.vmu.Unlock()
	for moved := true; moved; {
		moved = false
		for i := 0; i < s.nspans; i++ {
			if sp := s.spans[i]; sp.lo <= lo && lo < sp.hi {
				lo, moved = sp.hi, true
			}
		}
	}
	return lo, nil
}

// verifyRecords verifies the records k..j of seg (pinned by the caller)
// that are not verified yet, quarantines those that fail and notes the
// rest as verified. found is true when the records k..j hold a record
// that is quarantined now, or when a cut (gen, loaded before the records
// were located) raced: the caller redoes its read.
func (p *Partition) verifyRecords(seg *segment, gen uint64, k, j int) (found bool, err error) {
	v := seg.view()
	defer v.done()
	if j >= v.n {
		// Not the records the caller located (a cut ran): look again.
		return true, nil
	}
	lo, err := seg.verifyFrom(&v, k)
	if err != nil {
		return false, err
	}
	if lo > int64(j) {
		return false, nil
	}
	bad, err := p.verifyEntries(seg, &v, int(lo), j)
	if err != nil {
		return false, err
	}
	if len(bad) > 0 {
		ok, err := p.addReadDamage(seg, bad, gen)
		if err != nil || !ok {
			return true, err
		}
	}
	seg.noteVerified(lo, int64(j)+1, v.n, v.mem == nil)
	return len(bad) > 0, nil
}

// verifyEntries verifies the slots lo..j of view v of seg that are not
// quarantined, reading runs of them that fit the pooled buffer with one
// pread, and returns those that fail.
func (p *Partition) verifyEntries(seg *segment, v *segView, lo, j int) ([]Damage, error) {
	bp := verifyBufPool.Get().(*[]byte)
	defer verifyBufPool.Put(bp)
	q := seg.damage()
	var bad []Damage
	for i := lo; i <= j; {
		_, _, pos, _, end, err := v.entry(i)
		if err != nil {
			return bad, err
		}
		// The run i..m-1: records that fit the buffer together, or one
		// larger record.
		m := i + 1
		for m <= j {
			_, _, _, _, e, err := v.entry(m)
			if err != nil {
				return bad, err
			}
			if e-pos > int64(len(*bp)) {
				break
			}
			end, m = e, m+1
		}
		if m == i+1 && end-pos > p.opts.MaxRecordBytes {
			// One slot longer than any record: not read (Scrub says the
			// same).
			if d, ok := p.slotOf(seg, v, q, i); ok {
				d.Reason = "index mismatch: slot longer than a record"
				bad = append(bad, d)
			}
			i = m
			continue
		}
		if end-pos > int64(len(*bp)) {
			*bp = make([]byte, end-pos)
		}
		buf := (*bp)[:end-pos]
		_, rerr := seg.log.ReadAt(buf, pos)
		for x := i; x < m; x++ {
			d, ok := p.slotOf(seg, v, q, x)
			if !ok {
				continue
			}
			var cerr error
			if rerr == nil {
				cerr = p.checkSlot(buf[d.Pos-pos:d.Pos-pos+d.Len], d)
			} else if _, err := seg.log.ReadAt(buf[:d.Len], d.Pos); err != nil {
				// The run did not read: find which records do not.
				d.Reason = "read: " + err.Error()
			} else {
				cerr = p.checkSlot(buf[:d.Len], d)
			}
			if cerr != nil {
				d.Reason = cerr.Error()
			}
			if d.Reason != "" {
				bad = append(bad, d)
			}
		}
		i = m
	}
	return bad, nil
}

// slotOf returns entry x of v as the Damage it would be, unless it is
// quarantined (in q) or not a slot (recovery rebuilds such an index).
func (p *Partition) slotOf(seg *segment, v *segView, q []Damage, x int) (Damage, bool) {
	off, _, pos, endOff, endPos, err := v.entry(x) // cached by the caller's lookup
	if err != nil || endOff <= off || endPos <= pos {
		return Damage{}, false
	}
	if _, ok := damageAt(q, off); ok {
		return Damage{}, false
	}
	return Damage{Path: seg.logPath, Pos: pos, Len: endPos - pos, First: off, Last: endOff - 1}, true
}

// addReadDamage quarantines found (records a read verified) in seg, as
// Scrub does, and reports each newly added range to
// Options.DamageFound. ok is false, and nothing is added, when a
// TruncateFrom ran since gen was loaded (the bytes read may have been cut
// and replaced): the caller redoes its read.
func (p *Partition) addReadDamage(seg *segment, found []Damage, gen uint64) (ok bool, err error) {
	p.qmu.Lock()
	if p.truncGen.Load() != gen || gen&1 == 1 {
		p.qmu.Unlock()
		p.cutRaced(gen) // waits for a cut still running
		return false, nil
	}
	added, err := p.addDamageLocked(seg, found)
	p.qmu.Unlock()
	if p.opts.DamageFound != nil {
		for _, d := range added {
			p.opts.DamageFound(d)
		}
	}
	return true, err
}

// storeMaxInt64 raises a to v unless it is already at least v.
func storeMaxInt64(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}
