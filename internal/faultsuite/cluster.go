//go:build !windows

package faultsuite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// cluster runs the suite's `iggo server` processes.
type cluster struct {
	bin    string
	layout *local.Layout
	lab    *netLab // nil: loopback, no partitions
	logf   func(format string, args ...any)
	mu     sync.Mutex
	procs  []*local.Process
	paused []bool
}

// newCluster writes the configuration of n nodes under dir (in lab's
// namespaces when lab is not nil, else on free loopback ports).
func newCluster(bin, dir string, n int, lab *netLab, rng *rand.Rand, logf func(string, ...any)) (*cluster, error) {
	secret, err := local.NewSecret()
	if err != nil {
		return nil, err
	}
	l := &local.Layout{Name: "faultsuite", Dir: dir, Secret: secret}
	if lab != nil {
		for i := range n {
			l.IPs = append(l.IPs, lab.Addr(i))
			l.Netns = append(l.Netns, lab.ns[i])
			l.Nodes = append(l.Nodes, local.Ports{TCP: 8090, TCPReplica: 8190})
		}
	} else {
		ports, err := freePorts(2*n, rng)
		if err != nil {
			return nil, err
		}
		for i := range n {
			l.Nodes = append(l.Nodes, local.Ports{TCP: ports[2*i], TCPReplica: ports[2*i+1]})
		}
	}
	if err := l.Write(); err != nil {
		return nil, fmt.Errorf("write the cluster configuration: %w", err)
	}
	return &cluster{bin: bin, layout: l, lab: lab, logf: logf, procs: make([]*local.Process, n), paused: make([]bool, n)}, nil
}

// freePorts returns n distinct ports below the ephemeral range that could
// be bound on 127.0.0.1 just now.
func freePorts(n int, rng *rand.Rand) ([]uint16, error) {
	seen := map[uint16]bool{}
	var out []uint16
	for tries := 0; len(out) < n; tries++ {
		if tries > 2000 {
			return nil, fmt.Errorf("found only %d free loopback ports of %d", len(out), n)
		}
		p := uint16(20000 + rng.IntN(12000))
		if seen[p] {
			continue
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(int(p)))
		if err != nil {
			continue
		}
		ln.Close()
		out = append(out, p)
	}
	return out, nil
}

// N returns the number of nodes.
func (c *cluster) N() int { return len(c.procs) }

// Addrs returns every node's client address.
func (c *cluster) Addrs() []string { return c.layout.TCPAddrs() }

// Start starts node i with extra server flags args.
func (c *cluster) Start(i int, args ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.procs[i]; p != nil && !p.Exited() {
		return fmt.Errorf("start node %d: pid %d still running", i, p.PID())
	}
	p, err := c.layout.Start(c.bin, i, []string{"IGGY_SYSTEM_LOGGING_LEVEL=info"}, args...)
	if err != nil {
		return err
	}
	c.procs[i], c.paused[i] = p, false
	c.logf("node %d started (pid %d) %v", i, p.PID(), args)
	return nil
}

func (c *cluster) proc(i int) *local.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[i]
}

// Running reports whether node i's process runs.
func (c *cluster) Running(i int) bool {
	p := c.proc(i)
	return p != nil && !p.Exited()
}

// Kill sends SIGKILL to node i (after SIGCONT is not needed: SIGKILL
// ends a stopped process too) and waits for it to exit.
func (c *cluster) Kill(i int) error {
	p := c.proc(i)
	if p == nil || p.Exited() {
		return nil
	}
	if err := p.Kill(); err != nil {
		return err
	}
	c.mu.Lock()
	c.paused[i] = false
	c.mu.Unlock()
	c.logf("node %d killed (pid %d)", i, p.PID())
	return nil
}

// Pause freezes node i (SIGSTOP).
func (c *cluster) Pause(i int) error {
	p := c.proc(i)
	if p == nil || p.Exited() {
		return fmt.Errorf("pause node %d: not running", i)
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	c.mu.Lock()
	c.paused[i] = true
	c.mu.Unlock()
	return nil
}

// Resume thaws node i (SIGCONT).
func (c *cluster) Resume(i int) error {
	p := c.proc(i)
	if p == nil {
		return nil
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	c.mu.Lock()
	c.paused[i] = false
	c.mu.Unlock()
	return nil
}

// Wipe deletes node i's data directory (the node must be stopped).
func (c *cluster) Wipe(i int) error {
	if err := os.RemoveAll(c.layout.DataDir(i)); err != nil {
		return fmt.Errorf("wipe node %d: %w", i, err)
	}
	return nil
}

// Exited reports how node i's last process ended when it exited on its
// own (not killed by the suite): "" while it runs.
func (c *cluster) exitReason(i int) string {
	p := c.proc(i)
	if p == nil || !p.Exited() {
		return ""
	}
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// WaitLeader waits until every running, unpaused node reports the same
// metadata leader.
func (c *cluster) WaitLeader(ctx context.Context) (int, error) {
	var skip []int
	c.mu.Lock()
	for i, p := range c.procs {
		if p == nil || p.Exited() || c.paused[i] {
			skip = append(skip, i)
		}
	}
	c.mu.Unlock()
	l, _, err := local.WaitLeader(ctx, c.Addrs(), 200*time.Millisecond, skip...)
	return l, err
}

// Close kills every node.
func (c *cluster) Close() {
	for i := range c.procs {
		if p := c.proc(i); p != nil && !p.Exited() {
			_ = p.Signal(syscall.SIGCONT)
			_ = p.Kill()
		}
	}
}

// ErrorLines returns the ERROR lines of node i's log.
func (c *cluster) ErrorLines(i int) []string {
	b, err := os.ReadFile(c.layout.LogPath(i))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return out
}

// crashLine returns ": " and the last panic or ERROR line of node i's
// log, or "".
func (c *cluster) crashLine(i int) string {
	b, err := os.ReadFile(c.layout.LogPath(i))
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	for k := len(lines) - 1; k >= 0; k-- {
		if strings.HasPrefix(lines[k], "panic: ") || strings.Contains(lines[k], "level=ERROR") {
			return ": " + lines[k]
		}
	}
	return ""
}

// Tail returns the last n lines of node i's log.
func (c *cluster) Tail(i, n int) string {
	b, err := os.ReadFile(c.layout.LogPath(i))
	if err != nil {
		return ""
	}
	end := len(b)
	for k := 0; k < n && end > 0; k++ {
		j := end - 1
		for j > 0 && b[j-1] != '\n' {
			j--
		}
		end = j
	}
	return string(b[end:])
}
