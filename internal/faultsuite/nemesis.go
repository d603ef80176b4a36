//go:build !windows

package faultsuite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// nemesis injects the faults of a schedule into a cluster and counts
// them.
type nemesis struct {
	c      *cluster
	logf   func(string, ...any)
	mu     sync.Mutex
	counts map[string]int // injected faults by kind (corruption by file kind)
	errs   []string       // faults that could not be applied or healed
	seen   map[string]int // how often each of errs happened
	// pending are nodes removed from the cluster whose add-back is still
	// to be done (a membership step that could not finish).
	pending []int
}

func newNemesis(c *cluster, logf func(string, ...any)) *nemesis {
	return &nemesis{c: c, logf: logf, counts: map[string]int{}, seen: map[string]int{}}
}

func (n *nemesis) count(kind string) {
	n.mu.Lock()
	n.counts[kind]++
	n.mu.Unlock()
}

func (n *nemesis) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	n.logf("nemesis: %s", msg)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[msg] == 0 {
		n.errs = append(n.errs, msg)
	}
	n.seen[msg]++
}

// Counts returns the faults injected by kind.
func (n *nemesis) Counts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]int, len(n.counts))
	for k, v := range n.counts {
		out[k] = v
	}
	return out
}

// Errors returns what the nemesis could not do, each once with how often
// it happened.
func (n *nemesis) Errors() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.errs))
	for i, e := range n.errs {
		out[i] = e
		if c := n.seen[e]; c > 1 {
			out[i] = fmt.Sprintf("%s (%d times)", e, c)
		}
	}
	return out
}

// Run executes the steps of s until they are done or ctx ends, healing
// each fault before the next.
func (n *nemesis) Run(ctx context.Context, s Schedule) int {
	done := 0
	for i, st := range s.Steps {
		if ctx.Err() != nil {
			break
		}
		wait := healthWait
		if st.Kind == FaultMembership {
			wait = membershipHealthWait
		}
		healthy := n.waitHealthy(ctx, wait)
		if st.Kind == FaultMembership && !healthy {
			n.logf("step %d skipped: %s needs every partition fully replicated", i, st.Kind)
			n.count("skipped(" + string(st.Kind) + ")")
			continue
		}
		n.logf("step %d: %s", i, st)
		n.step(ctx, st)
		done++
		if err := n.Heal(context.Background()); err != nil {
			n.fail("heal after step %d: %v", i, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(st.Gap):
		}
	}
	return done
}

// healthWait bounds the wait for a fully replicated cluster before a
// step; a membership change waits longer, and is skipped when the
// cluster does not get there (removing a node while another replica
// catches up would take the partition's quorum).
const (
	healthWait           = 10 * time.Second
	membershipHealthWait = 30 * time.Second
)

// waitHealthy waits until every partition of the suite's topic has a
// leader and every replica of its list caught up, for up to timeout; it
// reports whether it saw that.
func (n *nemesis) waitHealthy(ctx context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := n.adminClient(ctx, -1)
	if err != nil {
		return false
	}
	defer c.Close()
	for {
		qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
		m, err := c.ClusterPartitions(qctx)
		qcancel()
		if err == nil && unhealthy(m) == "" {
			return true
		}
		select {
		case <-ctx.Done():
			n.logf("cluster not fully replicated after %v (last error %v)", timeout, err)
			return false
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// unhealthy says which partitions of the suite's topic lack a leader or
// have replicas not caught up ("" when none).
func unhealthy(m *wire.PartitionMap) string {
	for _, t := range m.Topics {
		if t.StreamName != streamName || t.TopicName != topicName {
			continue
		}
		var bad []string
		for _, p := range t.Partitions {
			if !p.HasLeader || !p.HasCaughtUp || len(p.CaughtUp) < len(p.Replicas) || len(p.Replicas) < 3 {
				bad = append(bad, fmt.Sprintf("partition %d: replicas %v, leader %d (known %v), caught up %v (known %v)",
					p.PartitionID, p.Replicas, p.Leader, p.HasLeader, p.CaughtUp, p.HasCaughtUp))
			}
		}
		if len(t.Partitions) == 0 {
			return "the topic has no partitions in the map"
		}
		return strings.Join(bad, "; ")
	}
	return "the topic is not in the partition map"
}

// Replication waits up to timeout for every partition to be led with all
// replicas caught up; it returns how long that took, or what is still
// missing.
func (n *nemesis) Replication(ctx context.Context, timeout time.Duration) (time.Duration, string) {
	start := time.Now()
	if n.waitHealthy(ctx, timeout) {
		return time.Since(start), ""
	}
	c, err := n.adminClient(ctx, -1)
	if err != nil {
		return 0, err.Error()
	}
	defer c.Close()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := c.ClusterPartitions(qctx)
	if err != nil {
		return 0, err.Error()
	}
	return 0, unhealthy(m)
}

// hold waits d or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// eachNode applies fault (verb, for the error) to each node of st,
// counting the nodes it reached.
func (n *nemesis) eachNode(st Step, verb string, fault func(int) error) {
	for _, i := range st.Nodes {
		if err := fault(i); err != nil {
			n.fail("%s node %d: %v", verb, i, err)
			continue
		}
		n.count(string(st.Kind))
	}
}

// step applies one fault and holds it (Run heals it).
func (n *nemesis) step(ctx context.Context, st Step) {
	switch st.Kind {
	case FaultKill:
		n.eachNode(st, "kill", n.c.Kill)
		hold(ctx, st.Hold)
	case FaultPause:
		n.eachNode(st, "pause", n.c.Pause)
		hold(ctx, st.Hold)
	case FaultPartition:
		var errs []error
		for i := range n.c.N() {
			for j := range n.c.N() {
				if slices.Contains(st.Nodes, i) != slices.Contains(st.Nodes, j) {
					errs = append(errs, n.c.lab.Drop(i, j))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			n.fail("partition %v: %v", st.Nodes, err)
		} else {
			n.count(string(FaultPartition))
		}
		hold(ctx, st.Hold)
	case FaultOneWay:
		var errs []error
		for _, j := range st.Peers {
			errs = append(errs, n.c.lab.Drop(st.Nodes[0], j))
		}
		if err := errors.Join(errs...); err != nil {
			n.fail("one-way cut %d -> %v: %v", st.Nodes[0], st.Peers, err)
		} else {
			n.count(string(FaultOneWay))
		}
		hold(ctx, st.Hold)
	case FaultMembership:
		n.membership(ctx, st)
	case FaultCorrupt:
		n.corrupt(ctx, st)
	}
}

// corrupt stops the node, damages one file and restarts it.
func (n *nemesis) corrupt(ctx context.Context, st Step) {
	i := st.Nodes[0]
	if err := n.c.Kill(i); err != nil {
		n.fail("stop node %d for corruption: %v", i, err)
		return
	}
	rng := rand.New(rand.NewPCG(st.Seed, uint64(i)))
	what, err := damage(n.c.layout.DataDir(i), st.File, st.Truncate, rng)
	switch {
	case err != nil:
		n.fail("corrupt node %d: %v", i, err)
	case what == "":
		n.logf("node %d has no %s file yet: nothing damaged", i, st.File)
	default:
		mode := "flip"
		if st.Truncate {
			mode = "truncate"
		}
		n.count(fmt.Sprintf("%s(%s,%s)", FaultCorrupt, st.File, mode))
		n.logf("node %d: %s", i, what)
	}
	if err := n.c.Start(i); err != nil {
		n.fail("restart node %d after corruption: %v", i, err)
	}
	if strings.Contains(filepath.ToSlash(what), "cluster/metadata/") {
		n.recoverMetadata(ctx, i)
	}
	hold(ctx, st.Hold)
}

// recoverMetadata: a node whose metadata raft log or snapshot is damaged
// refuses to start, with one line naming the directory and the recovery
// (docs/CLUSTER.md, "Damaged replicas"); the suite then does what that
// line tells an operator: remove-node, wipe, start with --join, add-node.
// A node that starts anyway is left alone.
func (n *nemesis) recoverMetadata(ctx context.Context, i int) {
	deadline := time.Now().Add(10 * time.Second)
	for n.c.Running(i) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := n.c.exitReason(i); r == "" || r == "signal: killed" {
		return
	}
	n.logf("node %d refused to start on its damaged metadata%s; recovering it as the line says", i, n.c.crashLine(i))
	if err := n.removeNode(i); err != nil {
		n.fail("remove node %d with damaged metadata: %v", i, err)
		return
	}
	if err := n.c.Wipe(i); err != nil {
		n.fail("%v", err)
	}
	if err := n.c.Start(i, "--join"); err != nil {
		n.fail("start node %d with --join: %v", i, err)
	}
	if err := n.addNode(i); err != nil {
		n.fail("add node %d back: %v", i, err)
		n.mu.Lock()
		n.pending = append(n.pending, i)
		n.mu.Unlock()
		return
	}
	n.logf("node %d with damaged metadata removed, wiped and added back", i)
	n.count("metadata-recovery")
}

// adminClient dials an SDK client for cluster administration, with room
// for the long commands (add-node waits for the catch-up).
func (n *nemesis) adminClient(ctx context.Context, skip int) (*client.Client, error) {
	var addrs []string
	for i, a := range n.c.Addrs() {
		if i != skip {
			addrs = append(addrs, a)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return client.Dial(dctx, strings.Join(addrs, ","),
		client.WithCredentials(local.RootUsername, local.RootPassword),
		client.WithResponseTimeout(200*time.Second),
		client.WithTransientRetry(client.RetryPolicy{Budget: 60 * time.Second}))
}

// membership removes a killed node from the cluster, wipes it, starts it
// with --join and adds it back under its id, under load; with a second
// target, that node is paused while the first is added back (a pause
// during the removal would leave the partitions held by both without a
// quorum to move their replicas, and the removal waits for that).
func (n *nemesis) membership(ctx context.Context, st Step) {
	i := st.Nodes[0]
	if err := n.c.Kill(i); err != nil {
		n.fail("kill node %d before removing it: %v", i, err)
		return
	}
	hold(ctx, st.Hold)
	if err := n.removeNode(i); err != nil {
		n.fail("remove node %d: %v", i, err)
		return // Heal restarts it with its data
	}
	n.logf("node %d removed from the cluster", i)
	if err := n.c.Wipe(i); err != nil {
		n.fail("%v", err)
	}
	if err := n.c.Start(i, "--join"); err != nil {
		n.fail("start node %d with --join: %v", i, err)
	}
	if len(st.Nodes) > 1 {
		// Paused for the hold only: the node may lead the metadata group,
		// and the add-node request sent to it then waits for it.
		j := st.Nodes[1]
		if err := n.c.Pause(j); err == nil {
			n.count(string(FaultPause))
			n.logf("node %d paused for %v while node %d is added back", j, st.Hold, i)
			resume := time.AfterFunc(st.Hold, func() { _ = n.c.Resume(j) })
			defer func() {
				resume.Stop()
				_ = n.c.Resume(j)
			}()
		}
	}
	if err := n.addNode(i); err != nil {
		n.fail("add node %d back: %v", i, err)
		n.mu.Lock()
		n.pending = append(n.pending, i)
		n.mu.Unlock()
		return
	}
	n.logf("node %d added back under its replica id", i)
	n.count(string(FaultMembership))
}

// removeNode runs CLUSTER_REMOVE_NODE for node i, retrying for up to a
// minute.
func (n *nemesis) removeNode(i int) error {
	return n.admin(i, 60*time.Second, func(ctx context.Context, c *client.Client) error {
		return c.ClusterRemoveNode(ctx, uint8(i))
	})
}

// addNode runs CLUSTER_ADD_NODE for node i under its old name, address
// and ports.
func (n *nemesis) addNode(i int) error {
	p := n.c.layout.Nodes[i]
	spec := wire.ClusterNodeSpec{ReplicaID: uint8(i), Name: local.NodeName(i), IP: n.c.layout.IP(i),
		TCPPort: p.TCP, ReplicaPort: p.TCPReplica, HTTPPort: p.HTTP}
	return n.admin(i, 90*time.Second, func(ctx context.Context, c *client.Client) error {
		return c.ClusterAddNode(ctx, spec)
	})
}

// admin runs an administration call on the other nodes than skip until it
// succeeds or timeout passes.
func (n *nemesis) admin(skip int, timeout time.Duration, call func(context.Context, *client.Client) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		c, err := n.adminClient(ctx, skip)
		if err != nil {
			last = err
			hold(ctx, time.Second)
			continue
		}
		err = call(ctx, c)
		c.Close()
		if err == nil {
			return nil
		}
		last = err
		n.logf("admin command: %v (retrying)", err)
		hold(ctx, 2*time.Second)
	}
	return fmt.Errorf("gave up after %v: %w", timeout, last)
}

// Heal ends every fault: cuts healed, paused nodes continued, stopped
// nodes started, nodes removed by an unfinished membership step added
// back.
func (n *nemesis) Heal(ctx context.Context) error {
	var errs []error
	if n.c.lab != nil {
		errs = append(errs, n.c.lab.HealAll())
	}
	n.mu.Lock()
	pending := slices.Clone(n.pending)
	n.mu.Unlock()
	for i := range n.c.N() {
		errs = append(errs, n.c.Resume(i))
		if !n.c.Running(i) {
			if r := n.c.exitReason(i); r != "" && r != "signal: killed" {
				n.fail("node %d had exited on its own (%s)%s", i, r, n.c.crashLine(i))
			}
			args := []string{}
			if slices.Contains(pending, i) {
				args = append(args, "--join")
			}
			errs = append(errs, n.c.Start(i, args...))
		}
	}
	for _, i := range pending {
		if err := n.addNode(i); err != nil {
			errs = append(errs, fmt.Errorf("add node %d back: %w", i, err))
			continue
		}
		n.mu.Lock()
		n.pending = slices.DeleteFunc(n.pending, func(v int) bool { return v == i })
		n.mu.Unlock()
		n.count(string(FaultMembership))
	}
	return errors.Join(errs...)
}
