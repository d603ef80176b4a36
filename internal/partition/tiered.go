package partition

import (
	"context"
	"errors"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/tier"
)

// The remote tier (Options.Tier, single node): a partition opened with it
// has part.tier, through which reads, bounds, stats, retention, segment
// removal and purges see one log across local disk and the bucket. The
// methods below are the one place that chooses between the two.

// attachTier opens the remote tier of a partition whose log just opened.
func (p *Plane) attachTier(t catalog.TopicRef, part *partition, log *storage.Partition) error {
	if p.opts.Tier == nil || p.mode.held() {
		return nil
	}
	ref := tier.PartitionRef{StreamID: t.StreamID, TopicID: t.TopicID, Incarnation: t.Incarnation, Partition: part.id}
	tp, err := p.opts.Tier.Open(ref, part.dir, log, commit.BatchFormat{PartitionID: uint64(part.id)},
		p.opts.Tier.LocalRetentionFor(t.Settings.LocalRetentionSize, t.Settings.LocalRetentionAge))
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

// retain applies retention to the whole log.
func (part *partition) retain(r storage.Retention) (storage.Removed, error) {
	if part.tier != nil {
		return part.tier.Retain(r)
	}
	return part.log.Retain(r)
}

// deleteOldestSegments removes the oldest k segments of the whole log.
func (part *partition) deleteOldestSegments(k int) (storage.Removed, error) {
	if part.tier != nil {
		return part.tier.DeleteOldestSegments(k)
	}
	return part.log.DeleteOldestSegments(k)
}

// purge deletes every message of the whole log.
func (part *partition) purge() error {
	if part.tier != nil {
		return part.tier.Purge()
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
