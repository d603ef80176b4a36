package cli

import (
	"context"
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
the node to the metadata group and to every partition group as a learner, waits
until it holds each group's data, and only then makes it a voter. Needs the
manage_servers permission.`,
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
				fmt.Fprintf(cmd.OutOrStdout(), "node %d (%s) added: it votes in every group\n", replicaID, spec.Name)
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
	return a.clientCommand(cmd)
}

// clusterRemoveNodeCmd is `iggo cluster remove-node`.
func (a *app) clusterRemoveNodeCmd() *cobra.Command {
	var replicaID int
	cmd := &cobra.Command{
		Use:   "remove-node",
		Short: "Remove a node from a running cluster",
		Long: `Remove a node from every raft group of a running cluster, then from the
roster. Stop the node afterwards. Removing the leader first hands its
leadership to another node. Needs the manage_servers permission.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replicaID < 0 || replicaID > 255 {
				return usagef("--replica-id %d: want 0..255", replicaID)
			}
			a.adminTimeout()
			return a.withClient(cmd, func(c *client.Client) error {
				if err := a.call(cmd, func(ctx context.Context) error { return c.ClusterRemoveNode(ctx, uint8(replicaID)) }); err != nil {
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

// adminTimeout raises a finite --timeout to adminTimeoutMin: the reply
// comes once the server finished, and the SDK treats a reply slower than
// its response timeout as a broken connection.
func (a *app) adminTimeout() {
	if a.timeout > 0 && a.timeout < adminTimeoutMin {
		a.timeout = adminTimeoutMin
	}
}
