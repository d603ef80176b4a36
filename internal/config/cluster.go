package config

import (
	"net"
	"strconv"
	"time"
)

// ClusterConfig is [cluster]: replicated mode (../shared/design/cluster-contract.md
// §1). Names, defaults and checks follow the reference; the consensus
// underneath is raft, so the view-change and repair timers of the
// reference's Viewstamped Replication are accepted, range-checked and
// reported as unused (see VSROnlyClusterKeys), and heartbeat_timeout and
// commit_broadcast_interval are mapped onto raft ticks by RaftTiming.
type ClusterConfig struct {
	// Enabled switches cluster mode on (default false: single node).
	Enabled bool `toml:"enabled"`
	// Name is the cluster identity, equal on all nodes; its BLAKE3 hash
	// (first 16 bytes) is the cluster id carried by the replica handshake.
	Name string `toml:"name"`
	// HeartbeatTimeout is the follower-side liveness window (raft election
	// timeout, see RaftTiming).
	HeartbeatTimeout Duration `toml:"heartbeat_timeout"`
	// CommitBroadcastInterval is the leader heartbeat period.
	CommitBroadcastInterval Duration `toml:"commit_broadcast_interval"`
	// PrepareRetransmitInterval is VSR only (raft retransmits on its own
	// heartbeat); accepted and checked.
	PrepareRetransmitInterval Duration `toml:"prepare_retransmit_interval"`
	// ViewChangeRetransmitInterval is VSR only; accepted and checked.
	ViewChangeRetransmitInterval Duration `toml:"view_change_retransmit_interval"`
	// ViewChangeStatusTimeout is VSR only; accepted and checked.
	ViewChangeStatusTimeout Duration `toml:"view_change_status_timeout"`
	// RequestStartViewRetransmitInterval is VSR only; accepted and checked.
	RequestStartViewRetransmitInterval Duration `toml:"request_start_view_retransmit_interval"`
	// ViewProbeAttemptsMax is VSR only (1..=100); accepted and checked.
	ViewProbeAttemptsMax int `toml:"view_probe_attempts_max"`
	// RepairRetryInterval is VSR only; accepted and checked.
	RepairRetryInterval Duration `toml:"repair_retry_interval"`
	// RepairChunkMax is VSR only (1..=1024 and below the peer queue
	// capacity of 256); accepted and checked.
	RepairChunkMax int `toml:"repair_chunk_max"`
	// SuperblockWedgedFatalTimeout is VSR only (0 or >= 30 s); accepted
	// and checked.
	SuperblockWedgedFatalTimeout Duration `toml:"superblock_wedged_fatal_timeout"`
	// ReplicationFactor is how many nodes hold each partition (default
	// 3; a topic's replication_factor option overrides it at create). It
	// must not exceed the roster's nodes that hold data (not
	// metadata_only), except the default 3, which a cluster with one or
	// two of them lowers to their count (EffectiveReplicationFactor).
	ReplicationFactor int `toml:"replication_factor"`
	// PartitionLeaders is where partition leadership goes:
	// PartitionLeadersSpread (default) keeps each partition's leader on
	// the first live node of its replica list, so leadership is spread
	// over the nodes; PartitionLeadersMetadata moves every partition
	// leader to the metadata leader.
	PartitionLeaders string `toml:"partition_leaders"`
	// ReplaceDeadAfter is how long a node may be unreachable before the
	// metadata leader re-creates its replicas on other nodes (when enough
	// nodes live); 0 disables it.
	ReplaceDeadAfter Duration           `toml:"replace_dead_after"`
	Auth             ClusterAuthConfig  `toml:"auth"`
	TLS              ClusterTLSConfig   `toml:"tls"`
	Coordinator      ClusterCoordinator `toml:"coordinator"`
	// Nodes is the roster, [[cluster.nodes]]; identical on every node.
	Nodes []ClusterNode `toml:"nodes"`
	// ReplicaID is which roster entry this process is. It is not a TOML
	// key: the reference takes it from the command line (--replica-id N);
	// the caller sets it before Validate.
	ReplicaID int `toml:"-"`
	// Join starts a node that is being added to a running cluster
	// (`iggo server --join`, then `iggo cluster add-node`): it creates no
	// raft group of its own and waits for the leader to send it the logs.
	// Not a TOML key either.
	Join bool `toml:"-"`
}

// EffectiveReplicationFactor is the replication factor new partitions
// get when their topic does not set one: ReplicationFactor, with the
// default lowered to the roster's node count.
func (c *ClusterConfig) EffectiveReplicationFactor() int {
	if n := c.DataNodes(); c.ReplicationFactor == DefaultReplicationFactor && n > 0 && n < DefaultReplicationFactor {
		return n
	}
	return c.ReplicationFactor
}

// ClusterAuthConfig is [cluster.auth]: the pre-shared key of the replica
// handshake. The secrets are Secret values, which are never written out
// (runtime/current_config.toml shows them empty).
type ClusterAuthConfig struct {
	// Enabled requires the authenticated handshake on the replica port.
	Enabled bool `toml:"enabled"`
	// SharedSecret is the key, at least MinClusterSecretBytes bytes.
	SharedSecret Secret `toml:"shared_secret"`
	// PreviousSharedSecret is accepted when verifying a peer (rolling
	// rotation) but never used to sign.
	PreviousSharedSecret Secret `toml:"previous_shared_secret"`
}

// ClusterTLSConfig is [cluster.tls]: TLS 1.3 on the replica port
// (ALPN iggy-replica).
type ClusterTLSConfig struct {
	Enabled bool `toml:"enabled"`
	// SelfSigned generates a certificate and makes the dialer accept any
	// peer certificate (the handshake MAC still authenticates the peer).
	SelfSigned bool   `toml:"self_signed"`
	CertFile   string `toml:"cert_file"`
	KeyFile    string `toml:"key_file"`
	CAFile     string `toml:"ca_file"`
}

// ClusterCoordinator is [cluster.coordinator]: shard placement of the
// reference's thread-per-core runtime. Accepted and unused.
type ClusterCoordinator struct {
	SkipShardZeroForReplicas bool `toml:"skip_shard_zero_for_replicas"`
	SkipShardZeroForClients  bool `toml:"skip_shard_zero_for_clients"`
}

// ClusterNode is one [[cluster.nodes]] roster entry.
type ClusterNode struct {
	// Name is unique and reported in cluster metadata.
	Name string `toml:"name"`
	// IP is the literal roster IP: the replica listener binds
	// IP:ports.tcp_replica and peers dial it.
	IP string `toml:"ip"`
	// ReplicaID is unique and the ids are 0..n-1.
	ReplicaID uint8 `toml:"replica_id"`
	// AdvertisedAddress is an optional client-facing host (literal IP or
	// RFC 1123 host name, no port).
	AdvertisedAddress string `toml:"advertised_address"`
	// AdvertisedAddresses picks a client-facing host by the client's IP
	// (longest prefix wins); at most MaxAdvertisedSelectors.
	AdvertisedAddresses []AdvertisedSelector `toml:"advertised_addresses"`
	Ports               ClusterPorts         `toml:"ports"`
	// Rack is an optional failure domain: when every node names one, a
	// partition's replicas are spread over as many racks as they can be.
	Rack string `toml:"rack"`
	// MetadataOnly makes the node hold no partition replicas: it votes in
	// the metadata group and serves clients, forwarding their partition
	// requests to the partitions' leaders (a dedicated coordinator).
	MetadataOnly bool `toml:"metadata_only"`
}

// DataNodes counts the roster entries that may hold partition replicas.
func (c *ClusterConfig) DataNodes() int {
	n := 0
	for _, node := range c.Nodes {
		if !node.MetadataOnly {
			n++
		}
	}
	return n
}

// ReplicaAddr is the node's replica-plane address, ip:ports.tcp_replica:
// the replica listener binds it and peers dial it.
func (n ClusterNode) ReplicaAddr() string {
	return net.JoinHostPort(n.IP, strconv.Itoa(int(n.Ports.TCPReplica)))
}

// AdvertisedSelector is one entry of advertised_addresses.
type AdvertisedSelector struct {
	ClientCIDR string `toml:"client_cidr"`
	Address    string `toml:"address"`
}

// ClusterPorts is a roster entry's ports table; 0 means unset.
type ClusterPorts struct {
	TCP        uint16 `toml:"tcp"`
	QUIC       uint16 `toml:"quic"`
	HTTP       uint16 `toml:"http"`
	WebSocket  uint16 `toml:"websocket"`
	TCPReplica uint16 `toml:"tcp_replica"`
}

// Cluster limits (cluster-contract.md §1).
const (
	// MinClusterSecretBytes is the shortest accepted shared secret.
	MinClusterSecretBytes = 32
	// MaxAdvertisedSelectors bounds advertised_addresses per node.
	MaxAdvertisedSelectors = 16
	// MaxClusterNodes bounds the roster (replica ids are u8).
	MaxClusterNodes = 256
	// peerQueueCapacity is the reference's message_bus.peer_queue_capacity,
	// which repair_chunk_max must stay below.
	peerQueueCapacity = 256
)

// Placement defaults and choices ([cluster]).
const (
	// DefaultReplicationFactor is cluster.replication_factor's default.
	DefaultReplicationFactor = 3
	// MaxReplicationFactor bounds cluster.replication_factor and the
	// topic option (replica ids are one byte).
	MaxReplicationFactor = 255
	// DefaultReplaceDeadAfter is cluster.replace_dead_after's default:
	// long enough that a restart or a short outage never moves data,
	// short enough that a lost machine does not leave partitions one
	// failure from unavailability for long.
	DefaultReplaceDeadAfter = 10 * time.Minute
	// PartitionLeadersSpread spreads partition leadership over the nodes.
	PartitionLeadersSpread = "spread"
	// PartitionLeadersMetadata keeps every partition leader on the
	// metadata leader.
	PartitionLeadersMetadata = "metadata_leader"
)

// defaultCluster returns the reference defaults. The reference ships a
// two-node loopback roster as an example; its exact values are UNKNOWN
// here, so the default roster is empty (enabling the cluster without
// nodes is refused with a clear error).
func defaultCluster() ClusterConfig {
	return ClusterConfig{
		Name:                               "iggy-cluster",
		HeartbeatTimeout:                   Duration(5 * time.Second),
		CommitBroadcastInterval:            Duration(500 * time.Millisecond),
		PrepareRetransmitInterval:          Duration(250 * time.Millisecond),
		ViewChangeRetransmitInterval:       Duration(500 * time.Millisecond),
		ViewChangeStatusTimeout:            Duration(5 * time.Second),
		RequestStartViewRetransmitInterval: Duration(time.Second),
		ViewProbeAttemptsMax:               5,
		RepairRetryInterval:                Duration(time.Second),
		RepairChunkMax:                     128,
		SuperblockWedgedFatalTimeout:       Duration(2 * time.Minute),
		Coordinator:                        ClusterCoordinator{SkipShardZeroForReplicas: true},
		ReplicationFactor:                  DefaultReplicationFactor,
		PartitionLeaders:                   PartitionLeadersSpread,
		ReplaceDeadAfter:                   Duration(DefaultReplaceDeadAfter),
	}
}

// VSROnlyClusterKeys are the [cluster] keys that only make sense for the
// reference's Viewstamped Replication. Setting one (file or environment)
// is accepted with a warning notice.
var VSROnlyClusterKeys = []string{
	"cluster.prepare_retransmit_interval",
	"cluster.view_change_retransmit_interval",
	"cluster.view_change_status_timeout",
	"cluster.request_start_view_retransmit_interval",
	"cluster.view_probe_attempts_max",
	"cluster.repair_retry_interval",
	"cluster.repair_chunk_max",
	"cluster.superblock_wedged_fatal_timeout",
	"cluster.coordinator.skip_shard_zero_for_replicas",
	"cluster.coordinator.skip_shard_zero_for_clients",
}

// vsrNotice returns the warning for a VSR-only key, named in the message
// as subject, or false when key is not one.
func vsrNotice(key, subject string) (Notice, bool) {
	for _, k := range VSROnlyClusterKeys {
		if k == key {
			return Notice{Warn: true, Message: subject + " is accepted but ignored: it tunes the reference's view-stamped replication, Iggo replicates with raft"}, true
		}
	}
	return Notice{}, false
}

// Node returns the roster entry of ReplicaID and true, or false when there
// is none.
func (c *ClusterConfig) Node() (ClusterNode, bool) {
	for _, n := range c.Nodes {
		if int(n.ReplicaID) == c.ReplicaID {
			return n, true
		}
	}
	return ClusterNode{}, false
}
