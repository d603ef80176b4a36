package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// ClusterRebalance asks an Iggo cluster to balance the partitions'
// replicas over its nodes (CLUSTER_REBALANCE, an Iggo extension). It
// returns once the first moves are committed, with how many it started
// and how many are in progress; the server plans the others as those
// finish (a rebalance already running merges with this one). It needs the
// manage_servers permission and runs on the metadata leader (the client
// follows the leader on 58).
func (c *Client) ClusterRebalance(ctx context.Context) (wire.ClusterRebalanceReply, error) {
	var r wire.ClusterRebalanceReply
	err := c.call(ctx, wire.CmdClusterRebalance, wire.Empty{}, &r)
	return r, err
}
