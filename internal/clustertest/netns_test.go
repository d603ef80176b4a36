//go:build !windows

package clustertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
)

// netLab is a private network for a test: one network namespace per node,
// each joined by a veth pair to a bridge in the test's namespace, which
// has the address .254 of the lab's /24 so the test process reaches every
// node. Cutting a node's veth isolates it completely (clients and peers)
// while it keeps running: its connections hang instead of being reset, as
// with a real network partition.
type netLab struct {
	t      testing.TB
	tag    string
	subnet string // "10.201.K"
	bridge string
	hosts  []string // root-side veth per node
	ns     []string
}

// newNetLab builds the lab for n nodes. It needs root (network
// namespaces); without it the test is skipped with that reason.
func newNetLab(t testing.TB, n int) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root; the SIGSTOP variant (TestFrozenNodes) covers isolation without them")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is not installed; the SIGSTOP variant (TestFrozenNodes) covers isolation without it")
	}
	k := rand.IntN(250) + 1
	tag := fmt.Sprintf("%05d", rand.IntN(100000))
	lab := &netLab{t: t, tag: tag, subnet: fmt.Sprintf("10.201.%d", k), bridge: "igbr" + tag}
	t.Cleanup(lab.teardown)
	lab.ip("link", "add", lab.bridge, "type", "bridge")
	lab.ip("addr", "add", lab.subnet+".254/24", "dev", lab.bridge)
	lab.ip("link", "set", lab.bridge, "up")
	for i := range n {
		ns, host, peer := fmt.Sprintf("iggoct%s-%d", tag, i), fmt.Sprintf("ig%sh%d", tag, i), fmt.Sprintf("ig%sc%d", tag, i)
		lab.ip("netns", "add", ns)
		lab.ns = append(lab.ns, ns)
		lab.ip("link", "add", host, "type", "veth", "peer", "name", peer)
		lab.hosts = append(lab.hosts, host)
		lab.ip("link", "set", peer, "netns", ns)
		lab.ip("link", "set", host, "master", lab.bridge)
		lab.ip("link", "set", host, "up")
		lab.ip("netns", "exec", ns, "ip", "addr", "add", lab.Addr(i)+"/24", "dev", peer)
		lab.ip("netns", "exec", ns, "ip", "link", "set", peer, "up")
		lab.ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
	}
	return lab
}

// Addr returns node i's address in the lab.
func (l *netLab) Addr(i int) string { return fmt.Sprintf("%s.%d", l.subnet, i+1) }

func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Isolate cuts node i off the lab network.
func (l *netLab) Isolate(i int) {
	l.t.Helper()
	l.ip("link", "set", l.hosts[i], "down")
	l.t.Logf("node %d isolated (veth %s down)", i, l.hosts[i])
}

// Heal reconnects node i.
func (l *netLab) Heal(i int) {
	l.t.Helper()
	l.ip("link", "set", l.hosts[i], "up")
	l.t.Logf("node %d reconnected", i)
}

// teardown removes the namespaces (their veth ends go with them) and the
// bridge; it runs after the harness cleanup killed the nodes (cleanups
// run last-registered first, and the lab is built first).
func (l *netLab) teardown() {
	for _, ns := range l.ns {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	for _, h := range l.hosts {
		_ = exec.Command("ip", "link", "del", h).Run()
	}
	_ = exec.Command("ip", "link", "del", l.bridge).Run()
}

// inLab puts the nodes of a harness in the lab's namespaces.
func (l *netLab) inLab() harnessOption {
	return func(lay *local.Layout) {
		lay.IPs, lay.Netns = nil, nil
		for i := range lay.Nodes {
			lay.IPs = append(lay.IPs, l.Addr(i))
			lay.Netns = append(lay.Netns, l.ns[i])
			lay.Nodes[i] = local.Ports{TCP: 8090, TCPReplica: 8190}
		}
	}
}

// TestPartitionedLeader isolates the leader in its own network namespace
// under load (clients connected to it stay connected and keep trying; its
// requests hang), then the survivors elect a new leader and acknowledge
// writes; once the old leader is reconnected it must step down and adopt
// the majority's log. The whole history must be linearizable: no write
// acknowledged by the isolated leader may be lost, no read may be stale.
func TestPartitionedLeader(t *testing.T) {
	lab := newNetLab(t, 3)
	h := StartCluster(t, 3, lab.inLab())
	w := NewWorkload(t, h, 1)
	runLoad(w, 3)
	time.Sleep(2 * time.Second)
	old := h.WaitLeader(10 * time.Second)
	at := w.History.Now()
	lab.Isolate(old)
	h.markPaused(old, true)
	leader := h.WaitLeader(30 * time.Second)
	if leader == old {
		t.Fatalf("isolated node %d still agreed on as leader", old)
	}
	time.Sleep(4 * time.Second)
	ft, ok := failoverTime(w.History.Ops(), at)
	if !ok {
		t.Fatalf("no write acknowledged after isolating leader node %d", old)
	}
	t.Logf("leader node %d isolated, node %d leads, first acknowledged write %v after the cut", old, leader, ft.Round(time.Millisecond))
	lab.Heal(old)
	h.markPaused(old, false)
	time.Sleep(3 * time.Second)
	w.Verify(t, 30*time.Second)
}
