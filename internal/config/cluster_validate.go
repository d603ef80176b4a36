package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// validateCluster checks [cluster] and the --replica-id choice
// (cluster-contract.md §1.1, §1.2). With the cluster disabled only replica
// id 0 is accepted and nothing else is checked, as in the reference.
func (c *Config) validateCluster() []error {
	cl := &c.Cluster
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if !cl.Enabled {
		if cl.ReplicaID != 0 {
			bad("--replica-id", "%d requires cluster.enabled = true (only 0 is accepted for a single node)", cl.ReplicaID)
		}
		return errs
	}
	if strings.TrimSpace(cl.Name) == "" {
		bad("cluster.name", "must not be empty")
	}
	errs = append(errs, cl.validateTimers()...)
	errs = append(errs, cl.validateAuth()...)
	errs = append(errs, c.validateRoster()...)
	errs = append(errs, cl.validatePlacement()...)
	return errs
}

// validatePlacement checks replication_factor, partition_leaders,
// replace_dead_after and the racks of the roster.
func (cl *ClusterConfig) validatePlacement() []error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	switch rf := cl.ReplicationFactor; {
	case rf < 1 || rf > MaxReplicationFactor:
		bad("replication_factor", "%d is outside 1..=%d", rf, MaxReplicationFactor)
	case len(cl.Nodes) > 0 && cl.DataNodes() == 0:
		bad("nodes.metadata_only", "is set on every node: at least one node must hold partitions")
	case cl.EffectiveReplicationFactor() > cl.DataNodes() && len(cl.Nodes) > 0:
		bad("replication_factor", "%d is more than the %d nodes of the roster that hold partitions", rf, cl.DataNodes())
	}
	switch cl.PartitionLeaders {
	case PartitionLeadersSpread, PartitionLeadersMetadata:
	default:
		bad("partition_leaders", "%q is neither %q nor %q", cl.PartitionLeaders, PartitionLeadersSpread, PartitionLeadersMetadata)
	}
	if cl.ReplaceDeadAfter < 0 {
		bad("replace_dead_after", "%s must not be negative (0 disables it)", cl.ReplaceDeadAfter)
	}
	var with, without []string
	for _, n := range cl.Nodes {
		if strings.TrimSpace(n.Rack) == "" {
			without = append(without, n.Name)
		} else {
			with = append(with, n.Name)
		}
	}
	if len(with) > 0 && len(without) > 0 {
		bad("nodes.rack", "set on %s but not on %s: name a rack for every node or for none", strings.Join(with, ", "), strings.Join(without, ", "))
	}
	return errs
}

func (cl *ClusterConfig) validateTimers() []error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	nonZero := []struct {
		key string
		d   Duration
	}{
		{"commit_broadcast_interval", cl.CommitBroadcastInterval},
		{"prepare_retransmit_interval", cl.PrepareRetransmitInterval},
		{"view_change_retransmit_interval", cl.ViewChangeRetransmitInterval},
		{"request_start_view_retransmit_interval", cl.RequestStartViewRetransmitInterval},
		{"repair_retry_interval", cl.RepairRetryInterval},
	}
	for _, nz := range nonZero {
		if nz.d <= 0 {
			bad(nz.key, "must be positive")
		}
	}
	if hb := cl.HeartbeatTimeout.Std(); hb < 2*time.Second || hb < 4*cl.CommitBroadcastInterval.Std() {
		bad("heartbeat_timeout", "%s must be at least 2s and at least 4 x commit_broadcast_interval (%s)", cl.HeartbeatTimeout, cl.CommitBroadcastInterval)
	}
	if cl.ViewChangeStatusTimeout.Std() < 4*cl.ViewChangeRetransmitInterval.Std() || cl.ViewChangeStatusTimeout <= 0 {
		bad("view_change_status_timeout", "%s must be at least 4 x view_change_retransmit_interval (%s)", cl.ViewChangeStatusTimeout, cl.ViewChangeRetransmitInterval)
	}
	if n := cl.ViewProbeAttemptsMax; n < 1 || n > 100 {
		bad("view_probe_attempts_max", "%d is outside 1..=100", n)
	}
	if n := cl.RepairChunkMax; n < 1 || n > 1024 || n >= peerQueueCapacity {
		bad("repair_chunk_max", "%d must be in 1..=1024 and below the peer queue capacity %d", n, peerQueueCapacity)
	}
	if d := cl.SuperblockWedgedFatalTimeout.Std(); d != 0 && d < 30*time.Second {
		bad("superblock_wedged_fatal_timeout", "%s must be 0 (disabled) or at least 30s", cl.SuperblockWedgedFatalTimeout)
	}
	return errs
}

func (cl *ClusterConfig) validateAuth() []error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster.%s: %s", key, fmt.Sprintf(format, args...)))
	}
	a := cl.Auth
	if a.SharedSecret != "" && len(a.SharedSecret) < MinClusterSecretBytes {
		bad("auth.shared_secret", "is %d bytes, must be at least %d", len(a.SharedSecret), MinClusterSecretBytes)
	}
	if a.Enabled && a.SharedSecret == "" {
		bad("auth.shared_secret", "is required when cluster.auth.enabled is true")
	}
	if p := a.PreviousSharedSecret; p != "" {
		if len(p) < MinClusterSecretBytes {
			bad("auth.previous_shared_secret", "is %d bytes, must be at least %d", len(p), MinClusterSecretBytes)
		}
		if p == a.SharedSecret {
			bad("auth.previous_shared_secret", "must differ from cluster.auth.shared_secret")
		}
	}
	t := cl.TLS
	if t.Enabled && !a.Enabled {
		bad("tls.enabled", "requires cluster.auth.enabled = true")
	}
	if t.Enabled && !t.SelfSigned {
		for _, f := range []struct{ key, v string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"ca_file", t.CAFile}} {
			if f.v == "" {
				bad("tls."+f.key, "is required when cluster TLS is enabled and self_signed is false")
			}
		}
	}
	return errs
}

// validateRoster checks [[cluster.nodes]] and that ReplicaID names
// exactly one entry.
func (c *Config) validateRoster() []error {
	cl := &c.Cluster
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	n := len(cl.Nodes)
	if n == 0 {
		bad("cluster.nodes", "needs at least one entry when the cluster is enabled")
		return errs
	}
	if n > MaxClusterNodes {
		bad("cluster.nodes", "has %d entries, at most %d are allowed", n, MaxClusterNodes)
	}
	names := map[string]int{}
	ids := map[uint8]int{}
	endpoints := map[string]string{}
	for i, node := range cl.Nodes {
		key := fmt.Sprintf("cluster.nodes[%d]", i)
		name := strings.TrimSpace(node.Name)
		switch prev, dup := names[name]; {
		case name == "":
			bad(key+".name", "must not be empty")
		case dup:
			bad(key+".name", "%q is also the name of cluster.nodes[%d]", node.Name, prev)
		default:
			names[name] = i
		}
		if prev, dup := ids[node.ReplicaID]; dup {
			bad(key+".replica_id", "%d is also the replica id of cluster.nodes[%d]", node.ReplicaID, prev)
		} else {
			ids[node.ReplicaID] = i
		}
		if int(node.ReplicaID) >= n {
			bad(key+".replica_id", "%d must be below the number of nodes (%d): ids are 0..%d", node.ReplicaID, n, n-1)
		}
		ip, err := netip.ParseAddr(node.IP)
		if err != nil {
			bad(key+".ip", "%q is not a literal IP address", node.IP)
		}
		ports := []struct {
			name     string
			port     uint16
			required bool
		}{
			{"tcp", node.Ports.TCP, true},
			{"tcp_replica", node.Ports.TCPReplica, true},
			{"quic", node.Ports.QUIC, c.QUIC.Enabled},
			{"http", node.Ports.HTTP, c.HTTP.Enabled},
			{"websocket", node.Ports.WebSocket, c.WebSocket.Enabled},
		}
		for _, p := range ports {
			if p.port == 0 {
				if p.required {
					bad(key+".ports."+p.name, "is required (and must not be 0)")
				}
				continue
			}
			if err == nil {
				// tcp and quic share a number only across protocols
				// (TCP vs UDP), so QUIC gets its own namespace.
				proto := "tcp"
				if p.name == "quic" {
					proto = "udp"
				}
				ep := proto + "/" + netip.AddrPortFrom(ip, p.port).String()
				if other, dup := endpoints[ep]; dup {
					bad(key+".ports."+p.name, "%s is already used by %s", ep, other)
				} else {
					endpoints[ep] = key + ".ports." + p.name
				}
			}
		}
		if a := node.AdvertisedAddress; a != "" {
			if err := checkAdvertisedHost(a); err != nil {
				bad(key+".advertised_address", "%v", err)
			}
		}
		errs = append(errs, checkSelectors(key, node.AdvertisedAddresses)...)
	}
	errs = append(errs, checkSelectorClashes(cl.Nodes)...)
	if _, ok := cl.Node(); !ok {
		bad("--replica-id", "%d is not the replica_id of any cluster.nodes entry", cl.ReplicaID)
	}
	return errs
}

// checkAdvertisedHost accepts a literal IP or an RFC 1123 host name with
// no port and no trailing dot.
func checkAdvertisedHost(h string) error {
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	if len(h) > 253 || h == "" || strings.HasSuffix(h, ".") {
		return fmt.Errorf("%q is not an IP or a host name (no port, no trailing dot)", h)
	}
	for _, label := range strings.Split(h, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not an IP or a host name (no port, no trailing dot)", h)
		}
		for i := 0; i < len(label); i++ {
			ch := label[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-') {
				return fmt.Errorf("%q is not an IP or a host name (no port, no trailing dot)", h)
			}
		}
	}
	return nil
}

// selectorPrefix parses a client_cidr; a v4-mapped IPv6 prefix of /96 or
// longer acts as the IPv4 prefix it maps (cluster-contract.md §1.2).
func selectorPrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

func checkSelectors(key string, sel []AdvertisedSelector) []error {
	var errs []error
	if len(sel) > MaxAdvertisedSelectors {
		errs = append(errs, fmt.Errorf("%s.advertised_addresses: has %d entries, at most %d are allowed", key, len(sel), MaxAdvertisedSelectors))
	}
	seen := map[netip.Prefix]int{}
	for j, s := range sel {
		sk := fmt.Sprintf("%s.advertised_addresses[%d]", key, j)
		p, err := selectorPrefix(s.ClientCIDR)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.client_cidr: %q is not a CIDR", sk, s.ClientCIDR))
		} else if prev, dup := seen[p]; dup {
			errs = append(errs, fmt.Errorf("%s.client_cidr: %s repeats advertised_addresses[%d]", sk, p, prev))
		} else {
			seen[p] = j
		}
		if err := checkAdvertisedHost(s.Address); err != nil {
			errs = append(errs, fmt.Errorf("%s.address: %v", sk, err))
		}
	}
	return errs
}

// checkSelectorClashes rejects two nodes that would advertise one
// host:port (tcp port) to an overlapping set of clients.
func checkSelectorClashes(nodes []ClusterNode) []error {
	type adv struct {
		node   int
		prefix netip.Prefix
		ep     string
	}
	var all []adv
	for i, n := range nodes {
		for _, s := range n.AdvertisedAddresses {
			p, err := selectorPrefix(s.ClientCIDR)
			if err != nil || n.Ports.TCP == 0 {
				continue
			}
			all = append(all, adv{i, p, fmt.Sprintf("%s:%d", strings.ToLower(s.Address), n.Ports.TCP)})
		}
	}
	var errs []error
	for a := range all {
		for b := a + 1; b < len(all); b++ {
			x, y := all[a], all[b]
			if x.node != y.node && x.ep == y.ep && x.prefix.Overlaps(y.prefix) {
				errs = append(errs, fmt.Errorf("cluster.nodes[%d].advertised_addresses: %s for %s is also advertised by cluster.nodes[%d] for %s", y.node, y.ep, y.prefix, x.node, x.prefix))
			}
		}
	}
	return errs
}
