//go:build !windows

package clustertest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// Harness runs a cluster of real `iggo server` processes on free loopback
// ports, each with its own data directory under the test's temporary
// directory, and can kill, freeze, thaw and restart them.
type Harness struct {
	t      testing.TB
	Layout *local.Layout
	mu     sync.Mutex
	procs  []*local.Process
	paused []bool
}

// harnessOption adjusts the layout before the nodes start.
type harnessOption func(*local.Layout)

// StartCluster starts n nodes and waits until all answer and agree on a
// leader. The
// nodes are stopped (SIGKILL, by PID) in the test cleanup, and their logs
// copied to the test output when the test failed or IGGO_TEST_LOG is set.
func StartCluster(t testing.TB, n int, opts ...harnessOption) *Harness {
	t.Helper()
	requireBinary(t)
	ports := freePorts(t, 2*n)
	secret, err := local.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	l := &local.Layout{Name: "clustertest", Dir: t.TempDir(), Secret: secret}
	for i := range n {
		l.Nodes = append(l.Nodes, local.Ports{TCP: ports[2*i], TCPReplica: ports[2*i+1]})
	}
	for _, o := range opts {
		o(l)
	}
	if err := l.Write(); err != nil {
		t.Fatal(err)
	}
	h := &Harness{t: t, Layout: l, procs: make([]*local.Process, n), paused: make([]bool, n)}
	t.Cleanup(h.cleanup)
	for i := range n {
		h.Start(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, _, err := local.WaitReady(ctx, l.TCPAddrs(), 100*time.Millisecond); err != nil {
		t.Fatalf("cluster not ready within 60 s: %v", err)
	}
	return h
}

// freePorts returns n distinct ports below the usual ephemeral range
// (32768+) that could be bound on 127.0.0.1 just now, so outgoing
// connections do not take them before the nodes bind them.
func freePorts(t testing.TB, n int) []uint16 {
	t.Helper()
	seen := map[uint16]bool{}
	var out []uint16
	for tries := 0; len(out) < n; tries++ {
		if tries > 2000 {
			t.Fatalf("found only %d free loopback ports of %d", len(out), n)
		}
		p := uint16(20000 + rand.IntN(12000))
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
	return out
}

// N returns the number of nodes. Like Addr it is safe while a test grows
// the cluster (grow appends under mu).
func (h *Harness) N() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.procs)
}

// Addr returns node i's client address.
func (h *Harness) Addr(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Layout.TCPAddr(i)
}

// addrs returns every node's client address.
func (h *Harness) addrs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Layout.TCPAddrs()
}

// Start starts node i (its previous process must have exited), with
// extra server flags args.
func (h *Harness) Start(i int, args ...string) {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if p := h.procs[i]; p != nil && !p.Exited() {
		h.t.Fatalf("start node %d: pid %d still running", i, p.PID())
	}
	level := "info"
	if l := os.Getenv("IGGO_TEST_LOG_LEVEL"); l != "" {
		level = l // e.g. debug: raft's role and term changes
	}
	p, err := h.Layout.Start(iggoBin, i, []string{"IGGY_SYSTEM_LOGGING_LEVEL=" + level}, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.procs[i], h.paused[i] = p, false
	h.t.Logf("node %d started (pid %d)", i, p.PID())
}

// Kill sends SIGKILL to node i and waits for it to exit.
func (h *Harness) Kill(i int) {
	h.t.Helper()
	p := h.proc(i)
	if err := p.Kill(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Logf("node %d killed (pid %d)", i, p.PID())
}

// Pause freezes node i (SIGSTOP): its sockets stay open but it answers
// nothing, as a node cut off by the network.
func (h *Harness) Pause(i int) {
	h.t.Helper()
	p := h.proc(i)
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	h.paused[i] = true
	h.mu.Unlock()
	h.t.Logf("node %d stopped (SIGSTOP, pid %d)", i, p.PID())
}

// Resume thaws node i (SIGCONT).
func (h *Harness) Resume(i int) {
	h.t.Helper()
	p := h.proc(i)
	if err := p.Signal(syscall.SIGCONT); err != nil {
		h.t.Fatal(err)
	}
	h.mu.Lock()
	h.paused[i] = false
	h.mu.Unlock()
	h.t.Logf("node %d continued (SIGCONT, pid %d)", i, p.PID())
}

// Restart kills node i when it runs, optionally deletes its data
// directory, and starts it again with extra server flags args.
func (h *Harness) Restart(i int, wipe bool, args ...string) {
	h.t.Helper()
	if p := h.proc(i); !p.Exited() {
		h.Kill(i)
	}
	if wipe {
		if err := os.RemoveAll(h.Layout.DataDir(i)); err != nil {
			h.t.Fatal(err)
		}
		h.t.Logf("node %d data directory wiped", i)
	}
	h.Start(i, args...)
}

// markPaused records that node i is unreachable (or reachable again) for
// a reason other than a signal, e.g. a cut network link, so leader
// surveys leave it out.
func (h *Harness) markPaused(i int, paused bool) {
	h.mu.Lock()
	h.paused[i] = paused
	h.mu.Unlock()
}

// Exited reports whether node i's process has exited.
func (h *Harness) Exited(i int) bool { return h.proc(i).Exited() }

func (h *Harness) proc(i int) *local.Process {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.procs[i]
}

// Down returns the nodes not to consult: exited or frozen.
func (h *Harness) Down() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for i, p := range h.procs {
		if p == nil || p.Exited() || h.paused[i] {
			out = append(out, i)
		}
	}
	return out
}

// WaitLeader waits until the running nodes agree on a leader and returns
// it, failing the test after timeout.
func (h *Harness) WaitLeader(timeout time.Duration) int {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	l, _, err := local.WaitLeader(ctx, h.addrs(), 100*time.Millisecond, h.Down()...)
	if err != nil {
		h.t.Fatalf("no leader within %s: %v", timeout, err)
	}
	return l
}

// DialLeader waits for a leader (up to 30 s), logs in there as root and
// returns the connection (the caller closes it) and the leader.
func (h *Harness) DialLeader() (*local.Conn, int) {
	h.t.Helper()
	leader := h.WaitLeader(30 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := local.DialLogin(ctx, h.Addr(leader))
	if err != nil {
		h.t.Fatalf("log in on leader node %d: %v", leader, err)
	}
	return c, leader
}

// Metadata asks node i for GET_CLUSTER_METADATA.
func (h *Harness) Metadata(i int) (wire.ClusterMetadata, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return local.FetchMetadata(ctx, h.Addr(i), 3*time.Second)
}

// LogLines returns the lines of node i's log containing every one of subs.
func (h *Harness) LogLines(i int, subs ...string) []string {
	f, err := os.Open(h.Layout.LogPath(i))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
next:
	for sc.Scan() {
		for _, s := range subs {
			if !strings.Contains(sc.Text(), s) {
				continue next
			}
		}
		out = append(out, sc.Text())
	}
	return out
}

// cleanup kills every node and reports their logs when useful.
func (h *Harness) cleanup() {
	for i := range h.procs {
		if p := h.proc(i); p != nil && !p.Exited() {
			_ = p.Signal(syscall.SIGCONT)
			_ = p.Kill()
		}
	}
	if !h.t.Failed() && os.Getenv("IGGO_TEST_LOG") == "" {
		return
	}
	for i := range h.procs {
		b, err := os.ReadFile(h.Layout.LogPath(i))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if os.Getenv("IGGO_TEST_LOG") == "" && len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		h.t.Logf("---- node %d log (%s) ----\n%s", i, h.Layout.LogPath(i), strings.Join(lines, "\n"))
	}
}

// String names the harness for messages.
func (h *Harness) String() string {
	return fmt.Sprintf("%d-node cluster in %s", h.N(), h.Layout.Dir)
}
