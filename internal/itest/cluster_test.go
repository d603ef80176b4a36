package itest

import (
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// testCluster is n in-process brokers forming one cluster on loopback.
type testCluster struct {
	nodes  []*Server
	dirs   []string
	roster []config.ClusterNode
}

// freePorts reserves n distinct loopback TCP ports (listen on port 0,
// note the port, close).
func freePorts(t testing.TB, n int) []uint16 {
	t.Helper()
	ports := make([]uint16, 0, n)
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, uint16(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCluster starts n cluster members and waits until replica 0 leads
// the metadata group.
func startCluster(t testing.TB, n int, opts ...Option) *testCluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	roster := make([]config.ClusterNode, n)
	dirs := make([]string, n)
	for i := range n {
		roster[i] = config.ClusterNode{
			Name: "node-" + string(rune('a'+i)), IP: "127.0.0.1", ReplicaID: uint8(i),
			Ports: config.ClusterPorts{TCP: ports[i], TCPReplica: ports[n+i]},
		}
		dirs[i] = t.TempDir()
	}
	tc := &testCluster{dirs: dirs, roster: roster}
	for i := range n {
		tc.start(t, i, opts...)
	}
	tc.waitLeader(t, 0)
	return tc
}

// start (re)starts member i on its data directory.
func (tc *testCluster) start(t testing.TB, i int, opts ...Option) {
	t.Helper()
	edit := func(c *config.Config) {
		c.Cluster.Enabled = true
		c.Cluster.Name = "itest-cluster"
		c.Cluster.Auth.Enabled = true
		c.Cluster.Auth.SharedSecret = config.Secret(strings.Repeat("s", 40))
		c.Cluster.Nodes = tc.roster
		c.Cluster.ReplicaID = i
	}
	s := Start(t, append([]Option{WithDir(tc.dirs[i]), WithConfig(edit)}, opts...)...)
	if i < len(tc.nodes) {
		tc.nodes[i] = s
	} else {
		tc.nodes = append(tc.nodes, s)
	}
}

// waitAnyLeader waits until the running members agree on a metadata
// leader and returns it.
func (tc *testCluster) waitAnyLeader(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for i, s := range tc.nodes {
			if s == nil {
				continue
			}
			if lead, ok := s.Broker.MetadataRole(); ok && lead {
				tc.waitLeader(t, i)
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no metadata leader within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLeader waits until GET_CLUSTER_METADATA on every running node names
// replica want as Leader.
func (tc *testCluster) waitLeader(t testing.TB, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for i, s := range tc.nodes {
		if s == nil {
			continue
		}
		c := s.Dial(t)
		for {
			r, f := c.LoginWith(LoginBody(RootUsername, RootPassword))
			if r.Session != 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: login never succeeded: %v", i, f)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for {
			m := clusterMeta(t, c)
			if leaderOf(m) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: leader %d, want %d (metadata %+v)", i, leaderOf(m), want, m)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func clusterMeta(t testing.TB, c *Client) wire.ClusterMetadata {
	t.Helper()
	f := c.Call(wire.CmdGetClusterMetadata, nil)
	var m wire.ClusterMetadata
	if err := m.Decode(ExpectPlain(t, f)); err != nil {
		t.Fatalf("decode cluster metadata: %v", err)
	}
	return m
}

func leaderOf(m wire.ClusterMetadata) int {
	for i, n := range m.Nodes {
		if n.Role == wire.ClusterLeader {
			return i
		}
	}
	return -1
}

// TestClusterMetadataWrites: replica 0 leads; a stream created there is
// visible on the followers; a follower answers a metadata write with a
// result-framed 58 and serves logins and reads; committed replies carry
// the cluster id, term and replica in the header.
func TestClusterMetadataWrites(t *testing.T) {
	tc := startCluster(t, 3)
	leader := tc.nodes[0].Dial(t)
	leader.LoginRoot()
	m := clusterMeta(t, leader)
	if m.Name != "itest-cluster" || len(m.Nodes) != 3 {
		t.Fatalf("cluster metadata %+v", m)
	}
	for i, n := range m.Nodes {
		if n.TCPPort != tc.nodes[i].Broker.Addr().(*net.TCPAddr).AddrPort().Port() {
			t.Errorf("node %d advertises tcp port %d, listens on %s", i, n.TCPPort, tc.nodes[i].Addr)
		}
	}
	f := leader.Command(wire.OpCreateStream, &wire.CreateStream{Name: "orders"})
	ExpectOK(t, f)
	h := f.Reply
	if h.Cluster.IsZero() || h.View == 0 || h.Replica != 0 || h.Op == 0 || h.Commit != h.Op {
		t.Errorf("committed reply header: cluster %v view %d replica %d op %d commit %d", h.Cluster, h.View, h.Replica, h.Op, h.Commit)
	}
	for i := 1; i < 3; i++ {
		c := tc.nodes[i].Dial(t)
		c.LoginRoot()
		deadline := time.Now().Add(5 * time.Second)
		for {
			body := ExpectPlain(t, c.Call(wire.CmdGetStreams, nil))
			if strings.Contains(string(body), "orders") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("follower %d never saw the stream", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
		ExpectResult(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "nope"}), wire.ErrTransientNotAccepted.Code)
	}
}

// TestClusterFailoverReplay: the metadata leader stops; the survivors elect
// a new leader; a client that logs in there again with its client id and
// retries its committed request gets the cached reply (not a second
// apply), and new writes commit.
func TestClusterFailoverReplay(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	h := c.Header(wire.OpCreateStream, 0)
	body := (&wire.CreateStream{Name: "payments"}).AppendTo(nil)
	first := c.Do(h, body)
	ExpectOK(t, first)

	tc.nodes[0].Stop()
	tc.nodes[0] = nil
	leader := tc.waitAnyLeader(t)

	r := tc.nodes[leader].Dial(t)
	r.ID = c.ID // resume the client id
	r.LoginRoot()
	h.Session = r.Session
	again := r.Do(h, body)
	if string(again.Body) != string(first.Body) || again.Reply.Op != first.Reply.Op {
		t.Fatalf("retried request: %v (op %d), first answer %v (op %d)", again, again.Reply.Op, first, first.Reply.Op)
	}
	r.Next = h.Request + 1
	ExpectOK(t, r.Command(wire.OpCreateStream, &wire.CreateStream{Name: "refunds"}))
	list := string(ExpectPlain(t, r.Call(wire.CmdGetStreams, nil)))
	if strings.Count(list, "payments") != 1 || !strings.Contains(list, "refunds") {
		t.Fatalf("streams after failover: %q", list)
	}
}

// TestClusterRestart: every member stops and starts again on its data
// directory; the committed metadata is back from the raft logs and the
// cluster takes writes again.
func TestClusterRestart(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	for _, name := range []string{"alpha", "beta", "gamma"} {
		ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: name}))
	}
	for i := range tc.nodes {
		tc.nodes[i].Stop()
	}
	for i := range tc.nodes {
		tc.start(t, i)
	}
	leader := tc.waitAnyLeader(t)
	for i, s := range tc.nodes {
		r := s.Dial(t)
		r.LoginRoot()
		deadline := time.Now().Add(5 * time.Second)
		for {
			list := string(ExpectPlain(t, r.Call(wire.CmdGetStreams, nil)))
			if strings.Contains(list, "alpha") && strings.Contains(list, "beta") && strings.Contains(list, "gamma") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d after restart: streams %q", i, list)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	l := tc.nodes[leader].Dial(t)
	l.LoginRoot()
	ExpectOK(t, l.Command(wire.OpCreateStream, &wire.CreateStream{Name: "delta"}))
}

// TestClusterSnapshotCatchUp: a follower is down while the leader writes
// and compacts its metadata log past the follower's position; the
// restarted follower catches up from the raft snapshot.
func TestClusterSnapshotCatchUp(t *testing.T) {
	tc := startCluster(t, 3, WithBrokerOptions(broker.WithCompactEvery(10)))
	leader := 0
	down := 2
	tc.nodes[down].Stop()
	tc.nodes[down] = nil
	c := tc.nodes[leader].Dial(t)
	c.LoginRoot()
	for i := range 40 {
		ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: fmt.Sprintf("s%02d", i)}))
	}
	deadline := time.Now().Add(10 * time.Second)
	for tc.nodes[leader].Broker.MetadataCompacted() < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("leader's metadata log was not compacted (at %d)", tc.nodes[leader].Broker.MetadataCompacted())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tc.start(t, down)
	r := tc.nodes[down].Dial(t)
	deadline = time.Now().Add(20 * time.Second)
	for {
		if rr, _ := r.LoginWith(LoginBody(RootUsername, RootPassword)); rr.Session != 0 {
			list := string(ExpectPlain(t, r.Call(wire.CmdGetStreams, nil)))
			if strings.Contains(list, "s39") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("restarted follower did not catch up from the snapshot")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clusterPoll polls up to 1000 messages of partition p from offset 0 on c.
func clusterPoll(t *testing.T, c *Client, p uint32) wire.PolledMessages {
	t.Helper()
	return c.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)),
		StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t"), Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(0), Count: 1000})
}

// TestClusterMessages: messages sent to the leader reach every follower
// with the same offsets and bytes; a follower forwards a retried send to
// the leader, whose duplicate window recognizes it; after the leader stops, a retry of an acknowledged send (same
// client id, request and body) on the new leader is recognized and not
// stored twice, and new sends continue the offsets.
func TestClusterMessages(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 1, Name: "t"}))
	part := wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 0}
	for i := range 5 {
		conf := c.MustSend(wire.NamedID("s"), wire.NamedID("t"), part, Batch(t, uint64(10*i+1), Payloads(10, 100, fmt.Sprint(i))...))
		if conf.BaseOffset != uint64(10*i) {
			t.Fatalf("send %d stored at %d", i, conf.BaseOffset)
		}
	}
	lastBody := SendBody(wire.NamedID("s"), wire.NamedID("t"), part, Batch(t, 100, Payloads(3, 100, "last")...))
	lastHeader := c.SendHeader(wire.OpSendMessages)
	if f := c.Do(lastHeader, lastBody); f.Reply.Status != 0 {
		t.Fatalf("last send: %v", f)
	}
	want := clusterPoll(t, c, 0)
	if want.Count != 53 {
		t.Fatalf("leader holds %d messages, want 53", want.Count)
	}
	for i := 1; i < 3; i++ {
		waitStored(t, tc, i, []uint64{53})
		// A follower forwards polls and sends to the partition's leader.
		f := tc.nodes[i].Dial(t)
		f.LoginRoot()
		if got := clusterPoll(t, f, 0); got.Count != want.Count || string(got.Records) != string(want.Records) {
			t.Fatalf("a poll through follower %d reads %d messages, not the leader's %d", i, got.Count, want.Count)
		}
		// A retry of the last send through a follower (same client id,
		// request number and body) meets the leader's duplicate window:
		// an empty success, nothing stored twice.
		d := tc.nodes[i].Dial(t)
		d.ID = c.ID
		d.LoginRoot()
		h := lastHeader
		h.Session = d.Session
		if r := d.Do(h, lastBody); r.Reply.Status != 0 || string(r.Body) != "\x00\x00\x00\x00" {
			t.Fatalf("retried send through follower %d answered %v (body % x), want the duplicate's empty success", i, r, r.Body)
		}
	}
	if got := clusterPoll(t, c, 0); got.Count != want.Count {
		t.Fatalf("the leader holds %d messages after the retries, want %d", got.Count, want.Count)
	}
	for i := range 3 {
		checkStoredOnce(t, tc.dirs[i])
	}

	tc.nodes[0].Stop()
	tc.nodes[0] = nil
	leader := tc.waitAnyLeader(t)
	r := tc.nodes[leader].Dial(t)
	r.ID = c.ID
	r.LoginRoot()
	lastHeader.Session = r.Session
	var retried Frame
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Until the partition has elected a new leader the node answers 58.
		retried = r.Do(lastHeader, lastBody)
		if retried.Reply.Status != wire.ErrTransientNotAccepted.Code || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if retried.Reply.Status != 0 {
		t.Fatalf("retried send on the new leader: %v", retried)
	}

	r.Next = lastHeader.Request + 1
	sent := r.SendMessages(SendBody(wire.NamedID("s"), wire.NamedID("t"), part, Batch(t, 200, Payloads(2, 100, "after")...)))
	// The partition's leader need not be the metadata leader r talks to: r
	// forwards the send, and the reply names the node that committed it.
	if h := sent.Reply; h.Status != 0 || h.Cluster.IsZero() || h.View == 0 || h.Op == 0 || h.Commit != h.Op || h.Replica != partitionLeader(t, r, 0) {
		t.Errorf("committed send reply header: status %d cluster %v view %d replica %d op %d commit %d", h.Status, h.Cluster, h.View, h.Replica, h.Op, h.Commit)
	}
	var rep wire.SendMessagesReply
	if err := rep.Decode(sent.Body); err != nil || len(rep.Confirmations) != 1 {
		t.Fatalf("send reply: %v", err)
	}
	if conf := rep.Confirmations[0]; conf.BaseOffset != 53 {
		t.Fatalf("send after failover stored at %d, want 53", conf.BaseOffset)
	}
	if got := clusterPoll(t, r, 0); got.Count != 55 {
		t.Fatalf("new leader holds %d messages after the retry and one more send, want 55", got.Count)
	}
}

// checkStoredOnce: under the node's data directory, every partition's raft
// log holds only entry headers, while the segments hold the messages (the
// segment files are the raft log).
func checkStoredOnce(t *testing.T, dir string) {
	t.Helper()
	var segs, raft int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(path, string(filepath.Separator)+"partitions"+string(filepath.Separator)) && strings.Contains(path, string(filepath.Separator)+"raft"+string(filepath.Separator)):
			raft += info.Size()
		case strings.HasSuffix(path, ".log") && strings.Contains(path, string(filepath.Separator)+"partitions"+string(filepath.Separator)):
			segs += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: segments %d bytes, raft logs %d bytes", dir, segs, raft)
	if segs < 50*100 || raft*10 > segs {
		t.Fatalf("%s: partition segments %d bytes, partition raft logs %d bytes: messages stored twice", dir, segs, raft)
	}
}
