package partition

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// CreatePartitions implements catalog.Data: it opens (creating or
// recovering) the partitions' logs. Existing open partitions are left as
// they are. A partition with damaged records opens with them quarantined
// and serves the rest (damage.go); one whose damage storage cannot locate
// (storage.CorruptError) is kept stopped (logged, requests to it fail)
// and is not an error, so start-up continues.
func (p *Plane) CreatePartitions(t catalog.TopicRef, ids []uint32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return storage.ErrClosed
	}
	tp := p.topics[t.Incarnation]
	if tp == nil {
		tp = &topic{ref: t, dir: p.TopicDir(t), parts: map[uint32]*partition{}, unopened: map[uint32]struct{}{}}
		p.topics[t.Incarnation] = tp
	}
	tp.ref.Settings = t.Settings
	var errs []error
	for _, id := range ids {
		if part, ok := tp.parts[id]; ok {
			// Open already (a metadata snapshot restored): a purge it
			// names may be new.
			if part.commit != nil {
				part.commit.WantPurge(t.PurgedAt)
			}
			continue
		}
		replicas := t.Placement[id]
		if !p.mode.holds(replicas) {
			continue // placed on other nodes
		}
		if reason := p.openPartition(tp, t, id, replicas, false, &errs); reason != nil {
			p.startRebuild(tp, id, reason)
		}
	}
	return errors.Join(errs...)
}

// SetReplicas implements catalog.Placer: after a replica move changed
// the replica list of partition id, this node opens an empty replica
// that waits for the group's leader to add it and send it the log (it
// joined the list), or drops its replica and removes its files (it left
// the list).
func (p *Plane) SetReplicas(t catalog.TopicRef, id uint32, replicas []uint8) error {
	held := p.mode.holds(replicas)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return storage.ErrClosed
	}
	tp := p.topics[t.Incarnation]
	_, open := tp.parts[id] // a nil tp holds nothing
	switch {
	case held && !open:
		if tp == nil {
			tp = &topic{ref: t, dir: p.TopicDir(t), parts: map[uint32]*partition{}, unopened: map[uint32]struct{}{}}
			p.topics[t.Incarnation] = tp
		}
		var errs []error
		p.openPartition(tp, t, id, replicas, true, &errs)
		p.mu.Unlock()
		if len(errs) == 0 {
			p.log.Info("partition replica added here; catching up from its leader", "stream", t.StreamID, "topic", t.TopicID, "partition", id)
		}
		return errors.Join(errs...)
	case !held && open:
		p.mu.Unlock()
		p.log.Info("partition replica moved away; removing it here", "stream", t.StreamID, "topic", t.TopicID, "partition", id)
		// The other replicas still read its objects in the bucket.
		return p.deletePartitions(t, []uint32{id}, false)
	}
	p.mu.Unlock()
	if held {
		p.mode.place(t, id, replicas)
	}
	return nil
}

// DeletePartitions implements catalog.Data: it closes the partitions and
// removes their data and offsets.
func (p *Plane) DeletePartitions(t catalog.TopicRef, ids []uint32) error {
	return p.deletePartitions(t, ids, true)
}

// deletePartitions closes the partitions and removes their files here;
// objects also deletes their objects in the remote tier (the partitions
// are gone, not moved to other nodes).
func (p *Plane) deletePartitions(t catalog.TopicRef, ids []uint32, objects bool) error {
	p.mode.drop(t, ids)
	p.mu.Lock()
	tp := p.topics[t.Incarnation]
	var victims []*partition
	for _, id := range ids {
		if tp != nil {
			delete(tp.unopened, id)
			if part, ok := tp.parts[id]; ok {
				victims = append(victims, part)
				delete(tp.parts, id)
			}
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, part := range victims {
		p.closeTier(part, objects)
		if part.log != nil {
			if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
				p.log.Warn("close deleted partition", "dir", part.dir, "err", err)
			}
		}
	}
	for _, id := range ids {
		if err := os.RemoveAll(p.PartitionDir(t, id)); err != nil {
			errs = append(errs, fmt.Errorf("remove partition %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// The plane follows topic option updates.
var _ catalog.SettingsUpdater = (*Plane)(nil)

// UpdateTopic implements catalog.SettingsUpdater: the topic's new
// settings take effect at the next retention pass (and, with a remote
// tier, the next upload pass); settings fixed at creation (segment size,
// durability) are not changed for the partitions already open.
func (p *Plane) UpdateTopic(t catalog.TopicRef) error {
	p.mu.Lock()
	tp := p.topics[t.Incarnation]
	if tp != nil {
		tp.ref.Settings = t.Settings
		p.tierLocalRetention(tp)
	}
	p.mu.Unlock()
	if tp != nil && p.opts.Tier != nil {
		p.opts.Tier.Notify()
	}
	return nil
}

// DeleteTopic implements catalog.Data: it closes every partition of the
// topic incarnation and removes its directory (and the stream directory
// when it becomes empty).
func (p *Plane) DeleteTopic(t catalog.TopicRef) error {
	p.mu.Lock()
	tp := p.topics[t.Incarnation]
	delete(p.topics, t.Incarnation)
	p.mu.Unlock()
	if tp != nil {
		ids := make([]uint32, 0, len(tp.parts))
		for id := range tp.parts {
			ids = append(ids, id)
		}
		p.mode.drop(t, ids)
		for _, part := range tp.parts {
			p.closeTier(part, false)
			if part.log != nil {
				if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					p.log.Warn("close deleted partition", "dir", part.dir, "err", err)
				}
			}
		}
	}
	if p.opts.Tier != nil && !p.mode.held() {
		if err := p.opts.Tier.DeleteTopic(t.StreamID, t.TopicID, t.Incarnation); err != nil {
			p.log.Warn("remote tier: queue deletion of a deleted topic's objects", "stream", t.StreamID, "topic", t.TopicID, "err", err)
		}
	}
	if err := os.RemoveAll(p.TopicDir(t)); err != nil {
		return fmt.Errorf("remove topic %d/%d: %w", t.StreamID, t.TopicID, err)
	}
	p.removeIfEmpty(filepath.Join(p.opts.Dir, strconv.FormatUint(uint64(t.StreamID), 10), topicsDirName))
	p.removeIfEmpty(filepath.Join(p.opts.Dir, strconv.FormatUint(uint64(t.StreamID), 10)))
	return nil
}

// removeIfEmpty removes an empty directory; anything else is left alone.
func (p *Plane) removeIfEmpty(dir string) {
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return // not empty, or busy: fine
	}
}

// PurgeTopic implements catalog.Data: every partition of the topic loses
// its messages and consumer offsets; offsets restart at 0. In cluster mode
// the purge goes through each partition's raft log (replicated/purge.go).
func (p *Plane) PurgeTopic(t catalog.TopicRef) error {
	var errs []error
	for _, part := range p.topicParts(t) {
		if part.commit != nil {
			errs = append(errs, part.commit.Purge(t.PurgedAt))
		}
	}
	return errors.Join(errs...)
}

// DeleteSegments implements catalog.Data: it removes the oldest count
// sealed segments of one partition. An unknown partition is not an error
// (idempotence); the metadata plane checks existence.
func (p *Plane) DeleteSegments(t catalog.TopicRef, partitionID uint32, count uint32) error {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.commit == nil {
		return nil
	}
	if part.tier != nil {
		return p.deleteTieredSegments(part, int(min(count, 1<<30)))
	}
	return part.commit.DeleteSegments(int(min(count, 1<<30)))
}

// DeleteGroupOffsets implements catalog.Data: the group's offsets are
// removed from every partition of the topic.
func (p *Plane) DeleteGroupOffsets(t catalog.TopicRef, group uint32) error {
	var errs []error
	for _, part := range p.topicParts(t) {
		if part.commit != nil {
			errs = append(errs, part.commit.DeleteGroupOffsets(group))
		}
	}
	return errors.Join(errs...)
}

// Holds reports whether this node holds partition id of t (its replica,
// in cluster mode), so that PartitionStats reports it from here.
func (p *Plane) Holds(t catalog.TopicRef, id uint32) bool {
	part := p.lookup(t.Incarnation, id)
	return part != nil && part.log != nil
}

// PartitionStats implements catalog.Data.
func (p *Plane) PartitionStats(t catalog.TopicRef, partitionID uint32) catalog.PartitionStats {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.log == nil {
		return catalog.PartitionStats{}
	}
	st := part.stats()
	out := catalog.PartitionStats{Messages: st.Messages, SizeBytes: st.Bytes, Segments: uint32(st.Segments)}
	if st.NextOffset > 0 {
		out.CurrentOffset = st.NextOffset - 1
	}
	return out
}
