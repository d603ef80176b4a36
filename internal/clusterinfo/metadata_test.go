package clusterinfo

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

func roster() *config.ClusterConfig {
	return &config.ClusterConfig{
		Name: "test-cluster",
		Nodes: []config.ClusterNode{
			{Name: "n0", IP: "10.0.0.1", ReplicaID: 0, Ports: config.ClusterPorts{TCP: 8090, QUIC: 8080, HTTP: 3000, WebSocket: 8092, TCPReplica: 8190}},
			{Name: "n1", IP: "10.0.0.2", ReplicaID: 1, AdvertisedAddress: "Node1.Example.COM", Ports: config.ClusterPorts{TCP: 8091, TCPReplica: 8191}},
			{Name: "n2", IP: "10.0.0.3", ReplicaID: 2, Ports: config.ClusterPorts{TCP: 8093, HTTP: 3002, TCPReplica: 8193}},
		},
	}
}

func TestMetadataRosterOrderRolesPortsStatus(t *testing.T) {
	cl := roster()
	// Roster order is kept even when replica ids are not in that order.
	cl.Nodes[0].ReplicaID, cl.Nodes[2].ReplicaID = 2, 0
	all := Transports{TCP: true, QUIC: true, HTTP: true, WebSocket: true}
	got := Metadata(cl, 0, netip.MustParseAddr("192.168.1.9"), all)
	want := wire.ClusterMetadata{Name: "test-cluster", Nodes: []wire.ClusterNode{
		{Name: "n0", IP: "10.0.0.1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092, Role: wire.ClusterFollower, Status: wire.ClusterNodeHealthy},
		{Name: "n1", IP: "node1.example.com", TCPPort: 8091, Role: wire.ClusterFollower, Status: wire.ClusterNodeHealthy},
		{Name: "n2", IP: "10.0.0.3", TCPPort: 8093, HTTPPort: 3002, Role: wire.ClusterLeader, Status: wire.ClusterNodeHealthy},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Metadata =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestMetadataLeaderRoles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leader int
		want   []wire.ClusterNodeRole
	}{
		{"replica 0", 0, []wire.ClusterNodeRole{wire.ClusterLeader, wire.ClusterFollower, wire.ClusterFollower}},
		{"replica 2", 2, []wire.ClusterNodeRole{wire.ClusterFollower, wire.ClusterFollower, wire.ClusterLeader}},
		{"unknown", NoLeader, []wire.ClusterNodeRole{wire.ClusterFollower, wire.ClusterFollower, wire.ClusterFollower}},
		{"not in roster", 7, []wire.ClusterNodeRole{wire.ClusterFollower, wire.ClusterFollower, wire.ClusterFollower}},
		{"other negative", -5, []wire.ClusterNodeRole{wire.ClusterFollower, wire.ClusterFollower, wire.ClusterFollower}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Metadata(roster(), tc.leader, netip.Addr{}, Transports{TCP: true})
			if len(m.Nodes) != 3 {
				t.Fatalf("%d nodes, want 3", len(m.Nodes))
			}
			for i, n := range m.Nodes {
				if n.Role != tc.want[i] {
					t.Errorf("node %d role %d, want %d", i, n.Role, tc.want[i])
				}
				if n.Status != wire.ClusterNodeHealthy {
					t.Errorf("node %d status %d, want Healthy", i, n.Status)
				}
			}
		})
	}
}

func TestMetadataDisabledTransportsReportZero(t *testing.T) {
	m := Metadata(roster(), 0, netip.Addr{}, Transports{TCP: true, HTTP: true})
	n := m.Nodes[0]
	if n.TCPPort != 8090 || n.HTTPPort != 3000 || n.QUICPort != 0 || n.WebSocketPort != 0 {
		t.Fatalf("ports tcp %d quic %d http %d ws %d, want 8090 0 3000 0", n.TCPPort, n.QUICPort, n.HTTPPort, n.WebSocketPort)
	}
	m = Metadata(roster(), 0, netip.Addr{}, Transports{})
	if n := m.Nodes[0]; n.TCPPort != 0 {
		t.Fatalf("tcp port %d with TCP disabled, want 0", n.TCPPort)
	}
}

func TestMetadataEmptyRoster(t *testing.T) {
	m := Metadata(&config.ClusterConfig{Name: "x"}, 0, netip.Addr{}, Transports{TCP: true})
	if m.Name != "x" || len(m.Nodes) != 0 {
		t.Fatalf("got %+v, want name x and no nodes", m)
	}
}

func TestAddressSelection(t *testing.T) {
	sel := func(pairs ...string) []config.AdvertisedSelector {
		var out []config.AdvertisedSelector
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, config.AdvertisedSelector{ClientCIDR: pairs[i], Address: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		ip, adv    string
		selectors  []config.AdvertisedSelector
		peer, want string
	}{
		{name: "roster ip only", ip: "10.0.0.1", peer: "1.2.3.4", want: "10.0.0.1"},
		{name: "advertised address over roster ip", ip: "10.0.0.1", adv: "public.example", peer: "1.2.3.4", want: "public.example"},
		{name: "advertised host lower-cased", ip: "10.0.0.1", adv: "PUBLIC.Example", peer: "1.2.3.4", want: "public.example"},
		{name: "advertised IPv6 canonicalised", ip: "10.0.0.1", adv: "2001:DB8:0:0::1", peer: "1.2.3.4", want: "2001:db8::1"},
		{name: "roster IPv6 canonicalised", ip: "FD00:0::5", peer: "fd00::9", want: "fd00::5"},
		{name: "selector matches", ip: "10.0.0.1", adv: "public.example",
			selectors: sel("192.168.0.0/16", "lan.example"), peer: "192.168.3.4", want: "lan.example"},
		{name: "selector misses, falls back to advertised", ip: "10.0.0.1", adv: "public.example",
			selectors: sel("192.168.0.0/16", "lan.example"), peer: "172.16.0.1", want: "public.example"},
		{name: "selector misses, falls back to roster ip", ip: "10.0.0.1",
			selectors: sel("192.168.0.0/16", "lan.example"), peer: "172.16.0.1", want: "10.0.0.1"},
		{name: "longest prefix wins regardless of order", ip: "10.0.0.1",
			selectors: sel("10.0.0.0/8", "wide.example", "10.1.2.0/24", "narrow.example", "10.1.0.0/16", "mid.example"),
			peer:      "10.1.2.3", want: "narrow.example"},
		{name: "longest prefix, middle", ip: "10.0.0.1",
			selectors: sel("10.0.0.0/8", "wide.example", "10.1.2.0/24", "narrow.example", "10.1.0.0/16", "mid.example"),
			peer:      "10.1.9.3", want: "mid.example"},
		{name: "default route catches all v4", ip: "10.0.0.1",
			selectors: sel("0.0.0.0/0", "any4.example", "127.0.0.0/8", "loop.example"), peer: "8.8.8.8", want: "any4.example"},
		{name: "host route /32", ip: "10.0.0.1",
			selectors: sel("0.0.0.0/0", "any4.example", "8.8.8.8/32", "one.example"), peer: "8.8.8.8", want: "one.example"},
		{name: "v4-mapped peer acts as v4", ip: "10.0.0.1",
			selectors: sel("192.168.0.0/16", "lan.example"), peer: "::ffff:192.168.1.1", want: "lan.example"},
		{name: "v4-mapped selector /112 acts as v4 /16", ip: "10.0.0.1",
			selectors: sel("::ffff:192.168.0.0/112", "lan.example"), peer: "192.168.1.1", want: "lan.example"},
		{name: "v4-mapped selector and v4-mapped peer", ip: "10.0.0.1",
			selectors: sel("::ffff:192.168.0.0/112", "lan.example", "192.168.1.0/24", "sub.example"), peer: "::ffff:192.168.1.1", want: "sub.example"},
		{name: "v4-mapped selector shorter than /96 stays v6", ip: "10.0.0.1",
			selectors: sel("::/64", "six.example"), peer: "192.168.1.1", want: "10.0.0.1"},
		{name: "v6 selector never matches a v4 peer", ip: "10.0.0.1",
			selectors: sel("::/0", "any6.example"), peer: "1.2.3.4", want: "10.0.0.1"},
		{name: "v4 selector never matches a v6 peer", ip: "10.0.0.1",
			selectors: sel("0.0.0.0/0", "any4.example"), peer: "2001:db8::1", want: "10.0.0.1"},
		{name: "per family: v6 peer picks the v6 selector", ip: "10.0.0.1",
			selectors: sel("0.0.0.0/0", "any4.example", "2001:db8::/32", "doc6.example", "::/0", "any6.example"), peer: "2001:db8::7", want: "doc6.example"},
		{name: "selector address canonicalised", ip: "10.0.0.1",
			selectors: sel("10.0.0.0/8", "FD00::0:1"), peer: "10.2.3.4", want: "fd00::1"},
		{name: "selector host lower-cased", ip: "10.0.0.1",
			selectors: sel("10.0.0.0/8", "Inside.Example"), peer: "10.2.3.4", want: "inside.example"},
		{name: "unknown peer: no selector applies", ip: "10.0.0.1", adv: "public.example",
			selectors: sel("0.0.0.0/0", "any4.example"), peer: "", want: "public.example"},
		{name: "unparsable selector skipped", ip: "10.0.0.1",
			selectors: sel("not-a-cidr", "bad.example", "10.0.0.0/8", "good.example"), peer: "10.0.0.9", want: "good.example"},
		{name: "unparsable roster ip verbatim", ip: "Not-An-IP?", peer: "", want: "not-an-ip?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := config.ClusterNode{Name: "n", IP: tc.ip, AdvertisedAddress: tc.adv, AdvertisedAddresses: tc.selectors}
			var peer netip.Addr
			if tc.peer != "" {
				peer = netip.MustParseAddr(tc.peer)
			}
			if got := Address(&n, peer); got != tc.want {
				t.Fatalf("Address(peer %q) = %q, want %q", tc.peer, got, tc.want)
			}
			// Metadata publishes the same choice.
			cl := &config.ClusterConfig{Name: "c", Nodes: []config.ClusterNode{n}}
			if got := Metadata(cl, 0, peer, Transports{TCP: true}).Nodes[0].IP; got != tc.want {
				t.Fatalf("Metadata IP = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTransportsOf(t *testing.T) {
	cfg := config.Default()
	cfg.TCP.Enabled, cfg.QUIC.Enabled, cfg.HTTP.Enabled, cfg.WebSocket.Enabled = true, false, true, false
	if got, want := TransportsOf(&cfg), (Transports{TCP: true, HTTP: true}); got != want {
		t.Fatalf("TransportsOf = %+v, want %+v", got, want)
	}
}
