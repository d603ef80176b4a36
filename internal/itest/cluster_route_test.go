package itest

import (
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// partitionMap reads CLUSTER_PARTITIONS on c with flags.
func partitionMap(t *testing.T, c *Client, flags uint8) wire.PartitionMap {
	t.Helper()
	body := (&wire.ClusterPartitions{Flags: flags}).AppendTo(nil)
	var m wire.PartitionMap
	if err := m.Decode(ExpectPlain(t, c.Call(wire.CmdClusterPartitions, body))); err != nil {
		t.Fatalf("decode partition map: %v", err)
	}
	return m
}

// TestClusterPartitionMap: every node answers the partition map: the
// roster with its client ports, and each partition of each topic with its
// replicas and leader; only the partition's leader can tell which
// replicas are caught up. A user without permissions sees the nodes and
// no topic.
func TestClusterPartitionMap(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 3, Name: "t"}))
	ExpectOK(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "nobody", Password: "nobody-pw", Status: wire.UserActive}))

	for i, s := range tc.nodes {
		n := s.Dial(t)
		n.LoginRoot()
		var m wire.PartitionMap
		deadline := time.Now().Add(10 * time.Second)
		for {
			m = partitionMap(t, n, 0)
			ready := len(m.Topics) == 1 && len(m.Topics[0].Partitions) == 3
			for _, p := range m.Topics[0:min(1, len(m.Topics))] {
				for _, pl := range p.Partitions {
					ready = ready && pl.HasLeader && len(pl.Replicas) == 3 && pl.Leader == pl.Replicas[0] && pl.HasCaughtUp && len(pl.CaughtUp) == 3
				}
			}
			if ready || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(m.Nodes) != 3 {
			t.Fatalf("node %d: %d nodes in the map", i, len(m.Nodes))
		}
		for j, nd := range m.Nodes {
			if int(nd.ReplicaID) != j || nd.Name != tc.roster[j].Name || nd.Host != "127.0.0.1" || nd.TCPPort != tc.roster[j].Ports.TCP {
				t.Fatalf("node %d: map node %d = %+v", i, j, nd)
			}
		}
		if len(m.Topics) != 1 {
			t.Fatalf("node %d: topics %+v", i, m.Topics)
		}
		top := m.Topics[0]
		if top.StreamName != "s" || top.TopicName != "t" {
			t.Fatalf("node %d: topic %+v", i, top)
		}
		// Every partition is placed on all three nodes, led by the first
		// of its replica list (leadership is spread), and every node
		// knows the caught-up replicas its leader announced.
		for p, pl := range top.Partitions {
			sorted := slices.Sorted(slices.Values(pl.Replicas))
			if pl.PartitionID != uint32(p) || !slices.Equal(sorted, []uint8{0, 1, 2}) || !pl.HasLeader || pl.Leader != pl.Replicas[0] {
				t.Fatalf("node %d: partition %d = %+v", i, p, pl)
			}
			if caught := slices.Sorted(slices.Values(pl.CaughtUp)); !pl.HasCaughtUp || !slices.Equal(caught, []uint8{0, 1, 2}) {
				t.Fatalf("node %d: partition %d caught up %v (known %v), want [0 1 2]", i, p, pl.CaughtUp, pl.HasCaughtUp)
			}
		}
		if lo := partitionMap(t, n, wire.PartitionMapLeadersOnly); lo.Topics[0].Partitions[0].HasCaughtUp {
			t.Fatalf("node %d: caught-up lookups despite PartitionMapLeadersOnly", i)
		}
	}

	u := tc.nodes[1].Dial(t)
	u.Login("nobody", "nobody-pw")
	if m := partitionMap(t, u, 0); len(m.Nodes) != 3 || len(m.Topics) != 0 {
		t.Fatalf("a user without permissions sees %d nodes and %d topics, want 3 and 0", len(m.Nodes), len(m.Topics))
	}
}

// TestClusterAttachSession: a connection to another node attached to a
// client's session serves that client's partition requests (58 on a node
// that does not lead, not an eviction) without a new epoch, and its close
// leaves the session (metadata writes on the owner's connection) and the
// client's consumer-group membership intact.
func TestClusterAttachSession(t *testing.T) {
	tc := startCluster(t, 3)
	owner := tc.nodes[0].Dial(t)
	owner.LoginRoot()
	ExpectOK(t, owner.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, owner.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 1, Name: "t"}))
	ExpectOK(t, owner.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t"), Name: "g"}))
	ExpectOK(t, owner.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t"), GroupID: wire.NamedID("g")}))

	attach := wire.AttachSession{Session: owner.Session, Login: LoginBody(RootUsername, RootPassword)}
	n := tc.nodes[1].Dial(t)
	n.ID = owner.ID
	var f Frame
	deadline := time.Now().Add(10 * time.Second)
	for {
		f = n.Call(wire.CmdAttachSession, attach.AppendTo(nil))
		if f.Kind != wire.KindReply || f.Reply.Status != wire.ErrTransientNotAccepted.Code || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the follower has not applied the Register yet
	}
	var r wire.LoginRegisterReply
	if err := r.Decode(ExpectPlain(t, f)); err != nil || r.Session != owner.Session {
		t.Fatalf("attach: %+v %v", r, err)
	}
	n.Session = r.Session
	part := wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 0}
	n.Next = owner.Next
	// A follower forwards the send to the partition's leader: the
	// attached connection acts for the owner's session there too.
	if s := n.SendMessages(SendBody(wire.NamedID("s"), wire.NamedID("t"), part, Batch(t, 1, Payloads(1, 10, "x")...))); s.Kind != wire.KindReply || s.Reply.Status != 0 {
		t.Fatalf("send on a follower through an attached connection: %v, want success", s)
	}
	n.Conn.Close()

	// The owner's session is untouched: a metadata write on it commits,
	// and the client is still a member of the group.
	time.Sleep(200 * time.Millisecond)
	owner.Next = max(owner.Next, n.Next)
	ExpectOK(t, owner.Command(wire.OpCreateStream, &wire.CreateStream{Name: "after"}))
	var a wire.ConsumerGroupAssignment
	body := (&wire.SyncConsumerGroup{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t"), GroupID: wire.NamedID("g")}).AppendTo(nil)
	if err := a.Decode(ExpectPlain(t, owner.Call(wire.CmdSyncConsumerGroup, body))); err != nil || len(a.Partitions) != 1 {
		t.Fatalf("membership after the attached connection closed: %+v %v", a, err)
	}
}

// TestClusterHTTPPartitions: GET /cluster/partitions on a follower lists
// the nodes and every partition with its replicas and leader; caught_up
// is null there (only the leader can tell).
func TestClusterHTTPPartitions(t *testing.T) {
	tc := startHTTPCluster(t, 3)
	api := newHTTPAPI(t, tc.nodes[1])
	api.token = api.login(RootUsername, RootPassword)
	api.ok(200, nil, "POST", "/streams", map[string]any{"name": "s"})
	api.ok(200, nil, "POST", "/streams/s/topics", map[string]any{"name": "t", "partitions_count": 2, "compression_algorithm": "none", "message_expiry": 0, "max_topic_size": 0})
	var got struct {
		Nodes []struct {
			ReplicaID int    `json:"replica_id"`
			Name      string `json:"name"`
			Endpoints struct {
				TCP  uint16 `json:"tcp"`
				HTTP uint16 `json:"http"`
			} `json:"endpoints"`
		} `json:"nodes"`
		Partitions []struct {
			Stream    string `json:"stream"`
			Topic     string `json:"topic"`
			Partition uint32 `json:"partition"`
			Replicas  []int  `json:"replicas"`
			Leader    *int   `json:"leader"`
			CaughtUp  []int  `json:"caught_up"`
		} `json:"partitions"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		api.ok(200, &got, "GET", "/cluster/partitions", nil)
		settled := len(got.Partitions) == 2
		for _, p := range got.Partitions {
			settled = settled && p.Leader != nil && len(p.Replicas) > 0 && *p.Leader == p.Replicas[0] &&
				(p.CaughtUp == nil || len(p.CaughtUp) == len(p.Replicas))
		}
		if settled || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got.Nodes) != 3 || got.Nodes[2].ReplicaID != 2 || got.Nodes[2].Endpoints.HTTP != tc.roster[2].Ports.HTTP || got.Nodes[2].Endpoints.TCP != tc.roster[2].Ports.TCP {
		t.Fatalf("nodes %+v", got.Nodes)
	}
	if len(got.Partitions) != 2 {
		t.Fatalf("partitions %+v", got.Partitions)
	}
	for i, p := range got.Partitions {
		if p.Stream != "s" || p.Topic != "t" || p.Partition != uint32(i) || !slices.Equal(slices.Sorted(slices.Values(p.Replicas)), []int{0, 1, 2}) ||
			p.Leader == nil || *p.Leader != p.Replicas[0] || p.CaughtUp != nil && !slices.Equal(slices.Sorted(slices.Values(p.CaughtUp)), []int{0, 1, 2}) {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
}
