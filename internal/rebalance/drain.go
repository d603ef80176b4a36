package rebalance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
)

// drainLogEvery is the period of a drain's progress line.
const drainLogEvery = 5 * time.Second

// Removal is what removing a node from the cluster takes (CheckRemoval).
type Removal struct {
	// Movable counts the partitions whose replica on the node can move
	// to another node (Drain moves them).
	Movable int
	// Stuck are the partitions no other node can take a replica of:
	// every other node holds one already. Only an unreachable node may
	// leave them; they then run one replica short until a node takes it.
	Stuck []metadata.PartitionPlacement
}

// CheckRemoval tells whether node can leave the cluster, on the metadata
// leader. A reachable node's replicas are moved away first (Drain), so
// the last holder of a partition never leaves; it fails with an error
// wrapping ErrNoRoom when the other nodes cannot hold the replication
// factor of a partition node holds (add a node first, or stop it). An
// unreachable node's replicas move only where its partition's other
// replicas are a quorum: otherwise it fails with ErrLastReplica (node
// holds the only replica) or ErrNoQuorum. The other nodes counted are
// those of the cluster that are not dead (unreachable for longer than
// ReplaceDeadAfter) nor being drained.
func (p *Planner) CheckRemoval(ctx context.Context, node uint8) (Removal, error) {
	if !p.cfg.Cluster.Leader() {
		return Removal{}, fmt.Errorf("remove node %d: %w", node, replication.ErrNotLeader)
	}
	p.mu.Lock()
	v, err := p.view(ctx)
	p.mu.Unlock()
	if err != nil {
		return Removal{}, err
	}
	alive := false
	for _, n := range v.nodes {
		if n.ID == node {
			alive = n.Alive
		}
	}
	others := 0
	for _, n := range v.nodes {
		if n.ID != node && v.allowed[n.ID] {
			others++
		}
	}
	var rm Removal
	for _, pp := range v.pls {
		if !holds(pp, node) {
			continue
		}
		if len(pp.Target) > 0 && !slices.Contains(pp.Target, node) {
			rm.Movable++ // a move in progress takes the replica away already
			continue
		}
		rf := len(pp.Replicas)
		if !alive && rf-1 < quorum(rf) {
			// Without the node the group has no quorum: no leader can
			// move the replica or take the node out.
			if len(holders(pp)) == 1 {
				return rm, fmt.Errorf("%w: partition %d of topic %d in stream %d has its only replica on node %d, which is unreachable", ErrLastReplica, pp.Partition, pp.Ref.TopicID, pp.Ref.StreamID, node)
			}
			return rm, fmt.Errorf("%w: partition %d of topic %d in stream %d has %d replicas, so without the one on unreachable node %d it has no quorum: bring the node back first", ErrNoQuorum, pp.Partition, pp.Ref.TopicID, pp.Ref.StreamID, rf, node)
		}
		if movable(v, pp, node) {
			rm.Movable++
			continue
		}
		if alive {
			return rm, fmt.Errorf("%w: partition %d of topic %d in stream %d has %d replicas and the other %d nodes hold one each already: add a node first, or stop node %d to remove it anyway (the partitions it leaves then run one replica short until a node takes them)",
				ErrNoRoom, pp.Partition, pp.Ref.TopicID, pp.Ref.StreamID, rf, others, node)
		}
		rm.Stuck = append(rm.Stuck, pp)
	}
	return rm, nil
}

// holders is the union of pp's replica and target lists.
func holders(pp metadata.PartitionPlacement) []uint8 {
	out := slices.Clone(pp.Replicas)
	for _, r := range pp.Target {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// movable reports whether a node of the cluster other than node that may
// take replicas (allowed, reachable or not) holds no replica of pp.
func movable(v *view, pp metadata.PartitionPlacement, node uint8) bool {
	for _, n := range v.nodes {
		if n.ID != node && v.allowed[n.ID] && !holds(pp, n.ID) {
			return true
		}
	}
	return false
}

// Drain moves every movable replica of node to other nodes, on the
// metadata leader, and waits until node holds only replicas no other
// node can take (returned as stuck), or until ctx ends. Progress is
// logged every few seconds. While the drain holds (until release is
// called, also after an error) node takes no new replica and the
// Planner keeps moving its replicas away: call release once node left
// the cluster, or gave up removing it.
func (p *Planner) Drain(ctx context.Context, node uint8) (stuck []metadata.PartitionPlacement, release func(), err error) {
	p.mu.Lock()
	p.draining[node]++
	p.wanted = true
	p.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			p.mu.Lock()
			if p.draining[node]--; p.draining[node] <= 0 {
				delete(p.draining, node)
			}
			p.mu.Unlock()
			p.Wake()
		})
	}
	start, logged := time.Now(), time.Now()
	p.log.Info("draining node: moving its replicas to other nodes", "replica_id", node)
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		if !p.cfg.Cluster.Leader() {
			return nil, release, fmt.Errorf("drain node %d: %w", node, replication.ErrNotLeader)
		}
		p.mu.Lock()
		v, err := p.view(ctx)
		var r Result
		if err == nil {
			r, err = p.round(ctx, v)
		}
		p.mu.Unlock()
		if err != nil {
			return nil, release, fmt.Errorf("drain node %d: %w", node, err)
		}
		left := 0
		stuck = stuck[:0]
		for _, pp := range v.pls {
			if !holds(pp, node) {
				continue
			}
			if len(pp.Target) == 0 && !movable(v, pp, node) {
				stuck = append(stuck, pp)
				continue
			}
			left++
		}
		if left == 0 {
			p.log.Info("node drained", "replica_id", node, "took", time.Since(start).Round(time.Millisecond), "stuck", len(stuck))
			return stuck, release, nil
		}
		if time.Since(logged) >= drainLogEvery {
			logged = time.Now()
			var down []uint8
			for _, n := range v.nodes {
				if v.down[n.ID] {
					down = append(down, n.ID)
				}
			}
			p.log.Info("draining node", "replica_id", node, "partitions_left", left, "moves_in_progress", r.InProgress, "unreachable_nodes", down)
		}
		select {
		case <-ctx.Done():
			return nil, release, fmt.Errorf("%w: node %d: %d partitions still hold a replica there: %v", ErrDrainIncomplete, node, left, ctx.Err())
		case <-p.stopped:
			return nil, release, fmt.Errorf("drain node %d: %w", node, replication.ErrStopped)
		case <-t.C:
		}
	}
}
