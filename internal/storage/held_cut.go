package storage

import (
	"fmt"
	"os"
)

// truncateSealedLocked is TruncateFrom(off) for an off inside a sealed
// segment c (revealed end <= off < active segment start): every segment
// after c is removed and c, cut at off, becomes the active segment again.
// Caller must hold p.syncMu and p.mu.
//
// The steps run in this order, so that a crash at any point leaves a
// directory that recovery turns into a consistent prefix of the log:
//
//  1. Locate the record at off in c and read c's index entries before it
//     (a failure here changes nothing).
//  2. Remove the segments after c, newest first, syncing the directory
//     after each one: a crash leaves c and a contiguous run of the
//     segments after it, the last of which recovery treats as the active
//     segment. Its records past off are unrevealed, and the caller (raft)
//     cuts them again.
//  3. Cut c's log at off's position and sync it, then its index to the
//     entries before off and sync it: a crash in between leaves c as the
//     last segment, whose index recovery rebuilds from the log.
//  4. Reopen c's files as the new active segment (activate, recover.go,
//     with the in-memory index built from the entries of step 1) and
//     publish the new segment list.
//
// Readers that pinned a removed segment, or the sealed c, keep reading
// their descriptors until they release; revealed bytes never change, and
// a lookup that met the shortened index retries (truncGen).
func (p *Partition) truncateSealedLocked(off uint64) error {
	segs := p.segs.Load().segs
	ci := segmentFor(segs, off)
	c := segs[ci]
	k, pos, err := c.recordAt(off)
	if err != nil {
		return fmt.Errorf("truncate from %d: %w", off, err)
	}
	entries, err := c.leadingEntries(k, off, pos)
	if err != nil {
		return fmt.Errorf("truncate from %d: %w", off, err)
	}
	defer p.beginCutLocked()()
	p.qmu.Lock()
	defer p.qmu.Unlock()
	fail := func(err error) error {
		p.failed = fmt.Errorf("truncate from %d: %w", off, err)
		return p.failed
	}
	for i := len(segs) - 1; i > ci; i-- {
		if err := segs[i].unlink(); err != nil {
			return fail(err)
		}
		if err := syncDir(p.dir); err != nil {
			return fail(err)
		}
		p.cutStepDone()
	}
	if err := truncateSync(c.log, c.logPath, pos); err != nil {
		return fail(err)
	}
	p.cutStepDone()
	if err := truncateSync(c.idx, c.idxPath, int64(k)*IndexEntryBytes); err != nil {
		return fail(err)
	}
	p.cutStepDone()
	s, size, err := openSegmentFiles(p.dir, c.start)
	if err != nil {
		return fail(err)
	}
	if size != pos {
		s.release()
		return fail(fmt.Errorf("segment %d is %d bytes after the cut, want %d", c.start, size, pos))
	}
	// The quarantine before the cut stays.
	var q []Damage
	for _, d := range c.damage() {
		if d.First < off {
			q = append(q, d)
		}
	}
	if err := c.writeSidecar(p.dir, q); err != nil {
		s.release()
		return fail(err)
	}
	s.setDamage(q)
	// What reads verified of c stays verified; records appended from
	// the cut on are written here (verify.go).
	s.verified.Store(c.verified.Load())
	p.activate(s, entries, pos, p.visNext.Load())

	var dropped int64
	for _, x := range segs[ci : len(segs)-1] {
		dropped += x.sealedSize
	}
	list := make([]*segment, ci+1)
	copy(list, segs[:ci])
	list[ci] = s
	p.sealedBytes.Add(-dropped)
	p.active = s
	p.next = off
	if k > 0 {
		p.lastTs = entries[k-1].ts
	}
	p.segs.Store(&segList{segs: list})
	for _, x := range segs[ci:] {
		x.release()
	}
	return nil
}

// beginCutLocked marks a cut as running (truncGen odd) and returns the
// function that marks it done, to be deferred: also a failed cut ends, so
// that readers stop retrying. Caller must hold p.mu until the returned
// function ran.
func (p *Partition) beginCutLocked() func() {
	p.truncGen.Add(1)
	return func() { p.truncGen.Add(1) }
}

// cutRaced reports whether a TruncateFrom ran, or was running, since gen
// was loaded from truncGen: a lock-free lookup since then may have read an
// index shortened under it, or bytes another record replaced. When a cut
// is still running it waits for it (by taking p.mu), so that the retry
// sees its result rather than spinning.
func (p *Partition) cutRaced(gen uint64) bool {
	now := p.truncGen.Load()
	if now == gen && gen&1 == 0 {
		return false
	}
	if now&1 == 1 {
		p.waitForCut()
	}
	return true
}

// waitForCut returns once the running TruncateFrom, which holds p.mu
// throughout, is done.
func (p *Partition) waitForCut() {
	p.mu.Lock()
	defer p.mu.Unlock()
}

// recordAt returns the index and log position of the record of the sealed
// segment s whose base offset is off (ErrNoRecord, wrapped, if none).
// Caller must hold Partition.mu, which keeps s listed.
func (s *segment) recordAt(off uint64) (int, int64, error) {
	v := s.view()
	defer v.done()
	k, err := v.lastAtOrBelow(0, off)
	if err != nil {
		return 0, 0, err
	}
	if k < 0 {
		return 0, 0, fmt.Errorf("not a record boundary: %w", ErrNoRecord)
	}
	base, _, pos, _, _, err := v.entry(k)
	if err != nil {
		return 0, 0, err
	}
	if base != off {
		return 0, 0, fmt.Errorf("not a record boundary: %w", ErrNoRecord)
	}
	return k, pos, nil
}

// leadingEntries reads the first n entries of the sealed segment's index
// as in-memory entries; record n starts at offset end, position endPos,
// which gives the last one's count and length.
func (s *segment) leadingEntries(n int, end uint64, endPos int64) ([]memEntry, error) {
	b := make([]byte, n*IndexEntryBytes)
	if _, err := s.idx.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read index %s: %w", s.idxPath, err)
	}
	out := make([]memEntry, n)
	for i := n - 1; i >= 0; i-- {
		e := ParseIndexEntry(b[i*IndexEntryBytes:])
		if e.Offset >= end || int64(e.Position) >= endPos {
			return nil, fmt.Errorf("index %s: entry %d (offset %d, position %d) out of order", s.idxPath, i, e.Offset, e.Position)
		}
		out[i] = memEntry{off: e.Offset, ts: e.Timestamp, pos: int64(e.Position),
			count: uint32(end - e.Offset), length: uint32(endPos - int64(e.Position))}
		end, endPos = e.Offset, int64(e.Position)
	}
	return out, nil
}

// truncateSync truncates f (at path) to size bytes and syncs it.
func truncateSync(f *os.File, path string, size int64) error {
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	if err := syncData(f); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// cutStepDone runs the test hook afterCutStep, if set, after each durable
// step of truncateSealedLocked.
func (p *Partition) cutStepDone() {
	if p.afterCutStep != nil {
		p.afterCutStep()
	}
}
