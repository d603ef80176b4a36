package broker

import (
	"context"
	"time"

	"github.com/iggo-dev/iggo/internal/metrics"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/rebalance"
	"github.com/iggo-dev/iggo/internal/replication"
)

// clusterMetrics is the metrics registry's ClusterSource in cluster
// mode: the placement figures from the metadata, the leaders of the
// groups hosted here, and the under-replicated partitions led here.
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
	s := metrics.ClusterStatus{MovesInProgress: c.MovesInProgress, Replicas: c.Replicas, Leaders: map[uint8]int{}, UnderReplicated: -1}
	// Leaders per node as this node sees them: the groups it hosts.
	// A leader directory covering every group would make it complete.
	for _, g := range b.partitionGroups() {
		if v, ok := h.Status(g); ok && v.HasLeader {
			s.Leaders[uint8(v.Leader)]++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	peers, err := h.Peers(ctx)
	if err != nil {
		return s, true
	}
	self := replication.NodeID(b.cl.self.ReplicaID)
	alive := func(n replication.NodeID) bool { return n == self || peers[n].Alive }
	s.UnderReplicated = 0
	for _, pp := range pls {
		if len(pp.Replicas) == 0 {
			continue
		}
		v, ok := h.Status(replicated.GroupID(pp.Ref, pp.Partition))
		if ok && v.Role == replication.RoleLeader && rebalance.UnderReplicated(pp, v, alive) {
			s.UnderReplicated++
		}
	}
	return s, true
}
