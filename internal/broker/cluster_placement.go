package broker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/placement"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// placeTimeout bounds the liveness query of one placement.
const placeTimeout = 2 * time.Second

// partitionPlacer is the metadata store's Placer in cluster mode: new
// partitions go to the live voters of the metadata group, with the racks
// of the roster, cluster.replication_factor replicas each unless the
// topic says otherwise.
type partitionPlacer struct{ b *Broker }

// Place implements metadata.Placer.
func (p partitionPlacer) Place(existing [][]uint8, rf uint8, count int) ([][]uint8, error) {
	want := int(rf)
	if want == 0 {
		want = p.b.cfg.Cluster.EffectiveReplicationFactor()
	}
	nodes, err := p.b.placementNodes()
	if err != nil {
		return nil, err
	}
	if want > len(nodes) {
		return nil, fmt.Errorf("%w: replication_factor %d is more than the %d live voting nodes that hold partitions", wire.ErrInvalidReplicationFactor, want, len(nodes))
	}
	lists, err := placement.Place(nodes, placement.NewLoad(existing), want, count)
	if err != nil {
		return nil, fmt.Errorf("%w: replication_factor %d: %w", wire.ErrInvalidReplicationFactor, want, err)
	}
	return lists, nil
}

// placementNodes are the nodes that may hold new replicas: the voters of
// the metadata group that this node hears from and that are not
// metadata_only, with their roster racks.
func (b *Broker) placementNodes() ([]placement.Node, error) {
	h := b.cl.node.host
	v, ok := h.Status(replication.MetadataGroup)
	if !ok {
		return nil, fmt.Errorf("%w: the metadata group is not open here", wire.ErrInvalidReplicationFactor)
	}
	ctx, cancel := context.WithTimeout(context.Background(), placeTimeout)
	defer cancel()
	peers, err := h.Peers(ctx)
	if err != nil {
		return nil, err
	}
	roster := b.cl.roster.get()
	var nodes []placement.Node
	for _, id := range v.Voters {
		if id != replication.NodeID(b.cl.self.ReplicaID) {
			if ps, ok := peers[id]; !ok || !ps.Alive {
				continue
			}
		}
		n := placement.Node{ID: uint8(id)}
		if i := slices.IndexFunc(roster, func(c config.ClusterNode) bool { return c.ReplicaID == uint8(id) }); i >= 0 {
			if roster[i].MetadataOnly {
				continue
			}
			n.Rack = roster[i].Rack
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}
