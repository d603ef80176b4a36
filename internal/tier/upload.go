package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/storage"
)

// work is one background pass over the partition: deletions the
// manifest queued, uploads of sealed segments not in the bucket yet
// (oldest first, up to UploadConcurrency at once), each round followed
// by the local retention, so a long backlog shrinks local data as it
// goes.
func (p *Partition) work(ctx context.Context) error {
	if err := p.deleteQueued(ctx); err != nil {
		return err
	}
	for ctx.Err() == nil {
		n, err := p.uploadRound(ctx)
		if derr := p.dropLocal(); err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	return nil
}

// uploadRound uploads the oldest sealed segments the manifest does not
// list, up to UploadConcurrency of them in parallel (each also takes one
// of the manager's upload slots), and lists those that succeeded in one
// manifest save. n is how many it uploaded or found removed meanwhile (0:
// nothing left to do). A segment with quarantined records is not uploaded:
// its local copy stays, and so do the segments after it, since local
// copies are dropped as a prefix; the ones after it are uploaded.
func (p *Partition) uploadRound(ctx context.Context) (n int, err error) {
	if p.cl != nil && !p.cl.Leads() {
		return 0, nil // the group's leader uploads
	}
	p.mu.Lock()
	m := p.man.Load()
	var todo []storage.SealedInfo
	for _, s := range p.log.Sealed() {
		if len(todo) == p.m.opts.UploadConcurrency {
			break
		}
		if m.covers(s.Start, s.End) {
			continue
		}
		if s.Damaged {
			p.noteDamaged(s)
			continue
		}
		todo = append(todo, s)
	}
	epoch := m.Epoch
	p.mu.Unlock()
	if len(todo) == 0 {
		return 0, nil
	}
	done := make([]Remote, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case p.m.slots <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-p.m.slots }()
			done[i], errs[i] = p.uploadOne(ctx, todo[i], epoch)
		}()
	}
	wg.Wait()
	var ok []Remote
	for i := range todo {
		switch {
		case errs[i] == nil:
			ok = append(ok, done[i])
			n++
		case errors.Is(errs[i], errSegmentGone):
			n++ // removed meanwhile: look again
		case err == nil:
			err = errs[i]
		}
	}
	if len(ok) > 0 {
		var cerr error
		if p.cl != nil {
			cerr = p.publish(ctx, ok, epoch)
		} else {
			cerr = p.list(ok, epoch)
		}
		if cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

// uploadOne verifies the sealed segment on local disk and uploads it.
func (p *Partition) uploadOne(ctx context.Context, seg storage.SealedInfo, epoch uint64) (Remote, error) {
	damaged, err := p.log.VerifySegment(seg.Start)
	if errors.Is(err, storage.ErrNoSegment) {
		return Remote{}, errSegmentGone
	}
	if err != nil {
		return Remote{}, fmt.Errorf("verify segment %d before upload: %w", seg.Start, err)
	}
	if damaged {
		return Remote{}, fmt.Errorf("segment %s holds damaged records; it stays on local disk", seg.LogPath)
	}
	r, err := p.upload(ctx, seg, epoch)
	if errors.Is(err, os.ErrNotExist) && p.segmentGone(seg) {
		return Remote{}, errSegmentGone
	}
	return r, err
}

// list adds uploaded segments to the manifest in one save, unless the
// partition was purged while they uploaded (their objects are old data
// then, queued for deletion).
func (p *Partition) list(up []Remote, epoch uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.man.Load()
	n := cur.clone()
	added := 0
	for _, r := range up {
		if cur.Epoch != epoch {
			n.Deletes = append(n.Deletes, r.Key, IndexKey(r.Key))
			continue
		}
		if !n.insert(r) {
			continue
		}
		added++
		p.m.met.uploadedSegments.Add(1)
		p.m.met.uploadedBytes.Add(uint64(r.Bytes))
	}
	return p.commit(n)
}

// noteDamaged logs, once per segment, that a damaged segment is kept
// local. Caller holds p.mu.
func (p *Partition) noteDamaged(s storage.SealedInfo) {
	if p.warned == nil {
		p.warned = map[uint64]bool{}
	}
	if !p.warned[s.Start] {
		p.warned[s.Start] = true
		p.m.log.Warn("remote tier: a segment holding damaged records is not uploaded; it stays on local disk, and so do the segments after it",
			"partition", p.ref, "file", s.LogPath)
	}
}

// segmentGone reports whether seg is no longer a sealed segment of the
// local log (with the same end).
func (p *Partition) segmentGone(seg storage.SealedInfo) bool {
	for _, s := range p.log.Sealed() {
		if s.Start == seg.Start {
			return s.End != seg.End
		}
	}
	return true
}

// upload copies the sealed segment's index and log into the bucket,
// each verified by the store's answer, and keeps a copy of the index
// beside the manifest. A segment uploaded again (a crash before the
// manifest listed it) gets the same keys.
func (p *Partition) upload(ctx context.Context, seg storage.SealedInfo, epoch uint64) (Remote, error) {
	start := time.Now()
	key := p.m.bucket.Key(p.ref.segmentKey(epoch, seg.Start))
	logf, err := os.Open(seg.LogPath)
	if err != nil {
		return Remote{}, fmt.Errorf("open segment for upload: %w", err)
	}
	defer logf.Close()
	idx, err := os.ReadFile(seg.IndexPath)
	if err != nil {
		return Remote{}, fmt.Errorf("read index for upload: %w", err)
	}
	if p.segmentGone(seg) {
		// Removed (retention, purge) since it was listed: the files
		// opened may be another segment's or gone.
		return Remote{}, errSegmentGone
	}
	if int64(len(idx)) != int64(seg.Records)*storage.IndexEntryBytes {
		return Remote{}, fmt.Errorf("index %s holds %d bytes, %d records expected", seg.IndexPath, len(idx), seg.Records)
	}
	meta := map[string]string{
		"start-offset": strconv.FormatUint(seg.Start, 10),
		"end-offset":   strconv.FormatUint(seg.End, 10),
		"records":      strconv.Itoa(seg.Records),
	}
	rctx, cancel := p.m.requestCtx(ctx)
	defer cancel()
	if _, err := p.m.bucket.Put(rctx, IndexKey(key), bytes.NewReader(idx), int64(len(idx)), meta); err != nil {
		return Remote{}, fmt.Errorf("upload index of segment %d: %w", seg.Start, err)
	}
	info, err := p.m.bucket.Put(rctx, key, logf, seg.Bytes, meta)
	if err != nil {
		return Remote{}, fmt.Errorf("upload segment %d: %w", seg.Start, err)
	}
	if err := fileio.WriteFileAtomic(p.indexPath(seg.Start), idx); err != nil {
		return Remote{}, fmt.Errorf("keep index of segment %d: %w", seg.Start, err)
	}
	p.m.met.uploadSeconds.observe(time.Since(start))
	return Remote{Start: seg.Start, End: seg.End, Bytes: seg.Bytes, Records: uint32(seg.Records),
		FirstTimestamp: seg.FirstTimestamp, LastTimestamp: seg.LastTimestamp, Key: key, ETag: info.ETag}, nil
}
