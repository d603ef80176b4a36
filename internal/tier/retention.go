package tier

import "github.com/iggo-dev/iggo/internal/storage"

// dropLocal removes the local copies of the oldest sealed segments that
// are in the bucket and past the local retention (bytes of sealed data
// kept locally, age of their newest record). Only a prefix of uploaded
// segments is dropped, so the local log stays contiguous.
func (p *Partition) dropLocal() error {
	p.dropMu.Lock()
	defer p.dropMu.Unlock()
	sealed := p.log.Sealed()
	m := p.man.Load()
	n := 0
	for n < len(sealed) && m.covers(sealed[n].Start, sealed[n].End) {
		n++
	}
	if n == 0 {
		return nil
	}
	keep := p.keep.Load()
	k := n
	if keep.Bytes != 0 {
		var total uint64 // uploaded sealed data on local disk
		for _, s := range sealed[:n] {
			total += uint64(s.Bytes)
		}
		r := storage.Retention{MaxAge: keep.Age}
		if keep.Bytes != Unlimited {
			r.MaxBytes = keep.Bytes
		}
		k = storage.RetainPrefix(n, sealedSpan(sealed), total, r, p.nowMicros())
	}
	if k == 0 {
		return nil
	}
	rm, err := p.dropOldest(k, sealed[k-1].End)
	p.m.met.droppedSegments.Add(uint64(rm.Segments))
	p.m.met.droppedBytes.Add(rm.Bytes)
	return err
}

// dropOldest removes the k oldest local segments if the first offset
// kept is then keep (otherwise the local log changed since the caller
// looked, and nothing is removed). In a cluster the group's log is
// compacted past them first (Cluster.DropOldest). Caller holds p.dropMu,
// not p.mu: the compaction waits for the replication loop, whose
// applies take p.mu.
func (p *Partition) dropOldest(k int, keep uint64) (storage.Removed, error) {
	if k <= 0 {
		return storage.Removed{}, nil
	}
	if p.cl != nil {
		return p.cl.DropOldest(k, keep)
	}
	if got, at := p.log.OldestSegmentsEnd(k); got != k || at != keep {
		return storage.Removed{}, nil
	}
	return p.log.DeleteOldestSegments(k)
}

func sealedSpan(s []storage.SealedInfo) func(int) storage.Span {
	return func(i int) storage.Span {
		return storage.Span{Bytes: s[i].Bytes, MaxTimestamp: s[i].LastTimestamp}
	}
}

func (p *Partition) nowMicros() uint64 {
	t := p.m.opts.Clock().UnixMicro()
	return uint64(max(t, 0))
}

// Retain applies retention (message_expiry, max_topic_size) to the whole
// log, both tiers together: the oldest segments go first, from the bucket
// (their objects are deleted in the background) and then from local
// disk, by the rule of storage.RetainPrefix.
func (p *Partition) Retain(r storage.Retention) (storage.Removed, error) {
	p.dropMu.Lock()
	defer p.dropMu.Unlock()
	m, k0, _, _ := p.remoteOnly()
	sealed := p.log.Sealed()
	total := p.log.Stats().Bytes
	for i := range m.Segments[:k0] {
		total += uint64(m.Segments[i].Bytes)
	}
	span := func(i int) storage.Span {
		if i < k0 {
			s := &m.Segments[i]
			return storage.Span{Bytes: s.Bytes, MaxTimestamp: s.LastTimestamp}
		}
		return sealedSpan(sealed)(i - k0)
	}
	k := storage.RetainPrefix(k0+len(sealed), span, total, r, p.nowMicros())
	return p.removeOldest(k, m, k0, sealed)
}

// DeleteOldestSegments removes the n oldest segments of the whole log
// (DELETE_SEGMENTS), those in the bucket first; the active segment is
// never removed.
func (p *Partition) DeleteOldestSegments(n int) (storage.Removed, error) {
	p.dropMu.Lock()
	defer p.dropMu.Unlock()
	m, k0, _, _ := p.remoteOnly()
	sealed := p.log.Sealed()
	return p.removeOldest(min(max(n, 0), k0+len(sealed)), m, k0, sealed)
}

// removeOldest removes the k oldest segments of the whole log: the k0
// oldest of m start before the local log, sealed are the local ones. The
// manifest stops listing every removed segment (queuing its objects for
// deletion) before the local ones go. Caller holds p.dropMu.
func (p *Partition) removeOldest(k int, m *Manifest, k0 int, sealed []storage.SealedInfo) (storage.Removed, error) {
	var rm storage.Removed
	if k == 0 {
		return rm, nil
	}
	localK := max(k-k0, 0)
	var cut uint64 // every segment ending at or before it goes
	switch {
	case localK > 0:
		cut = sealed[localK-1].End
	case k0 > 0:
		cut = m.Segments[min(k, k0)-1].End
	default:
		return rm, nil
	}
	p.mu.Lock()
	n := p.man.Load().clone()
	var gone []Remote
	kept := n.Segments[:0]
	for _, s := range n.Segments {
		if s.End <= cut {
			gone = append(gone, s)
			n.Deletes = append(n.Deletes, s.Key, IndexKey(s.Key))
			continue
		}
		kept = append(kept, s)
	}
	n.Segments = kept
	var err error
	if len(gone) > 0 {
		err = p.commit(n)
	}
	p.mu.Unlock()
	if err != nil {
		return rm, err
	}
	if len(gone) > 0 {
		p.removeIndexes(gone)
		for i := range gone {
			p.m.cache.Drop(gone[i].Key)
		}
		for i := range gone[:min(len(gone), k0)] {
			rm.Segments++
			rm.Bytes += uint64(gone[i].Bytes)
			rm.Messages += gone[i].End - gone[i].Start
		}
		p.m.poke()
	}
	if localK > 0 {
		lrm, err := p.dropOldest(localK, cut)
		rm.Segments += lrm.Segments
		rm.Bytes += lrm.Bytes
		rm.Messages += lrm.Messages
		if err != nil {
			return rm, err
		}
	}
	return rm, nil
}

// Purge deletes every message of the partition in both tiers (offsets
// restart at 0): the manifest moves to a new epoch listing nothing, with
// every object queued for deletion, then the local log is purged. epoch
// is the new epoch: 0 takes the next one (a single node); in a cluster
// it is the purge entry's index in the group's log, so every replica
// agrees, and a manifest already at or past it (restored from a newer
// snapshot) is kept.
func (p *Partition) Purge(epoch uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.man.Load()
	if epoch == 0 {
		epoch = m.Epoch + 1
	}
	if epoch <= m.Epoch {
		return p.log.Purge()
	}
	n := Manifest{Epoch: epoch, Deletes: append([]string(nil), m.Deletes...)}
	for _, s := range m.Segments {
		n.Deletes = append(n.Deletes, s.Key, IndexKey(s.Key))
	}
	if err := p.commit(n); err != nil {
		return err
	}
	p.removeIndexes(m.Segments)
	for i := range m.Segments {
		p.m.cache.Drop(m.Segments[i].Key)
	}
	p.m.poke()
	return p.log.Purge()
}
