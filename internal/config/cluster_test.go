package config

import (
	"strings"
	"testing"
	"time"
)

const threeNodes = `
[cluster]
enabled = true
name = "test-cluster"

[cluster.auth]
enabled = true
shared_secret = "0123456789abcdef0123456789abcdef"

[[cluster.nodes]]
name = "n0"
ip = "127.0.0.1"
replica_id = 0
ports = { tcp = 8091, tcp_replica = 8191 }

[[cluster.nodes]]
name = "n1"
ip = "127.0.0.1"
replica_id = 1
ports = { tcp = 8092, tcp_replica = 8192 }

[[cluster.nodes]]
name = "n2"
ip = "127.0.0.1"
replica_id = 2
advertised_address = "node2.example.com"
ports = { tcp = 8093, tcp_replica = 8193 }
advertised_addresses = [{ client_cidr = "10.0.0.0/8", address = "10.1.2.3" }]
`

// clusterBase returns the three-node configuration with QUIC, WebSocket
// and HTTP off, so only tcp and tcp_replica are required.
func clusterBase(t *testing.T) Config {
	t.Helper()
	c, notices, err := Parse([]byte(threeNodes))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	for _, n := range notices {
		t.Errorf("unexpected notice: %s", n.Message)
	}
	c.QUIC.Enabled = false
	c.WebSocket.Enabled = false
	c.HTTP.Enabled = false
	return c
}

func TestClusterDefaults(t *testing.T) {
	c := Default()
	if c.Cluster.Enabled || c.Cluster.Name != "iggy-cluster" || c.Cluster.HeartbeatTimeout.Std() != 5*time.Second ||
		c.Cluster.CommitBroadcastInterval.Std() != 500*time.Millisecond || c.Cluster.RepairChunkMax != 128 ||
		c.Cluster.ViewProbeAttemptsMax != 5 || c.Cluster.SuperblockWedgedFatalTimeout.Std() != 2*time.Minute ||
		!c.Cluster.Coordinator.SkipShardZeroForReplicas || c.Cluster.Auth.Enabled || c.Cluster.TLS.Enabled {
		t.Fatalf("unexpected defaults: %+v", c.Cluster)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults must validate: %v", err)
	}
	if c.Cluster.ReplicationFactor != 3 || c.Cluster.PartitionLeaders != PartitionLeadersSpread || c.Cluster.ReplaceDeadAfter.Std() != 10*time.Minute {
		t.Fatalf("placement defaults: %+v", c.Cluster)
	}
	c.Cluster.ReplicaID = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--replica-id") {
		t.Fatalf("replica id 1 without a cluster: got %v", err)
	}
}

func TestClusterValid(t *testing.T) {
	c := clusterBase(t)
	for id := range 3 {
		c.Cluster.ReplicaID = id
		if err := c.Validate(); err != nil {
			t.Fatalf("replica %d: %v", id, err)
		}
		n, ok := c.Cluster.Node()
		if !ok || int(n.ReplicaID) != id {
			t.Fatalf("Node() = %+v, %v", n, ok)
		}
	}
	if got := c.Cluster.Nodes[2].AdvertisedAddresses[0].Address; got != "10.1.2.3" {
		t.Fatalf("selector address = %q", got)
	}
}

// TestReplicationFactorDefaultFollowsSmallRosters: the default 3 is
// lowered to the node count of a one- or two-node roster; an explicit
// value is not.
func TestReplicationFactorDefaultFollowsSmallRosters(t *testing.T) {
	c := clusterBase(t)
	c.Cluster.Nodes = c.Cluster.Nodes[:2]
	if err := c.Validate(); err != nil {
		t.Fatalf("two nodes with the default replication factor: %v", err)
	}
	if got := c.Cluster.EffectiveReplicationFactor(); got != 2 {
		t.Fatalf("effective replication factor %d, want 2", got)
	}
	c = clusterBase(t)
	c.Cluster.ReplicationFactor = 2
	if got := c.Cluster.EffectiveReplicationFactor(); got != 2 || c.Validate() != nil {
		t.Fatalf("explicit 2 of 3 nodes: %d, %v", got, c.Validate())
	}
}

func TestClusterValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"empty name", func(c *Config) { c.Cluster.Name = " " }, "cluster.name"},
		{"replica id not in roster", func(c *Config) { c.Cluster.ReplicaID = 7 }, "--replica-id: 7 is not the replica_id"},
		{"duplicate id", func(c *Config) { c.Cluster.Nodes[1].ReplicaID = 0 }, "cluster.nodes[1].replica_id: 0 is also the replica id of cluster.nodes[0]"},
		{"id out of range", func(c *Config) { c.Cluster.Nodes[2].ReplicaID = 5 }, "cluster.nodes[2].replica_id: 5 must be below"},
		{"duplicate name", func(c *Config) { c.Cluster.Nodes[2].Name = "n0" }, "cluster.nodes[2].name: \"n0\" is also the name of cluster.nodes[0]"},
		{"empty node name", func(c *Config) { c.Cluster.Nodes[1].Name = "" }, "cluster.nodes[1].name: must not be empty"},
		{"no nodes", func(c *Config) { c.Cluster.Nodes = nil }, "cluster.nodes: needs at least one entry"},
		{"short secret", func(c *Config) { c.Cluster.Auth.SharedSecret = "short" }, "cluster.auth.shared_secret: is 5 bytes, must be at least 32"},
		{"auth without secret", func(c *Config) { c.Cluster.Auth.SharedSecret = "" }, "cluster.auth.shared_secret: is required"},
		{"short previous secret", func(c *Config) { c.Cluster.Auth.PreviousSharedSecret = "x" }, "cluster.auth.previous_shared_secret: is 1 bytes"},
		{"previous equals current", func(c *Config) { c.Cluster.Auth.PreviousSharedSecret = c.Cluster.Auth.SharedSecret }, "must differ"},
		{"tls without auth", func(c *Config) {
			c.Cluster.Auth.Enabled = false
			c.Cluster.TLS = ClusterTLSConfig{Enabled: true, SelfSigned: true}
		}, "cluster.tls.enabled: requires cluster.auth.enabled"},
		{"tls without files", func(c *Config) { c.Cluster.TLS = ClusterTLSConfig{Enabled: true} }, "cluster.tls.ca_file: is required"},
		{"hostname ip", func(c *Config) { c.Cluster.Nodes[0].IP = "localhost" }, "cluster.nodes[0].ip: \"localhost\" is not a literal IP"},
		{"missing tcp port", func(c *Config) { c.Cluster.Nodes[1].Ports.TCP = 0 }, "cluster.nodes[1].ports.tcp: is required"},
		{"missing replica port", func(c *Config) { c.Cluster.Nodes[1].Ports.TCPReplica = 0 }, "cluster.nodes[1].ports.tcp_replica: is required"},
		{"quic port required when quic is on", func(c *Config) { c.QUIC.Enabled = true }, "cluster.nodes[0].ports.quic: is required"},
		{"duplicate endpoint", func(c *Config) { c.Cluster.Nodes[1].Ports.TCPReplica = 8091 }, "cluster.nodes[1].ports.tcp_replica: tcp/127.0.0.1:8091 is already used by cluster.nodes[0].ports.tcp"},
		{"advertised with port", func(c *Config) { c.Cluster.Nodes[0].AdvertisedAddress = "host:80" }, "cluster.nodes[0].advertised_address"},
		{"advertised trailing dot", func(c *Config) { c.Cluster.Nodes[0].AdvertisedAddress = "host.example." }, "cluster.nodes[0].advertised_address"},
		{"bad cidr", func(c *Config) { c.Cluster.Nodes[2].AdvertisedAddresses[0].ClientCIDR = "10.0.0.0" }, "cluster.nodes[2].advertised_addresses[0].client_cidr"},
		{"duplicate cidr", func(c *Config) {
			n := &c.Cluster.Nodes[2]
			n.AdvertisedAddresses = append(n.AdvertisedAddresses, AdvertisedSelector{ClientCIDR: "10.0.0.0/8", Address: "h"})
		}, "cluster.nodes[2].advertised_addresses[1].client_cidr: 10.0.0.0/8 repeats"},
		{"too many selectors", func(c *Config) {
			n := &c.Cluster.Nodes[2]
			for range MaxAdvertisedSelectors {
				n.AdvertisedAddresses = append(n.AdvertisedAddresses, AdvertisedSelector{ClientCIDR: "::/0", Address: "h"})
			}
		}, "has 17 entries, at most 16"},
		{"two nodes one advertised endpoint", func(c *Config) {
			c.Cluster.Nodes[1].Ports.TCP = 8093
			c.Cluster.Nodes[1].IP = "127.0.0.2"
			c.Cluster.Nodes[1].AdvertisedAddresses = []AdvertisedSelector{{ClientCIDR: "10.1.0.0/16", Address: "10.1.2.3"}}
		}, "10.1.2.3:8093 for 10.0.0.0/8 is also advertised by cluster.nodes[1]"},
		{"heartbeat too short", func(c *Config) { c.Cluster.HeartbeatTimeout = Duration(time.Second) }, "cluster.heartbeat_timeout"},
		{"heartbeat below 4 broadcasts", func(c *Config) { c.Cluster.CommitBroadcastInterval = Duration(2 * time.Second) }, "cluster.heartbeat_timeout"},
		{"zero broadcast", func(c *Config) { c.Cluster.CommitBroadcastInterval = 0 }, "cluster.commit_broadcast_interval: must be positive"},
		{"view change status", func(c *Config) { c.Cluster.ViewChangeStatusTimeout = Duration(time.Second) }, "cluster.view_change_status_timeout"},
		{"probe attempts", func(c *Config) { c.Cluster.ViewProbeAttemptsMax = 101 }, "cluster.view_probe_attempts_max"},
		{"repair chunk at queue capacity", func(c *Config) { c.Cluster.RepairChunkMax = 256 }, "cluster.repair_chunk_max"},
		{"replication factor zero", func(c *Config) { c.Cluster.ReplicationFactor = 0 }, "cluster.replication_factor: 0 is outside 1..=255"},
		{"replication factor above nodes", func(c *Config) { c.Cluster.ReplicationFactor = 4 }, "cluster.replication_factor: 4 is more than the 3 nodes of the roster that hold partitions"},
		{"replication factor above data nodes", func(c *Config) {
			c.Cluster.Nodes[0].MetadataOnly, c.Cluster.Nodes[1].MetadataOnly, c.Cluster.ReplicationFactor = true, true, 2
		}, "cluster.replication_factor: 2 is more than the 1 nodes of the roster that hold partitions"},
		{"every node metadata only", func(c *Config) {
			for i := range c.Cluster.Nodes {
				c.Cluster.Nodes[i].MetadataOnly = true
			}
		}, "cluster.nodes.metadata_only: is set on every node"},
		{"partition leaders", func(c *Config) { c.Cluster.PartitionLeaders = "random" }, `cluster.partition_leaders: "random" is neither "spread" nor "metadata_leader"`},
		{"negative replace dead after", func(c *Config) { c.Cluster.ReplaceDeadAfter = Duration(-time.Second) }, "cluster.replace_dead_after"},
		{"rack on some nodes", func(c *Config) { c.Cluster.Nodes[1].Rack = "r1" }, "cluster.nodes.rack: set on n1 but not on n0, n2"},
		{"wedged timeout", func(c *Config) { c.Cluster.SuperblockWedgedFatalTimeout = Duration(10 * time.Second) }, "cluster.superblock_wedged_fatal_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clusterBase(t)
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
	t.Run("disabled cluster ignores the roster", func(t *testing.T) {
		c := clusterBase(t)
		c.Cluster.Enabled = false
		c.Cluster.Nodes[1].ReplicaID = 0
		if err := c.Validate(); err != nil {
			t.Fatalf("disabled cluster: %v", err)
		}
	})
	t.Run("zero wedged timeout disables", func(t *testing.T) {
		c := clusterBase(t)
		c.Cluster.SuperblockWedgedFatalTimeout = 0
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClusterEnv(t *testing.T) {
	env := []string{
		"IGGY_CLUSTER_ENABLED=true",
		"IGGY_CLUSTER_NAME=env-cluster",
		"IGGY_CLUSTER_AUTH_SHARED_SECRET=abcdefghijklmnopqrstuvwxyz012345",
		"IGGY_CLUSTER_NODES_0_NAME=first",
		"IGGY_CLUSTER_NODES_0_IP=10.0.0.1",
		"IGGY_CLUSTER_NODES_0_PORTS_TCP=9000",
		"IGGY_CLUSTER_NODES_0_PORTS_TCP_REPLICA=9100",
		"IGGY_CLUSTER_NODES_1_NAME=second",
		"IGGY_CLUSTER_NODES_1_IP=10.0.0.2",
		"IGGY_CLUSTER_NODES_1_REPLICA_ID=1",
		"IGGY_CLUSTER_NODES_1_PORTS_TCP=9001",
		"IGGY_CLUSTER_NODES_1_PORTS_TCP_REPLICA=9101",
		"IGGY_CLUSTER_NODES_1_ADVERTISED_ADDRESS=second.example",
		"IGGY_CLUSTER_NODES_1_ADVERTISED_ADDRESSES_0_CLIENT_CIDR=192.168.0.0/16",
		"IGGY_CLUSTER_NODES_1_ADVERTISED_ADDRESSES_0_ADDRESS=192.168.1.2",
		"IGGY_CLUSTER_NODES_4_BOGUS=1",
		"IGGY_CLUSTER_REPAIR_CHUNK_MAX=64",
		"IGGY_CLUSTER_REPLICATION_FACTOR=2",
		"IGGY_CLUSTER_PARTITION_LEADERS=metadata_leader",
		"IGGY_CLUSTER_REPLACE_DEAD_AFTER=30m",
		"IGGY_CLUSTER_NODES_0_RACK=a",
		"IGGY_CLUSTER_NODES_1_RACK=b",
	}
	c, notices, err := Load("", env)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	cl := c.Cluster
	if !cl.Enabled || cl.Name != "env-cluster" || string(cl.Auth.SharedSecret) != "abcdefghijklmnopqrstuvwxyz012345" {
		t.Fatalf("scalars: %+v", cl)
	}
	if len(cl.Nodes) != 2 {
		t.Fatalf("want 2 nodes (an unknown field must not grow the roster), got %d: %+v", len(cl.Nodes), cl.Nodes)
	}
	n1 := cl.Nodes[1]
	if cl.Nodes[0].Name != "first" || cl.Nodes[0].Ports.TCP != 9000 || cl.Nodes[0].Ports.TCPReplica != 9100 ||
		n1.ReplicaID != 1 || n1.AdvertisedAddress != "second.example" || len(n1.AdvertisedAddresses) != 1 ||
		n1.AdvertisedAddresses[0].ClientCIDR != "192.168.0.0/16" || n1.AdvertisedAddresses[0].Address != "192.168.1.2" {
		t.Fatalf("nodes: %+v", cl.Nodes)
	}
	if cl.RepairChunkMax != 64 {
		t.Fatalf("repair_chunk_max = %d", cl.RepairChunkMax)
	}
	if cl.ReplicationFactor != 2 || cl.PartitionLeaders != PartitionLeadersMetadata || cl.ReplaceDeadAfter.Std() != 30*time.Minute ||
		cl.Nodes[0].Rack != "a" || cl.Nodes[1].Rack != "b" {
		t.Fatalf("placement keys: %+v", cl)
	}
	var sawBogus, sawVSR bool
	for _, n := range notices {
		sawBogus = sawBogus || (n.Warn && strings.Contains(n.Message, "IGGY_CLUSTER_NODES_4_BOGUS"))
		sawVSR = sawVSR || (n.Warn && strings.Contains(n.Message, "IGGY_CLUSTER_REPAIR_CHUNK_MAX") && strings.Contains(n.Message, "raft"))
	}
	if !sawBogus || !sawVSR {
		t.Fatalf("notices: %+v", notices)
	}
	c.QUIC.Enabled, c.WebSocket.Enabled, c.HTTP.Enabled = false, false, false
	c.Cluster.ReplicaID = 1
	if err := c.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if _, _, err := Load("", []string{"IGGY_CLUSTER_NODES_0_REPLICA_ID=300"}); err == nil || !strings.Contains(err.Error(), "cluster.nodes[0].replica_id") {
		t.Fatalf("u8 overflow: %v", err)
	}
	if _, _, err := Load("", []string{"IGGY_CLUSTER_NODES_999_NAME=x"}); err == nil {
		t.Fatal("index above the limit must be refused")
	}
}

func TestClusterFileNotices(t *testing.T) {
	_, notices, err := Parse([]byte("[cluster]\nview_probe_attempts_max = 7\nnmae = \"x\"\n[cluster.coordinator]\nskip_shard_zero_for_clients = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	var vsr, typo int
	for _, n := range notices {
		if n.Warn && strings.Contains(n.Message, "view-stamped") {
			vsr++
		}
		if n.Warn && strings.Contains(n.Message, "cluster.nmae") && strings.Contains(n.Message, "did you mean cluster.name") {
			typo++
		}
	}
	if vsr != 2 || typo != 1 {
		t.Fatalf("want 2 VSR warnings and 1 typo hint, got %+v", notices)
	}
}

func TestClusterFileReplacesDefaultRoster(t *testing.T) {
	c := clusterBase(t)
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "0123456789abcdef") {
		t.Fatal("the shared secret must not be encoded")
	}
	if !strings.Contains(string(data), "[[cluster.nodes]]") {
		t.Fatalf("roster missing from the encoded config:\n%s", data)
	}
}

func TestRaftTiming(t *testing.T) {
	for _, tc := range []struct {
		name          string
		hb, broadcast time.Duration
		want          RaftTiming
	}{
		{"defaults", 5 * time.Second, 500 * time.Millisecond, RaftTiming{100 * time.Millisecond, 5, 12}},
		{"fast", 2 * time.Second, 50 * time.Millisecond, RaftTiming{50 * time.Millisecond, 1, 10}},
		{"odd broadcast rounds the tick down", 2 * time.Second, 55 * time.Millisecond, RaftTiming{50 * time.Millisecond, 1, 10}},
		{"tiny broadcast", 2 * time.Second, 3 * time.Millisecond, RaftTiming{10 * time.Millisecond, 1, 50}},
		{"minimum ratio keeps election above heartbeat", 2 * time.Second, 500 * time.Millisecond, RaftTiming{100 * time.Millisecond, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := ClusterConfig{HeartbeatTimeout: Duration(tc.hb), CommitBroadcastInterval: Duration(tc.broadcast)}
			if got := cl.RaftTiming(); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
