package clusterinfo

import (
	"net/netip"
	"strings"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// NoLeader is the leader argument of Metadata while the serving node does
// not know the metadata leader: every node is then reported as Follower.
const NoLeader = -1

// Transports says which client transports the cluster serves. A node's
// port of a disabled transport is reported as 0 even when the roster sets
// one.
type Transports struct {
	TCP, QUIC, HTTP, WebSocket bool
}

// TransportsOf returns the transports enabled in cfg.
func TransportsOf(cfg *config.Config) Transports {
	return Transports{
		TCP:       cfg.TCP.Enabled,
		QUIC:      cfg.QUIC.Enabled,
		HTTP:      cfg.HTTP.Enabled,
		WebSocket: cfg.WebSocket.Enabled,
	}
}

// Metadata assembles GET_CLUSTER_METADATA for a caller whose transport
// peer address is peer (the zero Addr when unknown, e.g. a transport that
// has none: then no advertised_addresses selector matches).
//
//   - Name is cl.Name; Nodes lists every roster entry in roster order,
//     dead nodes included.
//   - IP is the advertised_addresses selector of that node whose
//     client_cidr holds peer with the longest prefix (per address family;
//     a v4-mapped IPv6 peer, and a v4-mapped client_cidr of /96 or longer,
//     count as IPv4), else advertised_address, else the roster ip. IP
//     literals are published in canonical form and host names lower-cased;
//     a value that is neither is published verbatim.
//   - Ports are the roster ports of the node, 0 for a transport that is
//     not enabled.
//   - Role is Leader for the node whose replica_id equals leader and
//     Follower for all others (all Follower when leader is NoLeader or
//     names no roster entry).
//   - Status is always Healthy: the reference never reports another
//     status in cluster mode, and SDK decoders reject some of them.
func Metadata(cl *config.ClusterConfig, leader int, peer netip.Addr, enabled Transports) wire.ClusterMetadata {
	m := wire.ClusterMetadata{Name: cl.Name, Nodes: make([]wire.ClusterNode, 0, len(cl.Nodes))}
	peer = peer.Unmap()
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		node := wire.ClusterNode{
			Name:   n.Name,
			IP:     Address(n, peer),
			Role:   wire.ClusterFollower,
			Status: wire.ClusterNodeHealthy,
		}
		if leader >= 0 && int(n.ReplicaID) == leader {
			node.Role = wire.ClusterLeader
		}
		if enabled.TCP {
			node.TCPPort = n.Ports.TCP
		}
		if enabled.QUIC {
			node.QUICPort = n.Ports.QUIC
		}
		if enabled.HTTP {
			node.HTTPPort = n.Ports.HTTP
		}
		if enabled.WebSocket {
			node.WebSocketPort = n.Ports.WebSocket
		}
		m.Nodes = append(m.Nodes, node)
	}
	return m
}

// Address returns the client-facing host of node n for a client at peer:
// the longest-prefix advertised_addresses selector, else
// advertised_address, else the roster ip (see Metadata).
func Address(n *config.ClusterNode, peer netip.Addr) string {
	if a, ok := selectAdvertised(n.AdvertisedAddresses, peer.Unmap()); ok {
		return canonicalHost(a)
	}
	if n.AdvertisedAddress != "" {
		return canonicalHost(n.AdvertisedAddress)
	}
	return canonicalHost(n.IP)
}

// selectAdvertised returns the address of the selector whose prefix holds
// peer with the most bits. Prefixes of the other address family never
// match; unparsable client_cidr values (refused by validation) are
// skipped.
func selectAdvertised(sel []config.AdvertisedSelector, peer netip.Addr) (string, bool) {
	if !peer.IsValid() {
		return "", false
	}
	best, bestBits := "", -1
	for _, s := range sel {
		p, ok := selectorPrefix(s.ClientCIDR)
		if !ok || p.Addr().Is4() != peer.Is4() || !p.Contains(peer) {
			continue
		}
		if p.Bits() > bestBits {
			best, bestBits = s.Address, p.Bits()
		}
	}
	return best, bestBits >= 0
}

// selectorPrefix parses a client_cidr; a v4-mapped IPv6 prefix of /96 or
// longer acts as the IPv4 prefix it maps. A shorter v4-mapped prefix stays
// IPv6 (it also spans addresses that are not v4-mapped) and so matches no
// IPv4 peer.
func selectorPrefix(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, false
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), true
}

// canonicalHost returns an IP literal in canonical form (RFC 5952: IPv6
// compressed and lower-case, zone kept; a v4-mapped literal stays
// v4-mapped) and a host name lower-cased.
func canonicalHost(h string) string {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.String()
	}
	return strings.ToLower(h)
}
