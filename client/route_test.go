package client

import (
	"bytes"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// routeFixture is a fake cluster whose nodes serve one topic (stream 1
// "s", topic 1 "t") held by a shared memBroker: each partition is led by
// one node, which alone accepts its partition requests (the others answer
// 58); the metadata leader serves the metadata and group commands; every
// node answers CLUSTER_PARTITIONS with the current leaders and
// ATTACH_SESSION with the session it is given.
type routeFixture struct {
	t  *testing.T
	fc *fakeCluster
	b  *memBroker

	mu       sync.Mutex
	leaders  []int                   // guarded by mu: partition -> leading node, -1 none
	mapReads []int                   // guarded by mu: CLUSTER_PARTITIONS per node
	attaches [][]wire.AttachSession  // guarded by mu: per node
	served   map[int][]servedRequest // guarded by mu: accepted partition requests per node
	hold     map[int]bool            // guarded by mu: nodes that leave partition requests unanswered
	anywhere bool                    // guarded by mu: every node accepts every partition
	mapped   []int                   // guarded by mu: leaders the map names instead of leaders, when set
}

// servedRequest is a partition request a node accepted.
type servedRequest struct {
	code      wire.Command
	partition uint32
	client    wire.Uint128
	request   uint64
	body      []byte
}

func newRouteFixture(t *testing.T, nodes int, leaders ...int) *routeFixture {
	f := &routeFixture{
		t: t, b: newMemBroker(t, uint32(len(leaders))), leaders: leaders,
		mapReads: make([]int, nodes), attaches: make([][]wire.AttachSession, nodes),
		served: map[int][]servedRequest{}, hold: map[int]bool{},
	}
	f.fc = newFakeCluster(t, nodes, 0)
	f.fc.setHook(f.handle)
	return f
}

// partitionOf returns the partition a partition request names (a keyed
// send's by the server's key rule over partitions partitions).
func partitionOf(r fakeReq, partitions int) (uint32, bool) {
	switch r.Command() {
	case wire.CmdSendMessages:
		var sm wire.SendMessages
		if _, err := sm.Admit(r.Body); err != nil {
			return 0, false
		}
		switch sm.Partitioning.Kind {
		case wire.PartitionByID:
			return sm.Partitioning.PartitionID, true
		case wire.PartitionByKey:
			return xhash.XXH32(sm.Partitioning.Key, 0) % uint32(partitions), true
		}
		return 0, false
	case wire.CmdPollMessages:
		var p wire.PollMessages
		return p.Partition.ID, p.Decode(r.Body) == nil && p.Partition.Present
	case wire.CmdStoreConsumerOffset:
		var s wire.StoreConsumerOffset
		return s.Partition.ID, s.Decode(r.Body) == nil && s.Partition.Present
	case wire.CmdGetConsumerOffset:
		var g wire.GetConsumerOffset
		return g.Partition.ID, g.Decode(r.Body) == nil && g.Partition.Present
	}
	return 0, false
}

func (f *routeFixture) partitionMap() wire.PartitionMap {
	m := f.fc.metadata(0)
	var pm wire.PartitionMap
	for i, n := range m.Nodes {
		pm.Nodes = append(pm.Nodes, wire.PartitionMapNode{ReplicaID: uint8(i), Name: n.Name, Host: n.IP, TCPPort: n.TCPPort})
	}
	t := wire.PartitionMapTopic{StreamID: 1, StreamName: "s", TopicID: 1, TopicName: "t"}
	leaders := f.leaders
	if f.mapped != nil {
		leaders = f.mapped
	}
	for p, l := range leaders {
		pl := wire.PartitionPlacement{PartitionID: uint32(p)}
		for i := range m.Nodes {
			pl.Replicas = append(pl.Replicas, uint8(i))
		}
		if l >= 0 {
			pl.Leader, pl.HasLeader = uint8(l), true
		}
		t.Partitions = append(t.Partitions, pl)
	}
	pm.Topics = []wire.PartitionMapTopic{t}
	return pm
}

func (f *routeFixture) handle(node int, c *fakeConn, r fakeReq) bool {
	switch r.Command() {
	case wire.CmdClusterPartitions:
		f.mu.Lock()
		f.mapReads[node]++
		m := f.partitionMap()
		f.mu.Unlock()
		c.reply(r, 0, m.AppendTo(nil))
		return true
	case wire.CmdAttachSession:
		var a wire.AttachSession
		if err := a.Decode(r.Body); err != nil {
			f.t.Errorf("attach body: %v", err)
		}
		a.Login = append([]byte(nil), a.Login...)
		f.mu.Lock()
		f.attaches[node] = append(f.attaches[node], a)
		f.mu.Unlock()
		rep := wire.LoginRegisterReply{UserID: 7, Session: a.Session, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "fake"}
		c.reply(r, 0, rep.AppendTo(nil))
		return true
	}
	f.mu.Lock()
	partitions := len(f.leaders)
	f.mu.Unlock()
	if p, ok := partitionOf(r, partitions); ok {
		f.mu.Lock()
		hold := f.hold[node]
		accept := f.anywhere || int(p) < len(f.leaders) && f.leaders[p] == node
		if accept && !hold {
			f.served[node] = append(f.served[node], servedRequest{code: r.Command(), partition: p, client: r.Hdr.Client, request: r.Hdr.Request, body: r.Body})
		}
		f.mu.Unlock()
		switch {
		case hold:
			f.mu.Lock()
			f.served[-1-node] = append(f.served[-1-node], servedRequest{code: r.Command(), partition: p, client: r.Hdr.Client, request: r.Hdr.Request, body: r.Body})
			f.mu.Unlock()
		case !accept:
			c.reply(r, wire.ErrTransientNotAccepted.Code, nil)
		default:
			f.b.handle(c, r)
		}
		return true
	}
	if node == 0 {
		return f.b.handle(c, r)
	}
	return false
}

// setLeaders replaces the partition leaders.
func (f *routeFixture) setLeaders(leaders ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaders = leaders
}

// servedOn returns the partition requests node accepted (or, for -1-node,
// held without answering).
func (f *routeFixture) servedOn(node int) []servedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.served[node])
}

func (f *routeFixture) reads(node int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mapReads[node]
}

func (f *routeFixture) attachedOn(node int) []wire.AttachSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.attaches[node])
}

// routeOpts are the cluster test options with fast map reads.
func routeOpts(logs *testutil.SyncBuffer) []Option {
	return append(clusterOpts(logs), WithClusterPolicy(ClusterPolicy{
		FailoverCheck: 10 * time.Second, LeaderlessWait: 300 * time.Millisecond, LeaderlessPoll: 50 * time.Millisecond,
		PartitionMapMinInterval: 10 * time.Millisecond,
	}))
}

func dialRoute(t *testing.T, f *routeFixture, opts ...Option) (*Client, *testutil.SyncBuffer) {
	t.Helper()
	var logs testutil.SyncBuffer
	c, err := Dial(ctxTimeout(t), f.fc.addr(0), append(routeOpts(&logs), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, &logs
}

// sendTo sends one message to partition p and fails the test on error.
func sendTo(t *testing.T, c *Client, p uint32, payload string) {
	t.Helper()
	_, err := c.SendMessages(ctxTimeout(t), wire.NamedID("s"), wire.NamedID("t"), wire.PartitioningByID(p), []wire.Message{{Payload: []byte(payload)}})
	if err != nil {
		t.Fatalf("send to partition %d: %v", p, err)
	}
}

// TestRoutingSendsToPartitionLeaders: the client reads the partition map,
// dials each leader once, attaches the connection to its session (same
// client id, no Register, the main connection's epoch) and sends each
// partition's messages there; partition 0's leader is the main
// connection's node.
func TestRoutingSendsToPartitionLeaders(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1, 2)
	c, _ := dialRoute(t, f)
	for i := range 5 {
		for p := range uint32(3) {
			sendTo(t, c, p, "m"+itoa(i))
		}
	}
	for node := range 3 {
		got := f.servedOn(node)
		if len(got) != 5 {
			t.Fatalf("node %d stored %d sends, want 5", node, len(got))
		}
		last := uint64(0)
		for _, s := range got {
			if s.partition != uint32(node) || s.client != c.ID() || s.request <= last {
				t.Fatalf("node %d: %+v after request %d", node, s, last)
			}
			last = s.request
		}
		if node == 0 {
			continue
		}
		if n := len(f.fc.commands(node, wire.CmdLoginRegister)); n != 0 {
			t.Fatalf("node %d got %d Registers; a routed connection must attach instead", node, n)
		}
		a := f.attachedOn(node)
		if len(a) != 1 || a[0].Session != c.Session() {
			t.Fatalf("node %d attaches %+v, want one for session %d", node, a, c.Session())
		}
		var login wire.LoginRegister
		if err := login.Decode(a[0].Login); err != nil || login.Username != "iggy" || login.Password != "iggy" {
			t.Fatalf("attach credentials %+v %v", login, err)
		}
	}
	if c.Addr() != f.fc.addr(0) {
		t.Fatalf("main connection moved to %s", c.Addr())
	}
	if n := len(f.b.msgs[1]) + len(f.b.msgs[2]) + len(f.b.msgs[0]); n != 15 {
		t.Fatalf("%d messages stored, want 15", n)
	}
}

// TestRoutingRefreshOnNotLeader: when a partition's leader moves, the old
// leader's 58 makes the client read the map again and resend the same
// frame (same request number and body) to the new leader.
func TestRoutingRefreshOnNotLeader(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1)
	c, _ := dialRoute(t, f)
	sendTo(t, c, 1, "first")
	if len(f.servedOn(1)) != 1 {
		t.Fatal("partition 1's first send did not reach node 1")
	}
	reads := f.reads(0)
	f.setLeaders(0, 2)
	sendTo(t, c, 1, "second")
	got := f.servedOn(2)
	if len(got) != 1 || got[0].partition != 1 {
		t.Fatalf("node 2 served %+v, want the second send", got)
	}
	if f.reads(0) <= reads {
		t.Fatal("no map read after the not-leader answer")
	}
	for _, r := range f.fc.commands(1, wire.CmdSendMessages) {
		if r.Hdr.Request == got[0].request && !bytes.Equal(r.Body, got[0].body) {
			t.Fatal("the resend on the new leader changed the body")
		}
	}
	if n := len(f.fc.commands(1, wire.CmdSendMessages)); n < 2 {
		t.Fatalf("node 1 saw %d sends, want the first and the refused second", n)
	}
}

// TestRoutingStaleMap: a map that keeps naming a node that is not the
// leader (the answering node's view lags) costs a request at most one 58
// there; its retry takes the main connection, which stores it.
func TestRoutingStaleMap(t *testing.T) {
	f := newRouteFixture(t, 2, 0, 0)
	f.mu.Lock()
	f.mapped = []int{0, 1}
	f.mu.Unlock()
	c, _ := dialRoute(t, f)
	sent := 0
	for deadline := time.Now().Add(10 * time.Second); len(f.fc.commands(1, wire.CmdSendMessages)) == 0; sent++ {
		if time.Now().After(deadline) {
			t.Fatal("the map's leader was never tried")
		}
		sendTo(t, c, 1, "m"+itoa(sent))
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		sendTo(t, c, 1, "m"+itoa(sent))
		sent++
	}
	if n := len(f.servedOn(0)); n != sent {
		t.Fatalf("node 0 stored %d sends, want %d", n, sent)
	}
}

// TestRoutingFallbackWhenNodeFails: a send in flight on a node whose
// connection breaks is resent on the main connection with the same request
// number and body, and the following sends use the main connection while
// the node is down.
func TestRoutingFallbackWhenNodeFails(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1)
	c, _ := dialRoute(t, f)
	sendTo(t, c, 1, "routed")
	f.mu.Lock()
	f.hold[1] = true
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := c.SendMessages(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(1), []wire.Message{{Payload: []byte("in flight")}})
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); len(f.servedOn(-2)) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the send never reached node 1")
		}
	}
	held := f.servedOn(-2)[0]
	f.mu.Lock()
	f.anywhere = true // node 0 now takes partition 1 too
	f.mu.Unlock()
	f.fc.nodes[1].kill()
	if err := <-done; err != nil {
		t.Fatalf("send in flight on the failed node: %v", err)
	}
	var resent *servedRequest
	for _, s := range f.servedOn(0) {
		if s.partition == 1 {
			resent = &s
		}
	}
	if resent == nil || resent.request != held.request || !bytes.Equal(resent.body, held.body) {
		t.Fatalf("resent on the main connection: %+v, want request %d with the same body", resent, held.request)
	}
	sendTo(t, c, 1, "after")
	if n := len(f.servedOn(0)); n < 2 {
		t.Fatalf("node 0 served %d partition-1 sends, want the resend and the next", n)
	}
}

// TestRoutingConsumerGroup: a group member's polls and offset commits go
// to each owned partition's leader; join and sync stay on the main
// connection.
func TestRoutingConsumerGroup(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1, 2)
	f.b.seed(1, 3)
	f.b.seed(2, 2)
	c, _ := dialRoute(t, f)
	f.b.setAssignment(c.ID(), 1, 2)
	co, err := c.NewConsumer(ctxTimeout(t), wire.NamedID("s"), wire.NamedID("t"), wire.GroupConsumer(wire.NamedID("g")),
		WithPollInterval(time.Millisecond), WithCommit(CommitAfterHandle))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, co, 5)
	if !slices.Equal(got[1], seq(1, 0, 3)) || !slices.Equal(got[2], seq(2, 0, 2)) {
		t.Fatalf("consumed %v", got)
	}
	if err := co.Close(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	for node := 1; node <= 2; node++ {
		var polls, stores int
		for _, s := range f.servedOn(node) {
			if s.partition != uint32(node) {
				t.Fatalf("node %d served partition %d", node, s.partition)
			}
			switch s.code {
			case wire.CmdPollMessages:
				polls++
			case wire.CmdStoreConsumerOffset:
				stores++
			}
		}
		if polls == 0 || stores == 0 {
			t.Fatalf("node %d: %d polls and %d offset stores, want some of each", node, polls, stores)
		}
		for _, code := range []wire.Command{wire.CmdJoinConsumerGroup, wire.CmdSyncConsumerGroup, wire.CmdLeaveConsumerGroup} {
			if n := len(f.fc.commands(node, code)); n != 0 {
				t.Fatalf("node %d got %d %v", node, n, code)
			}
		}
	}
	if len(f.fc.commands(0, wire.CmdJoinConsumerGroup)) == 0 || len(f.fc.commands(0, wire.CmdLeaveConsumerGroup)) != 1 {
		t.Fatal("membership commands did not go to the main connection")
	}
}

// TestRoutingKeyedSends: a SEND_MESSAGES by key goes to the leader of the
// partition the server's key rule picks; a balanced one to the main
// connection.
func TestRoutingKeyedSends(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1, 2)
	c, _ := dialRoute(t, f)
	key := []byte("k")
	want := int(xxh32Key(key) % 3)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := c.SendMessages(ctxTimeout(t), wire.NamedID("s"), wire.NamedID("t"), wire.PartitioningByKey(key), []wire.Message{{Payload: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
		if len(f.servedOn(want)) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if got := f.servedOn(want); len(got) == 0 || got[0].partition != uint32(want) {
		t.Fatalf("keyed sends never reached node %d: %+v", want, got)
	}
	for range 3 {
		if _, err := c.SendMessages(ctxTimeout(t), wire.NamedID("s"), wire.NamedID("t"), wire.Partitioning{Kind: wire.PartitionBalanced}, []wire.Message{{Payload: []byte("b")}}); err != nil {
			t.Fatal(err)
		}
	}
	for node := 1; node <= 2; node++ {
		for _, r := range f.fc.commands(node, wire.CmdSendMessages) {
			var sm wire.SendMessages
			if _, err := sm.Admit(r.Body); err == nil && sm.Partitioning.Kind == wire.PartitionBalanced {
				t.Fatalf("a balanced send went to node %d", node)
			}
		}
	}
}

// TestRoutingOffWithoutTheMap: a server that does not serve the map (here
// FeatureUnavailable, as a single node) is asked once per login; routing
// stays off and everything goes to the main connection. WithPartitionRouting(false)
// never asks.
func TestRoutingOffWithoutTheMap(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		fc := newFakeCluster(t, 3, 0)
		var mu sync.Mutex
		reads := 0
		fc.setHook(func(node int, c *fakeConn, r fakeReq) bool {
			if r.Command() == wire.CmdClusterPartitions {
				mu.Lock()
				reads++
				mu.Unlock()
				c.reply(r, wire.ErrFeatureUnavailable.Code, nil)
				return true
			}
			return false
		})
		var logs testutil.SyncBuffer
		opts := routeOpts(&logs)
		if disabled {
			opts = append(opts, WithPartitionRouting(false))
		}
		c, err := Dial(ctxTimeout(t), fc.addr(0), opts...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			sendTo(t, c, uint32(i%3), "x")
			time.Sleep(2 * time.Millisecond)
		}
		c.Close()
		mu.Lock()
		got := reads
		mu.Unlock()
		if want := map[bool]int{false: 1, true: 0}[disabled]; got != want {
			t.Fatalf("routing disabled %v: %d map reads, want %d", disabled, got, want)
		}
		for node := 1; node <= 2; node++ {
			if n := len(fc.ops(node, 0)); n != 0 {
				t.Fatalf("routing disabled %v: node %d got %d requests", disabled, node, n)
			}
		}
		if n := len(fc.commands(0, wire.CmdSendMessages)); n != 10 {
			t.Fatalf("node 0 got %d sends, want 10", n)
		}
	}
}

// TestRoutingAttachRefused: a node that refuses the attachment (an older
// Iggo without ATTACH_SESSION answers InvalidCommand) turns routing off;
// the sends go to the main connection.
func TestRoutingAttachRefused(t *testing.T) {
	f := newRouteFixture(t, 2, 1)
	f.mu.Lock()
	f.anywhere = true
	f.mu.Unlock()
	f.fc.setHook(func(node int, c *fakeConn, r fakeReq) bool {
		if r.Command() == wire.CmdAttachSession {
			c.reply(r, wire.ErrInvalidCommand.Code, nil)
			return true
		}
		return f.handle(node, c, r)
	})
	c, _ := dialRoute(t, f)
	for range 20 {
		sendTo(t, c, 0, "x")
		time.Sleep(2 * time.Millisecond)
	}
	if n := len(f.fc.commands(1, wire.CmdAttachSession)); n != 1 {
		t.Fatalf("%d attach attempts, want 1 (then routing off)", n)
	}
	if n := len(f.servedOn(0)); n != 20 {
		t.Fatalf("node 0 served %d sends, want 20", n)
	}
}

// TestRoutingProducer: a Producer with balanced partitioning sends each
// partition's batches to that partition's leader.
func TestRoutingProducer(t *testing.T) {
	f := newRouteFixture(t, 3, 0, 1, 2)
	c, _ := dialRoute(t, f)
	p, err := c.NewProducer(ctxTimeout(t), wire.NamedID("s"), wire.NamedID("t"), WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if err := p.Send(ctxTimeout(t), Message{Payload: []byte("m" + itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	total := 0
	for node := range 3 {
		for _, s := range f.servedOn(node) {
			if s.partition != uint32(node) {
				t.Fatalf("node %d stored a batch of partition %d", node, s.partition)
			}
		}
		total += len(f.b.msgs[uint32(node)])
	}
	if total != 60 {
		t.Fatalf("%d messages stored, want 60", total)
	}
	if len(f.servedOn(1)) == 0 || len(f.servedOn(2)) == 0 {
		t.Fatal("no batch reached the leaders of partitions 1 and 2")
	}
}

// TestRouteTable: identifiers by name and number, the key rule, leaders
// forgotten one by one and by node.
func TestRouteTable(t *testing.T) {
	m := wire.PartitionMap{
		Nodes: []wire.PartitionMapNode{{ReplicaID: 0, Host: "10.0.0.1", TCPPort: 1}, {ReplicaID: 1, Host: "10.0.0.2", TCPPort: 2, QUICPort: 3}},
		Topics: []wire.PartitionMapTopic{{StreamID: 4, StreamName: "s", TopicID: 5, TopicName: "t", Partitions: []wire.PartitionPlacement{
			{PartitionID: 0, Leader: 1, HasLeader: true}, {PartitionID: 1}, {PartitionID: 2, Leader: 0, HasLeader: true},
		}}},
	}
	tb := newRouteTable(&m, SchemeTCP)
	for _, tc := range []struct {
		rk   routeKey
		want string
	}{
		{routeKey{kind: routeID, stream: wire.NamedID("s"), topic: wire.NamedID("t"), partition: 0}, "10.0.0.2:2"},
		{routeKey{kind: routeID, stream: wire.NumericID(4), topic: wire.NumericID(5), partition: 2}, "10.0.0.1:1"},
		{routeKey{kind: routeID, stream: wire.NumericID(4), topic: wire.NamedID("t"), partition: 1}, ""},
		{routeKey{kind: routeID, stream: wire.NamedID("s"), topic: wire.NamedID("t"), partition: 9}, ""},
		{routeKey{kind: routeID, stream: wire.NamedID("x"), topic: wire.NamedID("t"), partition: 0}, ""},
		{routeKey{kind: routeKeyed, stream: wire.NamedID("s"), topic: wire.NamedID("t"), key: []byte("k")}, map[uint32]string{0: "10.0.0.2:2", 1: "", 2: "10.0.0.1:1"}[xxh32Key([]byte("k"))%3]},
	} {
		got, ok := tb.leaderAddr(&tc.rk)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%+v: %q %v, want %q", tc.rk, got, ok, tc.want)
		}
	}
	if q := newRouteTable(&m, SchemeQUIC); q.addrs[0] != "" || q.addrs[1] != "10.0.0.2:3" {
		t.Fatalf("QUIC addresses %v", q.addrs)
	}
	rk := routeKey{kind: routeID, stream: wire.NamedID("s"), topic: wire.NamedID("t"), partition: 0}
	if !tb.forget(&rk) || tb.forget(&rk) {
		t.Fatal("forget: want true once")
	}
	tb.forgetNode("10.0.0.1:1")
	rk.partition = 2
	if _, ok := tb.leaderAddr(&rk); ok {
		t.Fatal("a partition led by a forgotten node is still routed")
	}
}

// xxh32Key is the server's key rule hash.
func xxh32Key(k []byte) uint32 { return xhash.XXH32(k, 0) }
