package broker

import (
	"context"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/rebalance"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// moves are the replica moves of a cluster node (package rebalance): the
// executor runs on every node for the partition groups it leads, the
// planner decides moves while this node leads the metadata group.
type moves struct {
	exec *rebalance.Executor
	plan *rebalance.Planner
}

// newMoves builds the executor and the planner over the metadata store
// (b.meta) and the host. The scans run every heartbeat interval, and at
// once when a placement entry applies (placementApplied).
func (b *Broker) newMoves() *moves {
	interval := b.cfg.Cluster.CommitBroadcastInterval.Std()
	rt := b.cfg.Cluster.RaftTiming()
	log := b.log.With("component", "rebalance")
	return &moves{
		exec: rebalance.NewExecutor(rebalance.ExecutorConfig{
			Self: replication.NodeID(b.cl.self.ReplicaID), Host: b.cl.node.host, Store: b.meta,
			Interval: interval, Logger: log,
			// raft gives a transfer up after an election timeout (at
			// most two, randomized).
			TransferTimeout: 2 * time.Duration(rt.ElectionTicks) * rt.Tick,
		}),
		plan: rebalance.NewPlanner(rebalance.PlannerConfig{
			Store: b.meta, Cluster: clusterNodes{b}, ReplaceDeadAfter: b.cfg.Cluster.ReplaceDeadAfter.Std(),
			Interval: interval, Logger: log,
		}),
	}
}

// placementApplied is the metadata store's OnPlacement hook: a move
// started, finished or was given up, so both sides look again now.
func (b *Broker) placementApplied() {
	if b.cl == nil || b.cl.moves == nil {
		return
	}
	b.cl.moves.exec.Wake()
	b.cl.moves.plan.Wake()
}

// runMoves runs the executor and the planner until ctx ends.
func (m *moves) run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.plan.Run(ctx)
	}()
	m.exec.Run(ctx)
	<-done
}

// clusterNodes is the planner's view of the nodes: the voters of the
// metadata group, their roster racks and their liveness here.
type clusterNodes struct{ b *Broker }

// Nodes implements rebalance.Cluster.
func (c clusterNodes) Nodes(ctx context.Context) ([]rebalance.NodeInfo, error) {
	h := c.b.cl.node.host
	v, ok := h.Status(replication.MetadataGroup)
	if !ok {
		return nil, replication.ErrUnknownGroup
	}
	peers, err := h.Peers(ctx)
	if err != nil {
		return nil, err
	}
	roster := c.b.cl.roster.get()
	self := replication.NodeID(c.b.cl.self.ReplicaID)
	out := make([]rebalance.NodeInfo, 0, len(v.Voters))
	for _, id := range v.Voters {
		n := rebalance.NodeInfo{ID: uint8(id), Alive: true}
		if id != self {
			p := peers[id]
			n.Alive, n.Silent = p.Alive, p.Silent
		}
		if i := slices.IndexFunc(roster, func(r config.ClusterNode) bool { return r.ReplicaID == uint8(id) }); i >= 0 {
			if roster[i].MetadataOnly {
				continue // holds no replicas: never a target, drained like a removed node
			}
			n.Rack = roster[i].Rack
		}
		out = append(out, n)
	}
	return out, nil
}

// Leader implements rebalance.Cluster.
func (c clusterNodes) Leader() bool { return c.b.metadataLeader() }

// clusterRebalance serves CLUSTER_REBALANCE on the metadata leader: it
// plans the first moves and answers how many it started.
func (b *Broker) clusterRebalance(x *dispatch.Exchange) {
	if len(x.Body) != 0 {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !b.adminAllowed(x) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	r, err := b.cl.moves.plan.Rebalance(ctx)
	if err != nil {
		b.log.Error("cluster rebalance failed", "err", err)
		x.Deny(adminCode(err))
		return
	}
	reply := wire.ClusterRebalanceReply{Started: uint32(r.Started), InProgress: uint32(r.InProgress)}
	x.Reply(reply.AppendTo(nil))
}

// ClusterPlacements lists every partition with its replica list and the
// target of a move in progress, as this node's metadata holds them (nil
// on a single node).
func (b *Broker) ClusterPlacements() []metadata.PartitionPlacement {
	if b.cl == nil {
		return nil
	}
	return b.meta.Placements()
}

// ClusterLeader returns the leader of group g as this node knows it
// (false: unknown, or the group is not on this node).
func (b *Broker) ClusterLeader(g replication.GroupID) (replication.NodeID, bool) {
	if b.cl == nil {
		return 0, false
	}
	return b.cl.node.host.Leader(g)
}
