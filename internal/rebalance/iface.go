package rebalance

import (
	"context"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Host is the part of the raft host the Executor drives;
// *replication.Host implements it.
type Host interface {
	// Status is this node's view of group g.
	Status(g replication.GroupID) (replication.View, bool)
	// AddMember adds id to g as a learner, waits until it holds the
	// leader's log and promotes it (idempotent).
	AddMember(ctx context.Context, g replication.GroupID, id replication.NodeID) error
	// ChangeMembership proposes one configuration change of g.
	ChangeMembership(ctx context.Context, g replication.GroupID, changes []replication.MemberChange) (*raftpb.ConfState, error)
	// TransferLeadership hands this node's leadership of g to to and
	// waits until to leads.
	TransferLeadership(ctx context.Context, g replication.GroupID, to replication.NodeID) error
	// Progress is, on g's leader, each member's replicated index and the
	// leader's last index.
	Progress(ctx context.Context, g replication.GroupID) (map[replication.NodeID]uint64, uint64, error)
	// Peers is the liveness of the other nodes.
	Peers(ctx context.Context) (map[replication.NodeID]replication.Peer, error)
}

var _ Host = (*replication.Host)(nil)

// Store is the metadata plane as moves see it; *metadata.Store
// implements it.
type Store interface {
	// Placements lists every partition with its replica list and the
	// target of a move in progress.
	Placements() []metadata.PartitionPlacement
	// CommitPlacement commits one partition's replica list and target
	// from any node.
	CommitPlacement(ctx context.Context, t catalog.TopicRef, partition uint32, replicas, target []uint8) error
}

var _ Store = (*metadata.Store)(nil)

// NodeInfo is one node of the cluster as the metadata leader sees it.
type NodeInfo struct {
	// ID is the node's replica id.
	ID uint8
	// Rack is its roster rack ("" when none).
	Rack string
	// Alive is false while the node is unreachable (silent for an
	// election timeout).
	Alive bool
	// Silent is how long ago this node last heard from it.
	Silent time.Duration
}

// Cluster is what the Planner knows of the nodes; the broker implements
// it.
type Cluster interface {
	// Nodes lists the voters of the metadata group (the nodes that may
	// hold replicas) with their racks and liveness; this node is alive.
	Nodes(ctx context.Context) ([]NodeInfo, error)
	// Leader reports whether this node leads the metadata group.
	Leader() bool
}
