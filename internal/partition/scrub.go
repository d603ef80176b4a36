package partition

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Scrubbing. A background loop (storage.scrub_interval) re-verifies the
// sealed segments and indexes of every partition this node holds, one
// partition at a time, reading at a bounded rate (storage.Partition.Scrub),
// so that rot is found before a consumer reads it. VERIFY_PARTITION
// (verify.go) runs the same verification on demand, unthrottled. Damage
// found by either is quarantined by storage (never served as data from
// then on), logged here once per range, counted (ScrubObserver), in
// cluster mode repaired by rebuilding the replica from its peers
// (RebuildDamaged, rebuild.go), and handed to Options.OnDamage.

// Scrub rate bounds when Options.ScrubRate is 0: the pass spreads over the
// interval, but reads at least MinAutoScrubRate and at most
// MaxAutoScrubRate bytes per second.
const (
	MinAutoScrubRate = 1 << 20
	MaxAutoScrubRate = 16 << 20
)

// scrubStartDelay is the longest wait before the first pass after start,
// so that a node restarted more often than the interval still scrubs.
const scrubStartDelay = time.Minute

// damageSourceScrub is the DamageFound source of the scrubber and of
// VERIFY_PARTITION (metrics.DamageSourceScrub).
const damageSourceScrub = "scrub"

// ScrubTotals is what one pass over the partitions checked and found.
type ScrubTotals struct {
	Partitions int
	Segments   int
	Records    int64
	Bytes      int64
	// New counts the damaged ranges found by the pass.
	New int
}

// scrubJob is one partition of a pass.
type scrubJob struct {
	ref  catalog.TopicRef
	part *partition
}

// scrubLoop runs RunScrub once per interval until ctx ends: the first
// pass after min(interval, scrubStartDelay), each next one an interval
// after the previous one began (at once when a pass took longer).
func (p *Plane) scrubLoop(ctx context.Context, interval time.Duration) {
	defer p.wg.Done()
	wait := min(interval, scrubStartDelay)
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		if _, err := p.RunScrub(ctx, interval); err != nil {
			return // ctx ended
		}
		if p.opts.ScrubObserver != nil {
			p.opts.ScrubObserver.ScrubPass()
		}
		wait = max(interval-time.Since(start), 0)
	}
}

// RunScrub verifies every open partition once, one at a time, at
// Options.ScrubRate, or when that is 0 at the rate that spreads the data
// this node holds over interval (within MinAutoScrubRate and
// MaxAutoScrubRate). It returns early only when ctx ends (its error).
// A partition that fails to verify is logged and skipped.
func (p *Plane) RunScrub(ctx context.Context, interval time.Duration) (ScrubTotals, error) {
	jobs := p.scrubJobs()
	rate := p.opts.ScrubRate
	if rate <= 0 {
		rate = autoScrubRate(jobBytes(jobs), interval)
	}
	var tot ScrubTotals
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return tot, err
		}
		rep, err := p.scrubPartition(ctx, j.ref, j.part, rate)
		switch {
		case ctx.Err() != nil:
			return tot, ctx.Err()
		case errors.Is(err, storage.ErrClosed):
			continue // deleted or closed meanwhile
		case err != nil:
			p.log.Warn("scrub of a partition failed", "stream", j.ref.StreamID, "topic", j.ref.TopicID, "partition", j.part.id, "err", err)
		}
		tot.Partitions++
		tot.Segments += rep.Segments
		tot.Records += rep.Records
		tot.Bytes += rep.Bytes
		tot.New += len(rep.New)
	}
	return tot, nil
}

// scrubJobs lists the open partitions, in (stream, topic, partition)
// order.
func (p *Plane) scrubJobs() []scrubJob {
	var jobs []scrubJob
	p.mu.RLock()
	for _, tp := range p.topics {
		for _, part := range tp.parts {
			if part.log != nil {
				jobs = append(jobs, scrubJob{ref: tp.ref, part: part})
			}
		}
	}
	p.mu.RUnlock()
	slices.SortFunc(jobs, func(a, b scrubJob) int {
		return cmp.Or(cmp.Compare(a.ref.StreamID, b.ref.StreamID), cmp.Compare(a.ref.TopicID, b.ref.TopicID),
			cmp.Compare(a.ref.Incarnation, b.ref.Incarnation), cmp.Compare(a.part.id, b.part.id))
	})
	return jobs
}

// jobBytes is the size of the logs of jobs.
func jobBytes(jobs []scrubJob) uint64 {
	var total uint64
	for _, j := range jobs {
		total += j.part.log.Stats().Bytes
	}
	return total
}

// autoScrubRate is the read rate that verifies total bytes once per
// interval, within MinAutoScrubRate..MaxAutoScrubRate.
func autoScrubRate(total uint64, interval time.Duration) int64 {
	secs := uint64(max(interval/time.Second, 1))
	return int64(min(max(total/secs, MinAutoScrubRate), MaxAutoScrubRate))
}

// scrubPartition verifies one partition at rate bytes per second (0:
// unlimited) and reports the damage it newly found: one log line per
// range, the observer, the repair hook.
func (p *Plane) scrubPartition(ctx context.Context, ref catalog.TopicRef, part *partition, rate int64) (storage.ScrubReport, error) {
	rep, err := part.log.Scrub(ctx, rate)
	if o := p.opts.ScrubObserver; o != nil {
		o.ScrubRead(rep.Bytes)
		o.DamageFound(damageSourceScrub, len(rep.New))
	}
	if len(rep.New) == 0 {
		return rep, err
	}
	for _, d := range rep.New {
		p.log.Error("damaged records found and quarantined: they are no longer served",
			"stream", ref.StreamID, "topic", ref.TopicID, "partition", part.id,
			"file", d.Path, "pos", d.Pos, "bytes", d.Len, "first_offset", d.First, "last_offset", d.Last,
			"reason", d.Reason, "source", damageSourceScrub)
	}
	// Cluster mode: the replica is rebuilt from its peers (rebuild.go);
	// a single node keeps serving what is intact.
	p.RebuildDamaged(ref, part.id, rep.New)
	if p.opts.OnDamage != nil {
		p.opts.OnDamage(ref, part.id, slices.Clone(rep.New))
	}
	return rep, err
}
