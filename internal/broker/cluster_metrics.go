package broker

import (
	"context"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/rebalance"
	"github.com/iggo-dev/iggo/internal/replication"
)

// clusterMetrics is the metrics registry's ClusterSource in cluster
// mode: the placement figures from the metadata, and the leaders and the
// under-replicated partitions from the leader directory (every group's
// leader and caught-up members, as the leaders announce them).
type clusterMetrics struct{ b *Broker }

// ClusterStatus implements metrics.ClusterSource.
func (m clusterMetrics) ClusterStatus() (metrics.ClusterStatus, bool) {
	b := m.b
	if b.meta == nil || b.cl == nil {
		return metrics.ClusterStatus{}, false
	}
	h := b.cl.node.host
	pls := b.meta.Placements()
	c := rebalance.Count(pls)
	s := metrics.ClusterStatus{MovesInProgress: c.MovesInProgress, Replicas: c.Replicas, Leaders: map[uint8]int{}, LeadersComplete: true}
	dir := h.Directory()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	peers, err := h.Peers(ctx)
	self := replication.NodeID(b.cl.self.ReplicaID)
	alive := func(n replication.NodeID) bool { return n == self || (err == nil && peers[n].Alive) }
	for _, pp := range pls {
		if len(pp.Replicas) == 0 {
			continue
		}
		g := replicated.GroupID(pp.Ref, pp.Partition)
		l, ok := dir[g]
		if !ok {
			// No leader known: nobody can say the replicas are there.
			s.LeadersComplete = false
			s.UnderReplicated++
			continue
		}
		s.Leaders[uint8(l.Leader)]++
		switch v, here := h.Status(g); {
		case l.CaughtUp != nil:
			n := 0
			for _, r := range pp.Replicas {
				if slices.Contains(l.CaughtUp, replication.NodeID(r)) {
					n++
				}
			}
			if n < len(pp.Replicas) {
				s.UnderReplicated++
			}
		case here && v.Role == replication.RoleLeader:
			if rebalance.UnderReplicated(pp, v, alive) {
				s.UnderReplicated++
			}
		}
	}
	return s, true
}
