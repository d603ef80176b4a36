package partition

import (
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// openPartition opens partition id of tp and registers it (Plane.mu
// held); failures are added to errs. In cluster mode a replica found
// damaged at open (not a joining one, which starts empty) is registered
// broken, and the reason comes back: the caller starts its rebuild from
// the peers (rebuild.go).
func (p *Plane) openPartition(tp *topic, t catalog.TopicRef, id uint32, replicas []uint8, joining bool, errs *[]error) (rebuild error) {
	part := &partition{id: id, dir: p.PartitionDir(t, id), window: commit.NewWindow(p.opts.WindowClients)}
	opts := p.storageOptions(t.Settings, id)
	opts.DamageFound = func(d storage.Damage) { p.readDamage(t, id, d) }
	log, err := storage.Open(part.dir, opts)
	if err != nil {
		if errors.Is(err, storage.ErrCorrupt) && !joining && p.canRebuild() {
			// Cluster mode: the peers hold the data; rebuild from them.
			part.broken = err
			tp.parts[id] = part
			return err
		}
		if errors.Is(err, storage.ErrCorrupt) {
			p.log.Error("partition stopped: its data is corrupt and will not be served",
				"stream", t.StreamID, "topic", t.TopicID, "partition", id, "dir", part.dir, "err", err)
			part.broken = err
			tp.parts[id] = part
			return nil
		}
		*errs = append(*errs, fmt.Errorf("open partition %d/%d/%d: %w", t.StreamID, t.TopicID, id, err))
		tp.unopened[id] = struct{}{}
		return nil
	}
	if d := log.Damaged(); len(d) > 0 && !joining && p.canRebuild() {
		// Cluster mode: records were quarantined at open; the peers hold
		// them, so the whole replica is rebuilt from them.
		if err := log.Close(); err != nil {
			p.log.Warn("close damaged partition", "dir", part.dir, "err", err)
		}
		part.broken = damageError(d)
		tp.parts[id] = part
		return part.broken
	}
	p.logOpenDamage(t, id, part.dir, log.Damaged())
	if err := p.attachTier(t, part, log); err != nil {
		if cerr := log.Close(); cerr != nil {
			p.log.Warn("close partition", "dir", part.dir, "err", cerr)
		}
		*errs = append(*errs, fmt.Errorf("open partition %d/%d/%d remote tier: %w", t.StreamID, t.TopicID, id, err))
		tp.unopened[id] = struct{}{}
		return nil
	}
	if !p.attachCrypt(tp, part, log, errs) {
		return nil
	}
	part.log = log
	delete(tp.unopened, id)
	tp.parts[id] = part
	part.commit = p.mode.open(tp.ref, part, replicas, joining)
	part.bindTier()
	part.commit.WantPurge(t.PurgedAt)
	return nil
}

// storageOptions maps the topic settings to the storage options.
func (p *Plane) storageOptions(s wire.TopicSettings, id uint32) storage.Options {
	seg := int64(s.SegmentSize)
	if s.SegmentSize == 0 || s.SegmentSize > 1<<40 {
		seg = 0 // storage default
	}
	return storage.Options{
		Format:         commit.BatchFormat{PartitionID: uint64(id)},
		SegmentBytes:   seg,
		Preallocate:    s.PreallocateSegments,
		Fsync:          s.EnforceFsync,
		Held:           p.mode.held(),
		OffsetsFsync:   s.ConsumerOffsetFsync,
		FlushMessages:  uint64(s.MessagesRequiredToSave),
		FlushBytes:     s.SizeOfMessagesRequiredToSave,
		FlushInterval:  p.opts.FlushInterval,
		MaxRecordBytes: p.opts.MaxFrameBytes,
		VerifySealed:   p.opts.VerifySealed,
		Clock:          p.opts.Clock,
		Observer:       p.opts.StorageObserver,
		OnDisk:         p.onDisk,
	}
}
