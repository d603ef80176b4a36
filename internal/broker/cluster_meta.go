package broker

import (
	"net/netip"

	"github.com/iggo-dev/iggo/internal/clusterinfo"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// clusterMetadata answers GET_CLUSTER_METADATA in cluster mode
// (cluster-contract.md §2) for a caller at peer ("ip:port"): every roster
// node in roster order with the address chosen for that caller and its
// client ports, the metadata group's leader as this node knows it as
// Leader (no Leader while unknown), status always Healthy.
func (b *Broker) clusterMetadata(peer string) wire.ClusterMetadata {
	leader := clusterinfo.NoLeader
	if id, ok := b.cl.node.host.Leader(replication.MetadataGroup); ok {
		leader = int(id)
	}
	var addr netip.Addr
	if ap, err := netip.ParseAddrPort(peer); err == nil {
		addr = ap.Addr()
	}
	cl := *b.cl.cfg
	cl.Nodes = b.cl.roster.get()
	return clusterinfo.Metadata(&cl, leader, addr, clusterinfo.TransportsOf(&b.cfg))
}
