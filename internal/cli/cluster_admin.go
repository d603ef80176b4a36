package cli

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// adminTimeoutMin is the request timeout of the node administration commands
// when --timeout is not set longer: adding a node moves the data of every
// partition to it first.
const adminTimeoutMin = 5 * time.Minute

// clusterAddNodeCmd is `iggo cluster add-node`.
func (a *app) clusterAddNodeCmd() *cobra.Command {
	var spec wire.ClusterNodeSpec
	var replicaID int
	cmd := &cobra.Command{
		Use:   "add-node",
		Short: "Add a node to a running cluster (the node must run with iggo server --join)",
		Long: `Add a node to a running cluster. Start the new node first with a roster that
lists it (iggo server --config <file> --replica-id N --join); then this command,
sent to any node (the client follows the leader), commits the new roster, adds
the node to the metadata group as a learner, waits until it holds the metadata,
and only then makes it a voter. A rebalance follows: replicas of partitions move
onto the new node in the background, a few at a time (each one is copied to it
before it votes, then the replica it replaces is removed); iggo cluster
partitions shows where they are. Needs the manage_servers permission.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replicaID < 0 || replicaID > 255 {
				return usagef("--replica-id %d: want 0..255", replicaID)
			}
			if _, err := netip.ParseAddr(spec.IP); err != nil {
				return usagef("--ip %q: want a literal IP address", spec.IP)
			}
			if spec.Name == "" || spec.TCPPort == 0 || spec.ReplicaPort == 0 {
				return usagef("--name, --tcp-port and --replica-port are required")
			}
			spec.ReplicaID = uint8(replicaID)
			a.adminTimeout()
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.ClusterAddNode(ctx, spec) }); err != nil {
					return wrapf(err, "add node %d", replicaID)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "node %d (%s) added: replicas move onto it in the background\n", replicaID, spec.Name)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&replicaID, "replica-id", -1, "replica id of the new node (as in its roster entry)")
	f.StringVar(&spec.Name, "name", "", "name of the new node")
	f.StringVar(&spec.IP, "ip", "", "roster IP of the new node (literal)")
	f.Uint16Var(&spec.TCPPort, "tcp-port", 0, "client TCP port of the new node")
	f.Uint16Var(&spec.ReplicaPort, "replica-port", 0, "replica port of the new node (ports.tcp_replica)")
	f.Uint16Var(&spec.QUICPort, "quic-port", 0, "client QUIC port (0: none)")
	f.Uint16Var(&spec.HTTPPort, "http-port", 0, "HTTP port (0: none)")
	f.Uint16Var(&spec.WebSocketPort, "websocket-port", 0, "WebSocket port (0: none)")
	f.StringVar(&spec.Rack, "rack", "", "rack of the new node (required when the cluster's nodes have racks, refused when they have none)")
	f.BoolVar(&spec.MetadataOnly, "metadata-only", false, "the new node holds no partition replicas (metadata_only)")
	return a.clientCommand(cmd)
}

// clusterRemoveNodeCmd is `iggo cluster remove-node`.
func (a *app) clusterRemoveNodeCmd() *cobra.Command {
	var replicaID int
	cmd := &cobra.Command{
		Use:   "remove-node",
		Short: "Remove a node from a running cluster",
		Long: `Remove a node from a running cluster. Its replicas are first moved to the
other nodes (a drain, a few partitions at a time; the server logs the progress),
then it leaves the metadata group and the roster. Stop the node afterwards.
Removing the leader first hands its leadership to another node.

The removal is refused (InvalidReplicationFactor) while the node is reachable
and the other nodes cannot hold some partition's replication factor (each holds
a replica of it already): add a node first. A node that is down is removed
anyway; the partitions no other node can take then run one replica short until
a node is added (a rebalance then places the missing replicas); a down node is
not removed while a partition of 1 or 2 replicas has one on it (without it, the
partition has no quorum to change). Needs the manage_servers permission.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replicaID < 0 || replicaID > 255 {
				return usagef("--replica-id %d: want 0..255", replicaID)
			}
			a.adminTimeout()
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.ClusterRemoveNode(ctx, uint8(replicaID)) }); err != nil {
					if errors.Is(err, wire.ErrInvalidReplicationFactor) {
						return wrapf(err, "remove node %d: the other nodes cannot take its replicas (the server log names the partition): add a node first, or stop node %d to remove it anyway", replicaID, replicaID)
					}
					return wrapf(err, "remove node %d", replicaID)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "node %d removed: stop it now\n", replicaID)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&replicaID, "replica-id", -1, "replica id of the node to remove")
	return a.clientCommand(cmd)
}

// clusterRebalanceCmd is `iggo cluster rebalance`.
func (a *app) clusterRebalanceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rebalance",
		Short: "Move partition replicas so that every node holds about as many",
		Long: `Balance the partitions' replicas over the nodes of a running cluster. The
metadata leader plans replica moves and starts the first few (at most 4 are in
progress in the whole cluster); this command answers once they are committed and
prints how many it started; the others follow as those finish. A move copies
the partition to its new node (a learner that votes once it caught up), then
removes the replica it replaces; the partition stays writable throughout.
A rebalance already running merges with this one. Needs the manage_servers
permission.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.adminTimeout()
			return a.withClient(cmd, func(c *client.Client) error {
				var r wire.ClusterRebalanceReply
				err := a.call(cmd, func(ctx context.Context) error {
					var err error
					r, err = c.ClusterRebalance(ctx)
					return err
				})
				if err != nil {
					return wrapf(err, "rebalance")
				}
				switch {
				case !r.Known:
					fmt.Fprintln(cmd.OutOrStdout(), "rebalance started")
				case r.InProgress == 0:
					fmt.Fprintln(cmd.OutOrStdout(), "rebalance: the replicas are balanced, nothing to move")
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "rebalance: %d replica moves started, %d in progress; the others follow as these finish\n", r.Started, r.InProgress)
				}
				return nil
			})
		},
	}
	return a.clientCommand(cmd)
}

// adminTimeout raises a finite --timeout to adminTimeoutMin: the reply
// comes once the server finished, and the SDK treats a reply slower than
// its response timeout as a broken connection.
func (a *app) adminTimeout() {
	if a.timeout > 0 && a.timeout < adminTimeoutMin {
		a.timeout = adminTimeoutMin
	}
}
