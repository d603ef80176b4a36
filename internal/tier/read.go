package tier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Read fills r as storage.Partition.Read does, over the whole log: a read
// starting at an offset held only in the bucket is served from there
// (through the cache, one chunk at most per call, so it may return fewer
// messages than asked); anything else is the local log's read. Offsets no
// tier holds (removed by retention) are skipped.
func (p *Partition) Read(ctx context.Context, r *storage.ReadResult, from, maxMessages uint64, maxBytes int64) error {
	for attempt := 0; ; attempt++ {
		r.Release()
		m, k0, localFirst, _ := p.remoteOnly()
		if k0 == 0 || from >= localFirst || maxMessages == 0 {
			err := p.log.Read(r, from, maxMessages, maxBytes)
			if err == nil && attempt < 3 && (len(r.Extents) == 0 || r.Extents[0].FirstOffset > from) && p.remoteHolds(from) {
				// The local copy of from's segment was dropped after
				// the look at the tiers: read it from the bucket.
				continue
			}
			return err
		}
		from = max(from, m.Segments[0].Start)
		i := sort.Search(k0, func(i int) bool { return m.Segments[i].End > from })
		if i == k0 {
			// In a gap before the local log: start there.
			return p.log.Read(r, from, maxMessages, maxBytes)
		}
		seg := m.Segments[i]
		err := p.readRemote(ctx, r, &seg, max(from, seg.Start), maxMessages, maxBytes)
		if err == nil {
			p.prefetchAfter(r, m, i, k0)
			return nil
		}
		if attempt < 2 && p.man.Load() != m {
			continue // retention or a purge changed the manifest: look again
		}
		p.m.met.readErrors.Add(1)
		return err
	}
}

// remoteHolds reports whether offset off is in a segment only the bucket
// holds now.
func (p *Partition) remoteHolds(off uint64) bool {
	m, k0, localFirst, _ := p.remoteOnly()
	i := m.find(off)
	return i >= 0 && i < k0 && off < localFirst
}

// readRemote appends to r the extent of the remote segment seg holding
// offsets from on, ending at the end of the cached chunk that holds from.
func (p *Partition) readRemote(ctx context.Context, r *storage.ReadResult, seg *Remote, from, maxMessages uint64, maxBytes int64) error {
	ix, err := p.openIndex(ctx, seg)
	if err != nil {
		return err
	}
	defer ix.close()
	k, err := ix.lastAtOrBelow(from)
	if err != nil {
		return err
	}
	cr, err := p.chunkOf(ix, k)
	if err != nil {
		return err
	}
	ch, err := p.fetchChunk(ctx, seg, ix, cr)
	if err != nil {
		return err
	}
	target := seg.End
	if maxMessages < target-from {
		target = from + maxMessages
	}
	first, err := ix.entry(k)
	if err != nil {
		ch.Release()
		return err
	}
	// The last record: the one holding target-1, within the chunk and
	// within maxBytes (at least one record).
	j := k
	for lo, hi := k+1, cr.hi; lo < hi; {
		mid := int(uint(lo+hi) >> 1)
		e, err := ix.entry(mid)
		if err != nil {
			ch.Release()
			return err
		}
		if e.Offset < target && (maxBytes <= 0 || e.end.pos-int64(first.Position) <= maxBytes) {
			j, lo = mid, mid+1
		} else {
			hi = mid
		}
	}
	last, err := ix.entry(j)
	if err != nil {
		ch.Release()
		return err
	}
	pos := int64(first.Position)
	r.Extents = append(r.Extents, storage.ChunkExtent(&extentChunk{ch, seg.Key}, pos, last.end.pos-pos,
		first.Offset, int64(last.Position), last.Offset, last.end.off))
	return nil
}

// chunkRange is a cached piece of a remote segment: the records lo..hi-1
// of its index, at log positions pos .. end.
type chunkRange struct {
	lo, hi   int
	pos, end int64
}

// chunkOf returns the chunk holding record k: chunk c holds the records
// starting at log positions c*ChunkBytes .. (c+1)*ChunkBytes-1, so every
// record is in exactly one chunk and a chunk is never empty around k.
func (p *Partition) chunkOf(ix *indexFile, k int) (chunkRange, error) {
	e, err := ix.entry(k)
	if err != nil {
		return chunkRange{}, err
	}
	size := p.m.opts.ChunkBytes
	c := int64(e.Position) / size
	lo, err := ix.firstAtOrAbove(c * size)
	if err != nil {
		return chunkRange{}, err
	}
	hi, err := ix.firstAtOrAbove((c + 1) * size)
	if err != nil {
		return chunkRange{}, err
	}
	a, err := ix.entry(lo)
	if err != nil {
		return chunkRange{}, err
	}
	b, err := ix.entry(hi - 1)
	if err != nil {
		return chunkRange{}, err
	}
	return chunkRange{lo: lo, hi: hi, pos: int64(a.Position), end: b.end.pos}, nil
}

// fetchChunk returns the chunk cr of seg from the cache, fetching it with
// a ranged read and verifying every record in it against the index on a
// miss.
func (p *Partition) fetchChunk(ctx context.Context, seg *Remote, ix *indexFile, cr chunkRange) (*Chunk, error) {
	fetch := func(ctx context.Context, b []byte) error {
		start := time.Now()
		err := p.m.bucket.ReadRange(ctx, seg.Key, cr.pos, b)
		if err == nil {
			p.m.met.fetchSeconds.observe(time.Since(start))
			p.m.met.fetchedBytes.Add(uint64(len(b)))
		}
		return err
	}
	verify := func(b []byte) error {
		if err := p.verifyChunk(seg, ix.path, cr, b); err != nil {
			return fmt.Errorf("%w: %w", errDamaged, err)
		}
		return nil
	}
	rctx, cancel := p.m.requestCtx(ctx)
	defer cancel()
	ch, err := p.m.cache.Get(rctx, seg.Key, cr.pos, cr.end-cr.pos, fetch, verify)
	if errors.Is(err, errDamaged) {
		p.damagedRemote(seg, err)
		// The index may be what is wrong: the next read fetches it again
		// from the bucket.
		if rerr := os.Remove(ix.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			p.m.log.Warn("remote tier: remove the index of a damaged remote segment", "path", ix.path, "err", rerr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: segment %d..%d of partition %s (%s): %w", ErrRemoteRead, seg.Start, seg.End-1, p.ref, seg.Key, err)
	}
	return ch, nil
}

// verifyChunk checks that b holds the records cr.lo..cr.hi-1 of the
// index at path, each whole and verified by the log's format.
func (p *Partition) verifyChunk(seg *Remote, path string, cr chunkRange, b []byte) error {
	ix, err := openIndexFile(path, seg)
	if err != nil {
		return err
	}
	defer ix.close()
	entries, endOff, endPos, err := ix.span(cr.lo, cr.hi)
	if err != nil {
		return err
	}
	hl := int64(p.format.HeaderLen())
	for i, e := range entries {
		nextOff, nextPos := endOff, endPos
		if i+1 < len(entries) {
			nextOff, nextPos = entries[i+1].Offset, int64(entries[i+1].Position)
		}
		lo, hi := int64(e.Position)-cr.pos, nextPos-cr.pos
		if lo < 0 || hi > int64(len(b)) || hi-lo < hl {
			return fmt.Errorf("record at offset %d out of the chunk", e.Offset)
		}
		rec := b[lo:hi]
		n, err := p.format.RecordLen(rec[:hl])
		if err != nil || n != hi-lo {
			return fmt.Errorf("record at offset %d: length does not match the index", e.Offset)
		}
		info, err := p.format.Verify(rec)
		if err != nil {
			return fmt.Errorf("record at offset %d: %w", e.Offset, err)
		}
		if info.BaseOffset != e.Offset || info.BaseOffset+uint64(info.Count) != nextOff {
			return fmt.Errorf("record at offset %d holds offsets %d..%d", e.Offset, info.BaseOffset, info.BaseOffset+uint64(info.Count)-1)
		}
	}
	return nil
}

// damagedRemote logs, once per segment, that a remote object failed
// verification. Its offsets stay unreadable (each read of them fails with
// ErrRemoteRead naming the object): a segment is read from the bucket
// only once no local copy of it is left to upload again.
func (p *Partition) damagedRemote(seg *Remote, err error) {
	p.mu.Lock()
	if p.remoteWarned == nil {
		p.remoteWarned = map[uint64]bool{}
	}
	first := !p.remoteWarned[seg.Start]
	p.remoteWarned[seg.Start] = true
	p.mu.Unlock()
	if first {
		p.m.log.Error("remote tier: an object failed verification; its offsets are not served",
			"partition", p.ref, "object", seg.Key, "first_offset", seg.Start, "last_offset", seg.End-1, "err", err)
	}
}

// prefetchAfter starts fetching the chunk after the one r's extent came
// from (or the first chunk of the next remote segment), for a reader
// going on sequentially.
func (p *Partition) prefetchAfter(r *storage.ReadResult, m *Manifest, i, k0 int) {
	if len(r.Extents) == 0 {
		return
	}
	next := r.Extents[len(r.Extents)-1].EndOffset
	seg := m.Segments[i]
	if next >= seg.End {
		if i+1 >= k0 {
			return
		}
		seg = m.Segments[i+1]
		next = seg.Start
	}
	ix, err := openIndexFile(p.indexPath(seg.Start), &seg)
	if err != nil {
		return
	}
	defer ix.close()
	k, err := ix.lastAtOrBelow(next)
	if err != nil {
		return
	}
	cr, err := p.chunkOf(ix, k)
	if err != nil {
		return
	}
	path := ix.path
	p.m.cache.Prefetch(seg.Key, cr.pos, cr.end-cr.pos,
		func(ctx context.Context, b []byte) error { return p.m.bucket.ReadRange(ctx, seg.Key, cr.pos, b) },
		func(b []byte) error { return p.verifyChunk(&seg, path, cr, b) })
}

// openIndex opens the local copy of seg's index, restoring it from the
// bucket when it is missing.
func (p *Partition) openIndex(ctx context.Context, seg *Remote) (*indexFile, error) {
	path := p.indexPath(seg.Start)
	ix, err := openIndexFile(path, seg)
	if !errors.Is(err, os.ErrNotExist) {
		return ix, err
	}
	b := make([]byte, int64(seg.Records)*storage.IndexEntryBytes)
	rctx, cancel := p.m.requestCtx(ctx)
	defer cancel()
	if err := p.m.bucket.ReadRange(rctx, IndexKey(seg.Key), 0, b); err != nil {
		return nil, fmt.Errorf("%w: index of segment %d of partition %s: %w", ErrRemoteRead, seg.Start, p.ref, err)
	}
	if _, err := storage.DecodeIndex(b, seg.Start, seg.Bytes); err != nil {
		return nil, fmt.Errorf("%w: index object %s: %w", ErrRemoteRead, IndexKey(seg.Key), err)
	}
	if err := fileio.WriteFileAtomic(path, b); err != nil {
		return nil, err
	}
	return openIndexFile(path, seg)
}

// extentChunk names a cached chunk for storage.Chunk.
type extentChunk struct {
	*Chunk
	name string
}

// Name implements storage.Chunk.
func (c *extentChunk) Name() string { return c.name }

// OffsetForTimestamp is storage.Partition.OffsetForTimestamp over the
// whole log: the first record at or after ts (µs) may be in the bucket,
// found with the local copy of its segment's index.
func (p *Partition) OffsetForTimestamp(ctx context.Context, ts uint64) (off uint64, ok bool, err error) {
	for range 3 {
		m := p.man.Load()
		off, ok, err = p.offsetForTimestamp(ctx, ts)
		if p.man.Load() == m {
			break
		}
		// A segment moved between the tiers or was removed: look again.
	}
	return off, ok, err
}

func (p *Partition) offsetForTimestamp(ctx context.Context, ts uint64) (off uint64, ok bool, err error) {
	m, k0, _, _ := p.remoteOnly()
	for i := range m.Segments[:k0] {
		seg := m.Segments[i]
		if seg.LastTimestamp < ts {
			continue
		}
		ix, err := p.openIndex(ctx, &seg)
		if err != nil {
			return 0, false, err
		}
		k, err := ix.firstTimestampAtOrAbove(ts)
		if err == nil && k < ix.n {
			var e storage.IndexEntry
			e, err = ix.raw(k)
			off = e.Offset
		}
		ix.close()
		if err != nil {
			return 0, false, err
		}
		if k < int(seg.Records) {
			return off, true, nil
		}
	}
	return p.log.OffsetForTimestamp(ts)
}
