package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// ClusterAddNode adds a node to an Iggo cluster at run time
// (CLUSTER_ADD_NODE, an Iggo extension): start the node first with
// `iggo server --join` and a roster that lists it; the call returns once
// the node holds the data of every group and votes in them. It needs the
// manage_servers permission and runs on the metadata leader (the client
// follows the leader on 58). Adding many partitions takes a while: give
// ctx room (the server bounds the command at five minutes).
func (c *Client) ClusterAddNode(ctx context.Context, node wire.ClusterNodeSpec) error {
	return c.call(ctx, wire.CmdClusterAddNode, &node, nil)
}

// ClusterRemoveNode removes a node from an Iggo cluster
// (CLUSTER_REMOVE_NODE): it leaves every raft group, then the roster.
// Stop the node afterwards.
func (c *Client) ClusterRemoveNode(ctx context.Context, replicaID uint8) error {
	return c.call(ctx, wire.CmdClusterRemoveNode, &wire.ClusterRemoveNode{ReplicaID: replicaID}, nil)
}
