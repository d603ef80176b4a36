package cli

import (
	"github.com/spf13/cobra"
)

// DefaultClusterDir is where `iggo cluster start` keeps a local cluster.
const DefaultClusterDir = "./local_cluster"

// DefaultClusterBasePort is node 0's TCP port in `iggo cluster start`:
// node i serves clients on base+i, replicates on base+100+i and serves
// HTTP on base+200+i. It is clear of a standalone server's defaults (TCP
// 8090, QUIC 8080, WebSocket 8092, HTTP 3000), so both can run at once.
const DefaultClusterBasePort = 18090

// withLocalCluster adds the local-cluster subcommands (start, status,
// restart-node), the node administration commands (add-node,
// remove-node, rebalance) and the partition map (partitions) to the
// `iggo cluster` command.
func (a *app) withLocalCluster(cmd *cobra.Command) *cobra.Command {
	cmd.AddCommand(a.clusterStartCmd(), a.clusterStatusCmd(), a.clusterRestartNodeCmd(), a.clusterAddNodeCmd(), a.clusterRemoveNodeCmd(),
		a.clusterRebalanceCmd(), a.clusterPartitionsCmd())
	return cmd
}
