package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/spf13/cobra"
)

// clusterStopGrace is how long a node gets to exit after SIGTERM before
// SIGKILL.
const clusterStopGrace = 10 * time.Second

type clusterStartFlags struct {
	nodes    int
	dir      string
	basePort uint16
	http     bool
	fresh    bool
	wait     time.Duration
}

func (a *app) clusterStartCmd() *cobra.Command {
	var f clusterStartFlags
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a local cluster of iggo server processes on 127.0.0.1 and keep it running",
		Long: `Start a local cluster for trying cluster mode out: one 'iggo server' process per
node, all on 127.0.0.1, each with its own configuration, data and log under
--dir (node<i>/config.toml, node<i>/data, node<i>/server.log). Node i is replica
i, serves TCP on base-port+i and talks to the others on base-port+100+i (HTTP on
base-port+200+i with --http; QUIC and WebSocket are off). The replica port is
authenticated with a secret generated once and kept in --dir/shared_secret. The
root user is iggy/iggy.

An existing --dir is started again with its data and layout (--nodes and
--base-port must then match, or use --fresh to delete it first; --fresh only
deletes a directory holding a cluster made by this command, or an empty one).

The default base port, 18090, keeps the cluster clear of a standalone
server's ports (TCP 8090, QUIC 8080, WebSocket 8092, HTTP 3000). When
IGGY_TCP_ADDRESS is set, its IP is the nodes' address (a wildcard such as
0.0.0.0 opens the client ports on every interface while the nodes reach each
other on 127.0.0.1); its port is not used.

The command waits until the nodes agree on a leader, prints every node with
its role and how to connect, and keeps running: Ctrl-C (or SIGTERM) stops the
nodes (SIGTERM, then SIGKILL after 10 s). 'iggo cluster status --dir DIR'
shows the roles from another terminal. A node that exits is not restarted
behind your back (stopping one is how failover is tried out): bring it back
with 'iggo cluster restart-node N --dir DIR' from another terminal.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runClusterStart(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.nodes, "nodes", 3, "number of nodes (1..100)")
	fs.StringVar(&f.dir, "dir", DefaultClusterDir, "directory of the cluster (configurations, data, logs)")
	fs.Uint16Var(&f.basePort, "base-port", DefaultClusterBasePort, "TCP port of node 0; node i uses base+i, replica port base+100+i")
	fs.BoolVar(&f.http, "http", false, "enable the HTTP transport (port base+200+i)")
	fs.BoolVar(&f.fresh, "fresh", false, "delete --dir before starting")
	fs.DurationVar(&f.wait, "wait", 60*time.Second, "how long to wait for a leader")
	return cmd
}

// clusterLayout returns the layout to start: the one recorded in f.dir, or
// a new one written there.
func clusterLayout(cmd *cobra.Command, f clusterStartFlags, ip string) (*local.Layout, error) {
	if f.fresh {
		// Only a directory this command made (or an empty one) is
		// deleted, so a mistyped --dir cannot remove anything else.
		if ents, err := os.ReadDir(f.dir); err == nil && len(ents) > 0 {
			if _, err := os.Stat(filepath.Join(f.dir, local.LayoutFile)); err != nil {
				return nil, usagef("--fresh: %s is not a cluster directory (no %s); not deleting it", f.dir, local.LayoutFile)
			}
		}
		if err := os.RemoveAll(f.dir); err != nil {
			return nil, fmt.Errorf("delete %s: %w", f.dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, local.LayoutFile)); err == nil {
		l, err := local.ReadLayout(f.dir)
		if err != nil {
			return nil, err
		}
		fl := cmd.Flags()
		if (fl.Changed("nodes") && f.nodes != len(l.Nodes)) || (fl.Changed("base-port") && f.basePort != l.Nodes[0].TCP) || (fl.Changed("http") && f.http != l.HTTP) {
			return nil, usagef("%s holds a cluster of %d nodes from port %d (http %v); use --fresh to replace it", f.dir, len(l.Nodes), l.Nodes[0].TCP, l.HTTP)
		}
		if err := applyClusterIP(l, ip, true); err != nil {
			return nil, err
		}
		// Rewrite the configurations: they follow this binary's format.
		return l, l.Write()
	}
	l, err := local.NewLayout(f.dir, f.nodes, f.basePort, f.http)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if err := applyClusterIP(l, ip, false); err != nil {
		return nil, err
	}
	return l, l.Write()
}

func (a *app) runClusterStart(cmd *cobra.Command, f clusterStartFlags) error {
	if f.wait <= 0 {
		return usagef("--wait %s: want a positive duration", f.wait)
	}
	out := cmd.OutOrStdout()
	ip, err := clusterIP(out, a.getenv(envTCPAddress))
	if err != nil {
		return err
	}
	l, err := clusterLayout(cmd, f, ip)
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the iggo binary: %w", err)
	}
	ctx := cmd.Context()
	procs := make([]*local.Process, 0, len(l.Nodes))
	defer func() { stopNodes(out, procs) }()
	for i := range l.Nodes {
		p, err := l.Start(bin, i, nil)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		fmt.Fprintf(out, "started %s (pid %d), log %s\n", local.NodeName(i), p.PID(), l.LogPath(i))
	}
	leader, views, err := waitClusterLeader(ctx, cmd.ErrOrStderr(), l, procs, f.wait)
	if err != nil {
		return err
	}
	printClusterNodes(out, l, views, leader)
	fmt.Fprintf(out, "\nconnect:  iggo --addr %s ping\nall nodes: --addr %s\nstatus:   iggo cluster status --dir %s\nCtrl-C stops the cluster.\n",
		l.TCPAddr(leader), strings.Join(l.TCPAddrs(), ","), l.Dir)
	return watchNodes(ctx, out, l, procs)
}

// waitClusterLeader waits until the nodes agree on a leader, failing early
// when a node exits (with the end of its log).
func waitClusterLeader(ctx context.Context, errOut io.Writer, l *local.Layout, procs []*local.Process, wait time.Duration) (int, []local.NodeView, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	exited := make(chan *local.Process, len(procs))
	for _, p := range procs {
		go func() {
			select {
			case <-p.Done():
				exited <- p
			case <-wctx.Done():
			}
		}()
	}
	type result struct {
		leader int
		views  []local.NodeView
		err    error
	}
	res := make(chan result, 1)
	go func() {
		leader, views, err := local.WaitReady(wctx, l.TCPAddrs(), 250*time.Millisecond)
		res <- result{leader, views, err}
	}()
	select {
	case p := <-exited:
		cancel()
		<-res
		return -1, nil, nodeExited(errOut, l, p, "while starting")
	case r := <-res:
		if r.err != nil {
			if ctx.Err() != nil {
				return -1, nil, ctx.Err()
			}
			return -1, nil, fmt.Errorf("cluster not ready after %s: %w", wait, r.err)
		}
		return r.leader, r.views, nil
	}
}

// printClusterNodes prints one line per node: name, address, role.
func printClusterNodes(out io.Writer, l *local.Layout, views []local.NodeView, leader int) {
	for i := range l.Nodes {
		role := "follower"
		switch {
		case i == leader:
			role = "leader"
		case i < len(views) && views[i].Err != nil:
			role = "unreachable"
		}
		fmt.Fprintf(out, "%-8s %-21s %s\n", local.NodeName(i), l.TCPAddr(i), role)
	}
}

// watchNodes reports nodes that exit on their own and returns when ctx
// ends (nil: a Ctrl-C is the normal way to stop) or when every node has
// exited (an error).
func watchNodes(ctx context.Context, out io.Writer, l *local.Layout, procs []*local.Process) error {
	var wg sync.WaitGroup
	left := make(chan struct{})
	var mu sync.Mutex
	alive := len(procs)
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.Done():
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil {
					fmt.Fprintf(out, "%s (pid %d) exited: %v; log %s\n  bring it back: iggo cluster restart-node %d --dir %s\n",
						local.NodeName(p.Index), p.PID(), p.Err(), l.LogPath(p.Index), p.Index, l.Dir)
				}
				alive--
				if alive == 0 {
					close(left)
				}
			case <-ctx.Done():
			}
		}()
	}
	defer wg.Wait()
	select {
	case <-ctx.Done():
		return nil
	case <-left:
		return errors.New("every node of the cluster has exited")
	}
}

// stopNodes stops every node still running, all at once: SIGTERM, then
// SIGKILL after clusterStopGrace.
func stopNodes(out io.Writer, procs []*local.Process) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range procs {
		if p.Exited() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			killed, err := p.Stop(clusterStopGrace)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				fmt.Fprintf(out, "stop %s: %v\n", local.NodeName(p.Index), err)
			case killed:
				fmt.Fprintf(out, "%s (pid %d) killed after %s\n", local.NodeName(p.Index), p.PID(), clusterStopGrace)
			default:
				fmt.Fprintf(out, "%s (pid %d) stopped\n", local.NodeName(p.Index), p.PID())
			}
		}()
	}
	wg.Wait()
}

// nodeExited prints the end of the log of a node that exited, one line
// per log line, and returns the error saying so.
func nodeExited(w io.Writer, l *local.Layout, p *local.Process, when string) error {
	path := l.LogPath(p.Index)
	fmt.Fprintf(w, "end of %s:\n", path)
	for line := range strings.Lines(logTail(path, 20)) {
		fmt.Fprintf(w, "  %s", line)
	}
	fmt.Fprintln(w)
	return fmt.Errorf("%s exited %s (%v); its log is %s (end printed above)", local.NodeName(p.Index), when, p.Err(), path)
}

// logTail returns the last n lines of the file at path.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
