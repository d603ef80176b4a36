package partition

import (
	"context"
	"errors"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/tier"
)

// The remote tier (Options.Tier): a partition opened with it
// has part.tier, through which reads, bounds, stats, retention, segment
// removal and purges see one log across local disk and the bucket. The
// methods below are the one place that chooses between the two.

// attachTier opens the remote tier of a partition whose log just opened.
// In cluster mode it is tied to the partition's raft group through
// groupTier, which finds the replica once the mode has made it.
func (p *Plane) attachTier(t catalog.TopicRef, part *partition, log *storage.Partition) error {
	if p.opts.Tier == nil {
		return nil
	}
	var cl tier.Cluster
	if p.mode.held() {
		cl = groupTier{part}
	}
	ref := tier.PartitionRef{StreamID: t.StreamID, TopicID: t.TopicID, Incarnation: t.Incarnation, Partition: part.id}
	tp, err := p.opts.Tier.Open(ref, part.dir, log, commit.BatchFormat{PartitionID: uint64(part.id)},
		p.opts.Tier.LocalRetentionFor(t.Settings.LocalRetentionSize, t.Settings.LocalRetentionAge), cl)
	if err != nil {
		return err
	}
	part.tier = tp
	return nil
}

// bounds is the log's first offset and next offset.
func (part *partition) bounds() (first, next uint64) {
	if part.tier != nil {
		return part.tier.Bounds()
	}
	return part.log.Bounds()
}

// stats are the log's counters.
func (part *partition) stats() storage.Stats {
	if part.tier != nil {
		st, _ := part.tier.Stats()
		return st
	}
	return part.log.Stats()
}

// read fills rr with the stored records from start (storage.Partition.Read).
func (part *partition) read(ctx context.Context, rr *storage.ReadResult, start, count uint64, maxBytes int64) error {
	if part.tier != nil {
		return part.tier.Read(ctx, rr, start, count, maxBytes)
	}
	return part.log.Read(rr, start, count, maxBytes)
}

// offsetForTimestamp is the first offset stored at or after ts.
func (part *partition) offsetForTimestamp(ctx context.Context, ts uint64) (uint64, bool, error) {
	if part.tier != nil {
		return part.tier.OffsetForTimestamp(ctx, ts)
	}
	return part.log.OffsetForTimestamp(ts)
}

// retain applies retention to the whole log: both tiers, or the
// partition's committer (which compacts a replicated log first).
func (part *partition) retain(r storage.Retention) (storage.Removed, error) {
	if part.tier != nil {
		return part.tier.Retain(r)
	}
	return part.commit.Retain(r)
}

// deleteTieredSegments is DELETE_SEGMENTS of a partition with a remote
// tier: the oldest k segments of both tiers. In cluster mode the metadata
// effect runs on the replication loop, which the compaction before a
// local removal waits for, so it runs on its own goroutine there.
func (p *Plane) deleteTieredSegments(part *partition, k int) error {
	if !p.mode.held() {
		_, err := part.tier.DeleteOldestSegments(k)
		return err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if _, err := part.tier.DeleteOldestSegments(k); err != nil {
			p.log.Warn("delete segments", "dir", part.dir, "err", err)
		}
	}()
	return nil
}

// groupTier is tier.Cluster over a partition's replica (cluster mode).
// The replica is made after the remote tier opens (bindTier): until
// then it neither leads nor publishes.
type groupTier struct{ part *partition }

// bindTier records the replica the mode just made for the partition,
// for its remote tier (read by other goroutines, hence atomic).
func (part *partition) bindTier() {
	if r, ok := part.commit.(*replicated.Replica); ok {
		part.replica.Store(r)
	}
}

// replica returns the partition's replica, or nil.
func (g groupTier) replica() *replicated.Replica { return g.part.replica.Load() }

// Leads implements tier.Cluster.
func (g groupTier) Leads() bool {
	r := g.replica()
	return r != nil && r.Leads()
}

// Publish implements tier.Cluster.
func (g groupTier) Publish(ctx context.Context, record []byte) error {
	r := g.replica()
	if r == nil {
		return errors.New("partition has no replica")
	}
	return r.PublishTier(ctx, record)
}

// DropOldest implements tier.Cluster.
func (g groupTier) DropOldest(k int, keep uint64) (storage.Removed, error) {
	r := g.replica()
	if r == nil {
		return storage.Removed{}, nil
	}
	return r.DropOldest(k, keep)
}

// purge deletes every message of the whole log (epoch: see
// Plane.purgePartition).
func (part *partition) purge(epoch uint64) error {
	if part.tier != nil {
		return part.tier.Purge(epoch)
	}
	return part.log.Purge()
}

// closeTier stops the remote tier's work on the partition (closing or
// deleting it); deleted also queues its objects for deletion.
func (p *Plane) closeTier(part *partition, deleted bool) {
	if part.tier == nil {
		return
	}
	if !deleted {
		part.tier.Close()
		return
	}
	if err := part.tier.Delete(); err != nil {
		p.log.Warn("remote tier: queue deletion of a deleted partition's objects", "dir", part.dir, "err", err)
	}
}

// tierLocalRetention refreshes each tiered partition's local retention
// from its topic's options (they may have been updated).
func (p *Plane) tierLocalRetention(tp *topic) {
	if p.opts.Tier == nil {
		return
	}
	keep := p.opts.Tier.LocalRetentionFor(tp.ref.Settings.LocalRetentionSize, tp.ref.Settings.LocalRetentionAge)
	for _, part := range tp.parts {
		if part.tier != nil {
			part.tier.SetLocalRetention(keep)
		}
	}
}

// remoteReadFailed reports whether err is a failed read of the remote
// tier, which the poll answers with an error status (never other bytes).
func remoteReadFailed(err error) bool { return errors.Is(err, tier.ErrRemoteRead) }

// PartitionTiers returns how one partition's bytes are split between
// local disk and the remote tier; ok is false when the partition is not
// held here or has no remote tier.
func (p *Plane) PartitionTiers(t catalog.TopicRef, partitionID uint32) (tiers tier.Tiers, ok bool) {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.tier == nil {
		return tier.Tiers{}, false
	}
	_, tiers = part.tier.Stats()
	return tiers, true
}

// Tier returns the remote tier's manager; nil when tiered storage is off.
func (p *Plane) Tier() *tier.Manager { return p.opts.Tier }
