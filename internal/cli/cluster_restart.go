package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/spf13/cobra"
)

// restartPoll is how often restart-node asks the restarted node whether it
// sees the leader.
const restartPoll = 250 * time.Millisecond

func (a *app) clusterRestartNodeCmd() *cobra.Command {
	var dir string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "restart-node N",
		Short: "Start node N of a local cluster (iggo cluster start) again after it exited",
		Long: `Start node N of the local cluster in --dir again, with its configuration, data
and log (--dir/node<N>/server.log), after it exited or was killed: the
same 'iggo server --config ... --replica-id N' that 'iggo cluster start' runs.
It refuses while the node's TCP port answers.

Like 'iggo cluster start' it stays in the foreground: it waits until the node
answers and sees the cluster's leader, prints that, and keeps running;
Ctrl-C (or SIGTERM) stops the node (SIGTERM, then SIGKILL after 10 s).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			i, err := strconv.Atoi(args[0])
			if err != nil {
				return usagef("node %q: want a replica id (0, 1, ...)", args[0])
			}
			if wait <= 0 {
				return usagef("--wait %s: want a positive duration", wait)
			}
			l, err := local.ReadLayout(dir)
			if err != nil {
				return usagef("%v (is %s a cluster started with 'iggo cluster start'?)", err, dir)
			}
			if i < 0 || i >= len(l.Nodes) {
				return usagef("node %d: %s has nodes 0..%d", i, dir, len(l.Nodes)-1)
			}
			return a.restartNode(cmd, l, i, wait)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", DefaultClusterDir, "directory of the cluster")
	cmd.Flags().DurationVar(&wait, "wait", 60*time.Second, "how long to wait for the node to see the leader")
	return cmd
}

func (a *app) restartNode(cmd *cobra.Command, l *local.Layout, i int, wait time.Duration) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	addr := l.TCPAddr(i)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s is running (%s answers); stop it first", local.NodeName(i), addr)
	}
	if err := l.WriteConfig(i); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the iggo binary: %w", err)
	}
	p, err := l.Start(bin, i, nil)
	if err != nil {
		return err
	}
	defer stopNodes(out, []*local.Process{p})
	fmt.Fprintf(out, "started %s (pid %d), log %s\n", local.NodeName(i), p.PID(), l.LogPath(i))
	leader, err := waitNodeSeesLeader(ctx, addr, p, wait)
	if err != nil {
		if p.Exited() {
			return nodeExited(cmd.ErrOrStderr(), l, p, "while starting")
		}
		return err
	}
	fmt.Fprintf(out, "%-8s %-21s back in the cluster; leader %s\nCtrl-C stops %s.\n", local.NodeName(i), addr, leader, local.NodeName(i))
	select {
	case <-ctx.Done():
		return nil
	case <-p.Done():
		return nodeExited(cmd.ErrOrStderr(), l, p, "while running")
	}
}

// waitNodeSeesLeader polls the node at addr until it names a leader,
// returning the leader's name; it gives up when p exits, ctx ends or
// wait passes.
func waitNodeSeesLeader(ctx context.Context, addr string, p *local.Process, wait time.Duration) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		m, err := local.FetchMetadata(wctx, addr, 2*time.Second)
		if err == nil {
			if li := local.LeaderIndex(m); li >= 0 {
				return m.Nodes[li].Name, nil
			}
			err = fmt.Errorf("it sees no leader yet")
		}
		last = err
		t := time.NewTimer(restartPoll)
		select {
		case <-p.Done():
			t.Stop()
			return "", fmt.Errorf("node exited: %w", p.Err())
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("%s not back after %s: %s", addr, wait, local.Reason(last, addr))
		case <-t.C:
		}
	}
}
