//go:build !windows

package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// scaleOutPartitions is the topic size of the scale-out test: more
// partitions than nodes, so every node holds and leads several.
const scaleOutPartitions = 12

// TestScaleOutFiveNodes: a 5-node cluster with the default replication
// factor 3 places each of 12 partitions on exactly 3 nodes (their files
// exist there and nowhere else), spreads leadership so that every node
// leads some, and keeps taking writes through any node while one node
// and then another is SIGKILLed and restarted, while a sixth node is
// added (replicas move onto it) and while a node is removed (drained
// first); the history (porcupine) and the logs every replica stores show
// nothing acknowledged lost or duplicated.
func TestScaleOutFiveNodes(t *testing.T) {
	h := StartCluster(t, 5)
	w := NewWorkload(t, h, scaleOutPartitions)
	m := waitSpread(t, h, 30*time.Second)
	checkPartitionFiles(t, h, m)

	runLoad(w, 2*scaleOutPartitions)
	time.Sleep(2 * time.Second)
	for _, victim := range []int{1, 3} {
		killAt := w.History.Now()
		h.Kill(victim)
		time.Sleep(4 * time.Second)
		if n := acksBetween(w.History.Ops(), killAt+int64(3*time.Second), w.History.Now()); n == 0 {
			t.Fatalf("no write acknowledged 3-4 s after node %d was killed", victim)
		}
		h.Start(victim)
		time.Sleep(3 * time.Second)
	}

	// A sixth node joins under the load: replicas move onto it.
	n := h.grow()
	h.Start(n, "--join")
	pn := h.Layout.Nodes[n]
	if err := adminCall(h, -1, wire.CmdClusterAddNode, &wire.ClusterNodeSpec{ReplicaID: uint8(n), Name: local.NodeName(n),
		IP: h.Layout.IP(n), TCPPort: pn.TCP, ReplicaPort: pn.TCPReplica}); err != nil {
		t.Fatalf("add node %d: %v", n, err)
	}
	all := []int{0, 1, 2, 3, 4, n}
	perNode := h.settle(t, all, scaleOutPartitions, 120*time.Second)
	t.Logf("after adding node %d: partitions per node %v", n, perNode)
	if perNode[n] < 4 {
		t.Errorf("node %d holds %d partitions after the rebalance, want about 6 (36 replicas over 6 nodes)", n, perNode[n])
	}

	// Node 2 leaves: drained first, then stopped.
	if err := adminCall(h, -1, wire.CmdClusterRemoveNode, &wire.ClusterRemoveNode{ReplicaID: 2}); err != nil {
		t.Fatalf("remove node 2: %v", err)
	}
	waitNoDirs(t, h, 2, 10*time.Second)
	h.Kill(2)
	h.markPaused(2, true)
	rest := []int{0, 1, 3, 4, n}
	perNode = h.settle(t, rest, scaleOutPartitions, 120*time.Second)
	t.Logf("after removing node 2: partitions per node %v", perNode)
	w.verifyPlaced(t, h, rest, 60*time.Second)
	// The balancer spreads leadership over the remaining nodes again.
	waitSpread(t, h, 60*time.Second)
}

// partitionMap asks node i for CLUSTER_PARTITIONS.
func partitionMap(h *Harness, i int) (wire.PartitionMap, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := local.DialLogin(ctx, h.Addr(i))
	if err != nil {
		return wire.PartitionMap{}, err
	}
	defer c.Close()
	body, err := c.Call(wire.CmdClusterPartitions, nil)
	if err != nil {
		return wire.PartitionMap{}, err
	}
	var m wire.PartitionMap
	return m, m.Decode(body)
}

// waitSpread waits until the partition map (asked of every running node
// in turn) shows each partition of the workload's topic with three
// distinct replicas and a leader among them, and every running node
// leading at least one partition; it returns that map.
func waitSpread(t *testing.T, h *Harness, timeout time.Duration) wire.PartitionMap {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for i := 0; ; i++ {
		node := i % h.N()
		if !slices.Contains(h.Down(), node) {
			m, err := partitionMap(h, node)
			if err == nil {
				if last = spreadProblem(h, m); last == "" {
					return m
				}
			} else {
				last = err.Error()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions not placed and led by every node within %s: %s", timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// spreadProblem says what keeps m from being spread ("" when nothing).
func spreadProblem(h *Harness, m wire.PartitionMap) string {
	if len(m.Topics) != 1 || len(m.Topics[0].Partitions) != scaleOutPartitions {
		return fmt.Sprintf("map has %d topics", len(m.Topics))
	}
	leads := make([]int, h.N())
	for _, p := range m.Topics[0].Partitions {
		r := slices.Clone(p.Replicas)
		slices.Sort(r)
		if len(r) != 3 || len(slices.Compact(r)) != 3 {
			return fmt.Sprintf("partition %d has replicas %v", p.PartitionID, p.Replicas)
		}
		if !p.HasLeader || !slices.Contains(p.Replicas, p.Leader) {
			return fmt.Sprintf("partition %d: leader %d (known %v) not among %v", p.PartitionID, p.Leader, p.HasLeader, p.Replicas)
		}
		leads[p.Leader]++
	}
	for n, c := range leads {
		if c == 0 && !slices.Contains(h.Down(), n) {
			return fmt.Sprintf("node %d leads no partition (leaders per node %v)", n, leads)
		}
	}
	return ""
}

// checkPartitionFiles checks that each partition's directory exists on
// exactly the nodes of its replica list.
func checkPartitionFiles(t *testing.T, h *Harness, m wire.PartitionMap) {
	t.Helper()
	tp := m.Topics[0]
	perNode := make([]int, h.N())
	for _, p := range tp.Partitions {
		for n := range h.N() {
			pattern := filepath.Join(h.Layout.DataDir(n), "streams", strconv.Itoa(int(tp.StreamID)), "topics",
				strconv.Itoa(int(tp.TopicID))+"-*", "partitions", strconv.Itoa(int(p.PartitionID)))
			found, err := filepath.Glob(pattern)
			if err != nil {
				t.Fatal(err)
			}
			holds := len(found) == 1
			if holds != slices.Contains(p.Replicas, uint8(n)) {
				t.Errorf("partition %d: node %d holds files %v, replicas %v", p.PartitionID, n, found, p.Replicas)
			}
			if holds {
				if _, err := os.Stat(filepath.Join(found[0], "raft")); err != nil {
					t.Errorf("partition %d on node %d has no raft log: %v", p.PartitionID, n, err)
				}
				perNode[n]++
			}
		}
	}
	t.Logf("partitions held per node: %v", perNode)
}
