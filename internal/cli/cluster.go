package cli

import (
	"github.com/spf13/cobra"
)

// DefaultClusterDir is where `iggo cluster start` keeps a local cluster.
const DefaultClusterDir = "./local_cluster"

// withLocalCluster adds the local-cluster subcommands (start, status) to
// the `iggo cluster` command.
func (a *app) withLocalCluster(cmd *cobra.Command) *cobra.Command {
	cmd.AddCommand(a.clusterStartCmd(), a.clusterStatusCmd(), a.clusterAddNodeCmd(), a.clusterRemoveNodeCmd())
	return cmd
}
