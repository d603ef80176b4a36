package partition

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Rebuilding a damaged replica (cluster mode, docs/CLUSTER.md "Damaged
// replicas"). A replica whose files fail verification — a segment record
// or index at open (*storage.CorruptError), a raft log that is corrupt or
// lost entries it acknowledged, a raft snapshot or purge record that does
// not decode, segments behind the raft log, raft's own ErrLogLost while
// running, or damage reported later (ReplicaDamaged) — is not repaired in
// place: its raft state cannot be trusted, and raft forbids a member to
// forget what it acknowledged. So the node
//
//  1. stops serving it (requests to the partition are forwarded to the
//     group's leader, as on any node that does not lead it), hands the
//     leadership over first if it led the group, and stops the group here;
//  2. asks the group's leader to take it out of the group's raft
//     configuration (replicated.Set.Leave), again until it is done;
//  3. only then wipes the replica (segments, raft log, offsets: all of it
//     is replicated state) and opens an empty one that waits for the
//     leader, as a replica added by a move does;
//  4. the leader's rebalance executor adds it back as a learner (it wants
//     every listed, live node to be a voter), which catches up from the
//     leader's snapshot and log and is promoted only once it holds the
//     leader's log. A learner neither votes nor leads.

// errRebuilding is the state of a partition whose replica is being
// rebuilt here: requests are forwarded to the leader.
var errRebuilding = errors.New("partition: this replica is damaged and being rebuilt from its peers")

// Bounds of the wait for a rebuilt replica to become a voter, only for
// the "rebuilt" log line and metric.
const rebuiltPoll = 500 * time.Millisecond

// ReplicaDamaged reports damage found in this node's replica of partition
// id of t while it runs (a scrub, a read): in cluster mode the replica is
// rebuilt from its peers (see above); false when it is not (single node,
// not held here, already being rebuilt, or the plane closed).
func (p *Plane) ReplicaDamaged(t catalog.TopicRef, id uint32, reason error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	tp := p.topics[t.Incarnation]
	if tp == nil || tp.parts[id] == nil {
		return false
	}
	return p.startRebuild(tp, id, reason)
}

// RebuildGroup is ReplicaDamaged for the partition of raft group g (its
// group stopped here with replication.ErrLogLost).
func (p *Plane) RebuildGroup(g replication.GroupID, reason error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range p.topics {
		for id := range tp.parts {
			if replicated.GroupID(tp.ref, id) == g {
				return p.startRebuild(tp, id, reason)
			}
		}
	}
	return false
}

// startRebuild marks partition id of tp as being rebuilt and starts its
// rebuild (Plane.mu held); false when it is not rebuilt.
func (p *Plane) startRebuild(tp *topic, id uint32, reason error) bool {
	if p.closed || !p.canRebuild() {
		return false
	}
	old := tp.parts[id]
	if old != nil && errors.Is(old.broken, errRebuilding) {
		return false // being left and wiped already
	}
	if p.rebuilding == nil {
		p.rebuilding = map[replication.GroupID]uint64{}
	}
	ref := tp.ref
	g := replicated.GroupID(ref, id)
	// A rebuild still waiting for its new replica to catch up is
	// superseded: that replica failed too.
	p.rebuildGen++
	gen := p.rebuildGen
	p.rebuilding[g] = gen
	p.log.Warn("partition replica damaged; rebuilding from its peers",
		"stream", ref.StreamID, "topic", ref.TopicID, "partition", id, "dir", p.PartitionDir(ref, id), "reason", reason)
	if o := p.opts.RebuildObserver; o != nil {
		o.ReplicaDamaged()
	}
	m := p.mode.(replicatedMode)
	replicas := ref.Placement[id]
	if pref := m.set.Preference(g); pref != nil {
		replicas = make([]uint8, len(pref))
		for i, n := range pref {
			replicas[i] = uint8(n)
		}
	}
	// The damaged replica stops serving here at once: a stopped stand-in
	// replaces it, so this node forwards the partition's requests to its
	// leader; handlers holding the old one finish on it.
	stand := &partition{id: id, dir: p.PartitionDir(ref, id), broken: errRebuilding, window: commit.NewWindow(p.opts.WindowClients)}
	tp.parts[id] = stand
	ctx, cancel := context.WithCancel(context.Background())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		go func() {
			select {
			case <-p.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		p.rebuild(ctx, m, ref, id, gen, old, stand, replicas)
	}()
	return true
}

// rebuild carries out the rebuild of partition id of ref (see above): old
// is the damaged partition (nil or without a log when it did not open),
// stand its stopped stand-in.
func (p *Plane) rebuild(ctx context.Context, m replicatedMode, ref catalog.TopicRef, id uint32, gen uint64, old, stand *partition, replicas []uint8) {
	g := replicated.GroupID(ref, id)
	done := func() {
		p.mu.Lock()
		if p.rebuilding[g] == gen {
			delete(p.rebuilding, g)
		}
		p.mu.Unlock()
	}
	leader, left, err := m.set.Leave(ctx, ref, id)
	if err != nil {
		done()
		p.log.Error("partition replica damaged and not rebuilt; it stays stopped on this node (the other replicas serve it)",
			"stream", ref.StreamID, "topic", ref.TopicID, "partition", id, "err", err)
		return
	}
	fresh, err := p.reopenEmpty(ref, id, old, stand, replicas)
	if err != nil {
		done()
		p.log.Error("partition replica damaged and not rebuilt; it stays stopped on this node (the other replicas serve it)",
			"stream", ref.StreamID, "topic", ref.TopicID, "partition", id, "err", err)
		return
	}
	p.log.Info("partition replica wiped; catching up from its leader as a learner",
		"stream", ref.StreamID, "topic", ref.TopicID, "partition", id, "removed_by", uint64(leader))
	p.awaitRebuilt(ctx, ref, id, g, fresh, left)
	done()
}

// reopenEmpty closes and wipes the damaged replica and opens an empty one
// in its place that waits for the group's leader (a joining replica).
func (p *Plane) reopenEmpty(ref catalog.TopicRef, id uint32, old, stand *partition, replicas []uint8) (*partition, error) {
	if old != nil {
		p.closeTier(old, false)
	}
	if old != nil && old.log != nil {
		if err := old.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
			p.log.Warn("close damaged partition", "dir", old.dir, "err", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, storage.ErrClosed
	}
	tp := p.topics[ref.Incarnation]
	if tp == nil || tp.parts[id] != stand {
		return nil, errors.New("the partition was deleted or moved away meanwhile")
	}
	if err := os.RemoveAll(stand.dir); err != nil {
		return nil, fmt.Errorf("wipe %s: %w", stand.dir, err)
	}
	delete(tp.parts, id)
	var errs []error
	t := tp.ref
	p.openPartition(tp, t, id, replicas, true, &errs)
	if err := errors.Join(errs...); err != nil {
		tp.parts[id] = stand
		return nil, err
	}
	return tp.parts[id], nil
}

// awaitRebuilt waits until this node is a voter of group g again (its
// replica caught up and was promoted) in a configuration applied at or
// after index left (the removal: the snapshot a learner starts from may
// be older and still list it), then logs it and counts it.
// It gives up when fresh is no longer the partition here (deleted, moved
// away, or found damaged again).
func (p *Plane) awaitRebuilt(ctx context.Context, ref catalog.TopicRef, id uint32, g replication.GroupID, fresh *partition, left uint64) {
	self := p.opts.Replicator.Self()
	start := time.Now()
	t := time.NewTicker(rebuiltPoll)
	defer t.Stop()
	for {
		if p.lookup(ref.Incarnation, id) != fresh {
			return
		}
		if v, ok := p.opts.Replicator.(interface {
			Status(replication.GroupID) (replication.View, bool)
		}); ok {
			if view, ok := v.Status(g); ok && slices.Contains(view.Voters, self) && view.Applied >= left && view.HasLeader {
				var bytes, msgs uint64
				if fresh.log != nil {
					st := fresh.log.Stats()
					bytes, msgs = st.Bytes, st.Messages
				}
				p.log.Info("partition replica rebuilt",
					"stream", ref.StreamID, "topic", ref.TopicID, "partition", id, "source_leader", uint64(view.Leader),
					"bytes", bytes, "messages", msgs, "raft_index", view.Applied, "took", time.Since(start).Round(time.Millisecond))
				if o := p.opts.RebuildObserver; o != nil {
					o.ReplicaRebuilt()
				}
				return
			}
		} else {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ServeLeave answers a leave call of another node whose replica of a
// partition this node leads is damaged (replicated.Set.ServeLeave); a
// single node refuses it.
func (p *Plane) ServeLeave(ctx context.Context, from replication.NodeID, payload []byte) ([]byte, error) {
	m, ok := p.mode.(replicatedMode)
	if !ok {
		return nil, replicated.ErrNoRebuild
	}
	return m.set.ServeLeave(ctx, from, payload)
}

// RebuildDamaged is ReplicaDamaged for the damage a scrub found in
// partition id of t (the shape of the scrubber's repair hook): in
// cluster mode the whole replica is rebuilt from its peers.
func (p *Plane) RebuildDamaged(t catalog.TopicRef, id uint32, found []storage.Damage) {
	if len(found) > 0 {
		p.ReplicaDamaged(t, id, damageError(found))
	}
}
