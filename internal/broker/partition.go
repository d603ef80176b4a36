package broker

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition"
	"github.com/iggo-dev/iggo/internal/replication"
)

// WithTopics supplies the catalog.Topics of the partition plane: f
// receives the plane (its catalog.Data) and returns the resolver. The
// metadata plane is that resolver in a full server; tests and tools
// without it pass a fake (internal/catalog/catalogtest).
func WithTopics(f func(catalog.Data) catalog.Topics) Option {
	return func(o *options) { o.topics = f }
}

// WithRetentionInterval overrides data_maintenance.messages (how often
// retention runs; negative disables the loop).
func WithRetentionInterval(d time.Duration) Option {
	return func(o *options) { o.retention = d }
}

// newPartitions builds the partition plane over {system.path}/streams. It
// exists before the metadata store opens, because replaying the metadata
// journal opens every partition through catalog.Data; New registers its
// handlers and gives it the topic resolver afterwards.
func (b *Broker) newPartitions() error {
	retention := b.cfg.DataMaintenance.RetentionInterval()
	if b.opts.retention != 0 {
		retention = b.opts.retention
	}
	cipher, err := b.cfg.System.Encryption.Cipher()
	if err != nil {
		return err
	}
	po := partition.Options{
		Dir:               filepath.Join(b.cfg.System.Path, partition.StreamsDirName),
		Logger:            b.log.With("component", "partition"),
		Clock:             b.opts.now,
		MaxFrameBytes:     int64(b.cfg.MessageBus.MaxMessageSize),
		RetentionInterval: retention,
		StorageObserver:   b.obs.metrics,
		Cipher:            cipher,
		RebuildObserver:   b.obs.metrics,
		ScrubInterval:     b.cfg.Storage.ScrubInterval.Std(),
		ScrubRate:         int64(b.cfg.Storage.ScrubRate),
		ScrubObserver:     b.obs.metrics,
	}
	if b.clusterEnabled() {
		// The replication host starts after the plane (openCluster); the
		// plane adds its groups only once metadata opens, after that.
		po.Replicator = partitionReplicator{b}
		po.ClusterID = clusterID(b.cfg.Cluster.Name)
		po.Forwarder = partitionForwarder{b}
		po.LogStorage = func(dir string) (replication.LogStorage, error) {
			// Partition logs are written without fsync: a reply means
			// held by a quorum, as in the reference (docs/CLUSTER.md).
			return b.raftStorage(dir, false)
		}
	}
	if po.Tier, err = b.openTier(); err != nil {
		return err
	}
	parts, err := partition.New(po)
	if err != nil {
		if po.Tier != nil {
			po.Tier.Close()
		}
		return fmt.Errorf("partition plane: %w", err)
	}
	b.parts = parts
	b.tier = po.Tier
	return nil
}

// Partitions is the partition plane (catalog.Data for the metadata plane).
func (b *Broker) Partitions() *partition.Plane { return b.parts }

// closePartitions flushes and closes every partition (after the
// transports stopped).
func (b *Broker) closePartitions() error {
	if b.parts == nil {
		return nil
	}
	err := b.parts.Close()
	if b.tier != nil {
		// After the plane: it stops each partition's uploads first.
		err = errors.Join(err, b.tier.Close())
	}
	if err != nil {
		return fmt.Errorf("close partitions: %w", err)
	}
	return nil
}

// sweepOrphans removes partition data left by deletions a crash
// interrupted (partition.Plane.SweepOrphans). It runs once, right after
// the metadata store replayed its log, and only when the metadata plane
// both drives the broker's own partition plane and resolves its topics:
// with WithData the plane never hears of the live topics, and with
// WithTopics a test catalog creates partitions after New, so sweeping
// would remove live data. A failed sweep is logged; start-up continues,
// since orphans only cost disk space.
func (b *Broker) sweepOrphans() {
	if b.opts.data != nil || b.opts.topics != nil {
		return
	}
	removed, err := b.parts.SweepOrphans()
	if err != nil {
		b.log.Warn("sweep of orphaned partition data incomplete", "removed", removed, "err", err)
		return
	}
	if removed > 0 {
		b.log.Info("orphaned partition data removed", "directories", removed)
	}
}
