package itest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterAddRemoveNode: a fourth node started with --join is added at
// run time (it receives the metadata before it votes) and a rebalance
// moves replicas onto it: every partition keeps 3 replicas, the groups'
// voters follow, and the moved partitions' messages are on the new node.
// A rebalance asked again finds nothing to move. Then a node is removed:
// it is drained first (none of its replicas is left anywhere) and the
// cluster keeps taking writes without it. Restarts after the changes
// come back with the membership the moves made.
func TestClusterAddRemoveNode(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 4, Name: "t"}))
	for p := range uint32(4) {
		tc.sendTo(t, p, 10, fmt.Sprint(p))
	}

	ports := freePorts(t, 2)
	spec := wire.ClusterNodeSpec{ReplicaID: 3, Name: "node-d", IP: "127.0.0.1", TCPPort: ports[0], ReplicaPort: ports[1]}
	tc.roster = append(tc.roster, config.ClusterNode{Name: spec.Name, IP: spec.IP, ReplicaID: 3,
		Ports: config.ClusterPorts{TCP: spec.TCPPort, TCPReplica: spec.ReplicaPort}})
	tc.dirs = append(tc.dirs, t.TempDir())
	tc.start(t, 3, WithConfig(func(c *config.Config) { c.Cluster.Join = true }))
	if f := c.Call(wire.CmdClusterAddNode, spec.AppendTo(nil)); f.Kind != wire.KindReply || f.Reply.Status != 0 {
		t.Fatalf("add node: %v", f)
	}
	if m := clusterMeta(t, c); len(m.Nodes) != 4 || m.Nodes[3].Name != "node-d" {
		t.Fatalf("cluster metadata after add: %+v", m)
	}
	pls := tc.settle(t, []int{0, 1, 2, 3}, 3)
	perNode := map[uint8]int{}
	for _, pp := range pls {
		for _, r := range pp.Replicas {
			perNode[r]++
		}
	}
	// 12 replicas over 4 nodes: each holds the mean, 3, give or take one.
	for n := range uint8(4) {
		if perNode[n] < 2 || perNode[n] > 4 {
			t.Fatalf("replicas per node after the rebalance: %v, want 2..4 each", perNode)
		}
	}
	// The placement metrics of any node say the same.
	if got := gauge(t, tc.nodes[1].Broker, "iggo_cluster_replicas", "replica_id", "3"); got != float64(perNode[3]) {
		t.Fatalf("iggo_cluster_replicas{replica_id=3} = %v, want %d", got, perNode[3])
	}
	if got := gauge(t, tc.nodes[1].Broker, "iggo_cluster_moves_in_progress"); got != 0 {
		t.Fatalf("iggo_cluster_moves_in_progress = %v after the rebalance", got)
	}
	// The new node serves the partitions moved onto it, with their data.
	d := tc.nodes[3].Dial(t)
	d.LoginRoot()
	for _, pp := range pls {
		if slices.Contains(pp.Replicas, 3) {
			waitPolled(t, d, "t", pp.Partition, 10)
		}
	}
	rb := c.Call(wire.CmdClusterRebalance, nil)
	var rr wire.ClusterRebalanceReply
	if rb.Kind != wire.KindReply || rb.Reply.Status != 0 || rr.Decode(rb.Body) != nil || !rr.Known || rr.Started != 0 || rr.InProgress != 0 {
		t.Fatalf("rebalance of a balanced cluster: %v (%+v)", rb, rr)
	}

	rm := wire.ClusterRemoveNode{ReplicaID: 1}
	if f := c.Call(wire.CmdClusterRemoveNode, rm.AppendTo(nil)); f.Kind != wire.KindReply || f.Reply.Status != 0 {
		t.Fatalf("remove node: %v", f)
	}
	for _, pp := range tc.nodes[0].Broker.ClusterPlacements() {
		if slices.Contains(pp.Replicas, 1) || slices.Contains(pp.Target, 1) {
			t.Fatalf("partition %d still placed on the removed node: %v -> %v", pp.Partition, pp.Replicas, pp.Target)
		}
	}
	tc.nodes[1].Stop()
	tc.nodes[1] = nil
	if m := clusterMeta(t, c); len(m.Nodes) != 3 {
		t.Fatalf("cluster metadata after remove: %+v", m)
	}
	tc.settle(t, []int{0, 2, 3}, 3)
	for p := range uint32(4) {
		tc.sendTo(t, p, 5, "after")
		waitPolled(t, d, "t", p, 15)
	}

	// Restarts after the changes, one node at a time (the quorum stays):
	// each comes back with the membership the moves made and its data.
	for _, n := range []int{2, 3} {
		tc.nodes[n].Stop()
		tc.start(t, n)
		r := tc.nodes[n].Dial(t)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if lr, f := r.LoginWith(LoginBody(RootUsername, RootPassword)); lr.Session != 0 {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("login on node %d after restart: %v", n, f)
			}
		}
		for p := range uint32(4) {
			waitPolled(t, r, "t", p, 15)
		}
		tc.settle(t, []int{0, 2, 3}, 3)
	}
}

// sendTo sends a batch of n messages to partition p of s/t through its
// leader (a follower would answer 58).
func (tc *testCluster) sendTo(t *testing.T, p uint32, n int, tag string) {
	t.Helper()
	part := wire.Partitioning{Kind: wire.PartitionByID, PartitionID: p}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if l := tc.leaderOf(p); l >= 0 {
			c := tc.nodes[l].Dial(t)
			c.LoginRoot()
			f := c.SendMessages(SendBody(wire.NamedID("s"), wire.NamedID("t"), part, Batch(t, uint64(time.Now().UnixNano()), Payloads(n, 100, tag)...)))
			if f.Kind == wire.KindReply && f.Reply.Status == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader took a send to partition %d", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaderOf returns the node leading partition p of s/t, as the running
// nodes that host its group see it (-1: none known).
func (tc *testCluster) leaderOf(p uint32) int {
	for _, s := range tc.nodes {
		if s == nil {
			continue
		}
		for _, pp := range s.Broker.ClusterPlacements() {
			if pp.Partition != p {
				continue
			}
			if l, ok := s.Broker.ClusterLeader(replicated.GroupID(pp.Ref, p)); ok && int(l) < len(tc.nodes) && tc.nodes[l] != nil {
				return int(l)
			}
		}
	}
	return -1
}

// settle waits (60 s) until the nodes agree on a placement without moves
// in progress, in which every partition has rf distinct replicas, the
// nodes that host each partition's group are exactly its replicas and
// their voters are the replicas too; it returns that placement.
func (tc *testCluster) settle(t *testing.T, running []int, rf int) []metadata.PartitionPlacement {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var why string
	for {
		pls := tc.nodes[running[0]].Broker.ClusterPlacements()
		why = settled(tc, running, pls, rf)
		if why == "" {
			return pls
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement not settled within 60 s: %s", why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled says what is not settled yet ("" when all is).
func settled(tc *testCluster, running []int, pls []metadata.PartitionPlacement, rf int) string {
	for _, pp := range pls {
		if len(pp.Target) > 0 {
			return fmt.Sprintf("partition %d moving %v -> %v", pp.Partition, pp.Replicas, pp.Target)
		}
		r := slices.Clone(pp.Replicas)
		slices.Sort(r)
		if len(slices.Compact(r)) != rf {
			return fmt.Sprintf("partition %d replicas %v", pp.Partition, pp.Replicas)
		}
		g := replicated.GroupID(pp.Ref, pp.Partition)
		want := make([]replication.NodeID, 0, rf)
		for _, id := range pp.Replicas {
			want = append(want, replication.NodeID(id))
		}
		slices.Sort(want)
		for _, n := range running {
			b := tc.nodes[n].Broker
			hosts := slices.Contains(b.ClusterGroups(), g)
			if hosts != slices.Contains(pp.Replicas, uint8(n)) {
				return fmt.Sprintf("partition %d (replicas %v): node %d hosts its group: %v", pp.Partition, pp.Replicas, n, hosts)
			}
			if hosts {
				if v := b.ClusterVoters(g); !slices.Equal(v, want) {
					return fmt.Sprintf("partition %d: node %d sees voters %v, want %v", pp.Partition, n, v, want)
				}
			}
			if other := tc.nodes[n].Broker.ClusterPlacements(); !slices.EqualFunc(other, pls, func(a, b metadata.PartitionPlacement) bool {
				return a.Partition == b.Partition && slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.Target, b.Target)
			}) {
				return fmt.Sprintf("node %d has another placement", n)
			}
		}
	}
	return ""
}

// waitPolled waits (20 s) until c polls want messages from partition p
// of s/topic.
func waitPolled(t *testing.T, c *Client, topic string, p uint32, want uint32) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)),
			StreamID: wire.NamedID("s"), TopicID: wire.NamedID(topic), Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(0), Count: 1000})
		if got.Count == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition %d of %s: %d messages, want %d", p, topic, got.Count, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gauge reads one sample of a gauge family from b's metrics registry,
// the one whose labels include the pairs of labels (-1 when missing).
func gauge(t *testing.T, b *broker.Broker, name string, labels ...string) float64 {
	t.Helper()
	fams, err := b.Metrics().Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == labels[i] && l.GetValue() == labels[i+1] }) {
					continue next
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
