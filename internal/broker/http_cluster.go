package broker

import (
	"net"
	"net/netip"
	"strconv"

	"github.com/iggo-dev/iggo/internal/clusterinfo"
	"github.com/iggo-dev/iggo/internal/httpapi"
	"github.com/iggo-dev/iggo/internal/replication"
)

// httpCluster tells the HTTP API where the metadata leader is
// (httpapi.Cluster): the leader of the metadata raft group as this node
// knows it, located in the live roster.
type httpCluster struct{ b *Broker }

// Primary implements httpapi.Cluster.
func (c httpCluster) Primary(peer netip.Addr) (httpapi.Primary, bool) {
	cl := c.b.cl
	id, ok := cl.node.host.Leader(replication.MetadataGroup)
	if !ok {
		return httpapi.Primary{}, false
	}
	if int(id) == int(cl.self.ReplicaID) {
		return httpapi.Primary{Self: true}, true
	}
	for _, n := range cl.roster.get() {
		if int(n.ReplicaID) != int(id) {
			continue
		}
		if n.Ports.HTTP == 0 {
			return httpapi.Primary{}, false
		}
		port := strconv.Itoa(int(n.Ports.HTTP))
		return httpapi.Primary{
			Relay:      net.JoinHostPort(n.IP, port),
			Advertised: net.JoinHostPort(clusterinfo.Address(&n, peer), port),
		}, true
	}
	return httpapi.Primary{}, false
}

// View implements httpapi.Cluster: the metadata group's raft term.
func (c httpCluster) View() uint32 {
	v, _ := c.b.cl.node.host.Status(replication.MetadataGroup)
	return uint32(v.Term)
}

// httpClusterOptions fills the HTTP API's cluster options (none on a
// single node).
func (b *Broker) httpClusterOptions(o *httpapi.Options) {
	if b.cl == nil {
		return
	}
	o.Cluster = httpCluster{b}
	if a := b.cfg.Cluster.Auth; a.Enabled && a.SharedSecret != "" {
		o.ClusterSecret = []byte(a.SharedSecret)
	}
}
