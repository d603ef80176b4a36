//go:build !windows

package faultsuite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// netLab is the suite's private network: one network namespace per node,
// each joined by a veth pair to a bridge in the suite's namespace (which
// has address .254, so clients reach every node). Faults between nodes
// are policy rules in the receiving node's namespace that blackhole the
// packets arriving from a given peer (`ip rule add pref 10 from PEER iif
// DEV blackhole`): a directed drop, so one-way partitions are a single rule
// and a full cut is two. Clients (from .254) are never cut.
type netLab struct {
	tag    string
	subnet string // "10.203.K"
	bridge string
	hosts  []string // suite-side veth per node
	inner  []string // node-side veth per node
	ns     []string
	mu     sync.Mutex
	drops  map[[2]int]bool // from, to
}

// newNetLab builds the lab for n nodes, or says why it cannot.
func newNetLab(n int, rng *rand.Rand) (*netLab, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("the ip command (iproute2) is not installed")
	}
	k := rng.IntN(250) + 1
	tag := fmt.Sprintf("%05d", rng.IntN(100000))
	l := &netLab{tag: tag, subnet: fmt.Sprintf("10.203.%d", k), bridge: "fsbr" + tag, drops: map[[2]int]bool{}}
	steps := [][]string{
		{"link", "add", l.bridge, "type", "bridge"},
		{"addr", "add", l.subnet + ".254/24", "dev", l.bridge},
		{"link", "set", l.bridge, "up"},
	}
	for i := range n {
		ns, host, peer := fmt.Sprintf("iggofs%s-%d", tag, i), fmt.Sprintf("fs%sh%d", tag, i), fmt.Sprintf("fs%sc%d", tag, i)
		l.ns, l.hosts, l.inner = append(l.ns, ns), append(l.hosts, host), append(l.inner, peer)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"link", "add", host, "type", "veth", "peer", "name", peer},
			[]string{"link", "set", peer, "netns", ns},
			[]string{"link", "set", host, "master", l.bridge},
			[]string{"link", "set", host, "up"},
			[]string{"netns", "exec", ns, "ip", "addr", "add", l.Addr(i) + "/24", "dev", peer},
			[]string{"netns", "exec", ns, "ip", "link", "set", peer, "up"},
			[]string{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
			// The local table is consulted by rule 0, before any rule
			// could drop a packet addressed to this node: move it after
			// the drop rules (preference 10).
			[]string{"netns", "exec", ns, "ip", "rule", "add", "pref", "100", "lookup", "local"},
			[]string{"netns", "exec", ns, "ip", "rule", "del", "pref", "0"},
		)
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Addr returns node i's address in the lab.
func (l *netLab) Addr(i int) string { return fmt.Sprintf("%s.%d", l.subnet, i+1) }

func ipCmd(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Drop makes node to drop every packet arriving from node from.
func (l *netLab) Drop(from, to int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drops[[2]int{from, to}] {
		return nil
	}
	if err := ipCmd("netns", "exec", l.ns[to], "ip", "rule", "add", "pref", "10", "from", l.Addr(from), "iif", l.inner[to], "blackhole"); err != nil {
		return fmt.Errorf("cut %d->%d: %w", from, to, err)
	}
	l.drops[[2]int{from, to}] = true
	return nil
}

// HealAll removes every drop rule.
func (l *netLab) HealAll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for d := range l.drops {
		from, to := d[0], d[1]
		if err := ipCmd("netns", "exec", l.ns[to], "ip", "rule", "del", "pref", "10", "from", l.Addr(from), "iif", l.inner[to], "blackhole"); err != nil {
			errs = append(errs, fmt.Errorf("heal %d->%d: %w", from, to, err))
			continue
		}
		delete(l.drops, d)
	}
	return errors.Join(errs...)
}

// Close removes the namespaces (their veth ends go with them) and the
// bridge; it runs after every node was killed.
func (l *netLab) Close() {
	for _, ns := range l.ns {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	for _, h := range l.hosts {
		_ = exec.Command("ip", "link", "del", h).Run()
	}
	_ = exec.Command("ip", "link", "del", l.bridge).Run()
}
