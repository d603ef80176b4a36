package client

import "time"

// ClusterPolicy says how a Client follows the leader of a cluster
// (cluster-contract.md §4). After every login, including the re-login of
// a reconnect, the client reads GET_CLUSTER_METADATA; when it lists more
// than one node and the Leader (status Healthy) is at another address, the
// client dials the leader with the port of the transport in use, logs in
// there under the same client id and checks again. The zero value is the
// default behaviour.
type ClusterPolicy struct {
	// DisableRedirect turns leader following off: the client stays on the
	// node it dialed (reconnects still rotate through the known addresses).
	DisableRedirect bool
	// MaxRedirects bounds the moves of one settle (one login and the
	// checks after it); 0 means DefaultMaxRedirects. A cluster whose nodes
	// name each other as leader ends with the client on the last one.
	MaxRedirects int
	// FailoverCheck is how long a non-login request must keep getting 58
	// TransientNotAccepted before the client re-reads the metadata and
	// moves to the leader if it is elsewhere; 0 means
	// DefaultFailoverCheck.
	FailoverCheck time.Duration
	// LeaderlessWait is how long a check polls a metadata reply that names
	// no leader before it gives up and stays; 0 means
	// DefaultLeaderlessWait.
	LeaderlessWait time.Duration
	// LeaderlessPoll is the pause between those polls; 0 means
	// DefaultLeaderlessPoll.
	LeaderlessPoll time.Duration
	// PartitionMapMaxAge is the age after which the partition map of
	// partition routing (WithPartitionRouting) is read again while
	// partition requests use it; 0 means DefaultPartitionMapMaxAge.
	PartitionMapMaxAge time.Duration
	// PartitionMapMinInterval is the least time between two reads of the
	// partition map, also when not-leader answers ask for one; a node
	// whose connection failed is left alone for four times as long. 0
	// means DefaultPartitionMapMinInterval.
	PartitionMapMinInterval time.Duration
}

// Leader-following defaults, those of the official Go SDK
// (cluster-contract.md §4).
const (
	DefaultMaxRedirects   = 3
	DefaultFailoverCheck  = 2 * time.Second
	DefaultLeaderlessWait = 5 * time.Second
	DefaultLeaderlessPoll = 250 * time.Millisecond
)

// normalize fills zero fields with their defaults.
func (p *ClusterPolicy) normalize() {
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = DefaultMaxRedirects
	}
	if p.FailoverCheck <= 0 {
		p.FailoverCheck = DefaultFailoverCheck
	}
	if p.LeaderlessWait <= 0 {
		p.LeaderlessWait = DefaultLeaderlessWait
	}
	if p.LeaderlessPoll <= 0 {
		p.LeaderlessPoll = DefaultLeaderlessPoll
	}
	if p.PartitionMapMaxAge <= 0 {
		p.PartitionMapMaxAge = DefaultPartitionMapMaxAge
	}
	if p.PartitionMapMinInterval <= 0 {
		p.PartitionMapMinInterval = DefaultPartitionMapMinInterval
	}
}

// WithClusterPolicy sets how the client follows the cluster leader.
func WithClusterPolicy(p ClusterPolicy) Option { return func(o *options) { o.cluster = p } }

// WithServerAddresses adds seed addresses ("host:port") that Dial tries,
// in order, after the ones in its addr argument; Dial's addr may then be
// empty. Reconnects rotate through the current address, these seeds and
// the healthy nodes learned from the last cluster metadata read.
func WithServerAddresses(addrs ...string) Option {
	return func(o *options) { o.seeds = append(o.seeds, addrs...) }
}
