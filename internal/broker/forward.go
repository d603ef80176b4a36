package broker

import (
	"context"
	"time"

	"github.com/iggo-dev/iggo/internal/partition"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Kinds of the calls between cluster nodes (replication.Host.Call).
const (
	// callForward carries a partition request a node that does not lead
	// the partition forwards to its leader (partition.ServeForwarded).
	callForward uint8 = 1
)

// partitionForwarder is the partition plane's seam to the other nodes
// (partition.Forwarder): the leader directory and calls of the host.
type partitionForwarder struct{ b *Broker }

func (f partitionForwarder) host() *replication.Host { return f.b.cl.node.host }

// Self implements partition.Forwarder.
func (f partitionForwarder) Self() replication.NodeID {
	return replication.NodeID(f.b.cl.self.ReplicaID)
}

// LeaderOf implements partition.Forwarder.
func (f partitionForwarder) LeaderOf(g replication.GroupID) (replication.NodeID, bool) {
	return f.host().LeaderOf(g)
}

// AwaitLeader implements partition.Forwarder.
func (f partitionForwarder) AwaitLeader(ctx context.Context, g replication.GroupID) (replication.NodeID, error) {
	return f.host().AwaitLeader(ctx, g)
}

// AwaitReadable implements partition.Forwarder.
func (f partitionForwarder) AwaitReadable(ctx context.Context, g replication.GroupID, within time.Duration) error {
	return f.host().AwaitReadable(ctx, g, within)
}

// Forward implements partition.Forwarder.
func (f partitionForwarder) Forward(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error) {
	return f.host().Call(ctx, to, callForward, payload)
}

var _ partition.Forwarder = partitionForwarder{}
