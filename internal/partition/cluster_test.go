package partition

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

var clusterRef = catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 5, Settings: wire.DefaultTopicSettings()}

// startCluster starts n replicas with the topic created on each.
func startCluster(t *testing.T, n int) (*testNet, []*testNode) {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith starts n replicas encrypting with c (nil: plaintext).
func startClusterWith(t *testing.T, n int, c *encryption.Cipher) (*testNet, []*testNode) {
	t.Helper()
	return startClusterSettings(t, n, c, clusterRef.Settings)
}

// startClusterSettings is startClusterWith for a topic with settings s.
func startClusterSettings(t *testing.T, n int, c *encryption.Cipher, s wire.TopicSettings) (*testNet, []*testNode) {
	t.Helper()
	ref := clusterRef
	ref.Settings = s
	return startNodes(t, n, ref, func(_ int, r *testReplicator) Options {
		return Options{Dir: t.TempDir(), Replicator: r, Cipher: c}
	}, nil)
}

// startNodes starts n replicas of partition 0 of ref on one test network
// and creates it on each: opts gives node i's plane options, and serve
// (when set) registers node i's call handlers once its host runs.
func startNodes(t *testing.T, n int, ref catalog.TopicRef, opts func(i int, r *testReplicator) Options, serve func(r *testReplicator, p *Plane)) (*testNet, []*testNode) {
	t.Helper()
	net := newTestNet()
	var voters []replication.NodeID
	for i := range n {
		voters = append(voters, replication.NodeID(i))
	}
	topics := &fakeTopics{ref: ref, ids: []uint32{0}}
	nodes := make([]*testNode, n)
	for i := range n {
		r := &testReplicator{self: replication.NodeID(i), voters: voters}
		p := newClusterPlaneOpts(t, opts(i, r), topics)
		startHost(t, net, r, voters)
		if serve != nil {
			serve(r, p)
		}
		nodes[i] = &testNode{id: r.self, plane: p, repl: r}
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.host().Close()
			nd.plane.Close()
		}
	})
	for _, nd := range nodes {
		if err := nd.plane.CreatePartitions(ref, []uint32{0}); err != nil {
			t.Fatal(err)
		}
	}
	return net, nodes
}

func waitLeader(t *testing.T, nd *testNode, g replication.GroupID, cond func(replication.View) bool) replication.View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := nd.host().WaitFor(ctx, g, cond)
	if err != nil {
		t.Fatalf("node %d group %d: %v (view %+v)", nd.id, g, err, v)
	}
	return v
}

func messages(p *Plane) uint64 { return p.PartitionStats(clusterRef, 0).Messages }

// TestClusterThreeReplicas drives the partition plane over three raft
// replicas: leader-only writes, identical stored bytes, 58 on followers,
// exactly-once across a failover through the replicated duplicate window,
// replicated consumer offsets and purge.
func TestClusterThreeReplicas(t *testing.T) {
	net, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	leader := nodes[0].plane
	client := wire.Uint128{Lo: 42}

	if st, base := csend(t, leader, client, 1, sendBody(t, clusterRef, 3, "a")); st != 0 || base != 0 {
		t.Fatalf("first send: status %d base %d", st, base)
	}
	retried := sendBody(t, clusterRef, 2, "b")
	if st, base := csend(t, leader, client, 2, retried); st != 0 || base != 3 {
		t.Fatalf("second send: status %d base %d", st, base)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated messages", func() bool { return messages(nd.plane) == 5 })
	}
	want := pollAll(t, leader, clusterRef)
	for _, nd := range nodes[1:] {
		if got := pollAll(t, nd.plane, clusterRef); !bytes.Equal(got, want) {
			t.Fatalf("node %d polls other bytes than the leader", nd.id)
		}
	}
	if len(want) < wire.PollReplyHeadSize+2*wire.BatchHeaderSize {
		t.Fatalf("poll reply of %d bytes", len(want))
	}

	// A follower refuses writes with 58.
	if st, _ := csend(t, nodes[1].plane, client, 3, sendBody(t, clusterRef, 1, "c")); st != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("send to a follower: status %d", st)
	}
	store := wire.StoreConsumerOffset{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Offset: 2, Ack: wire.AckQuorum}
	if a := exchange(t, nodes[2].plane.storeOffset, wire.OpStoreConsumerOffset, client, 4, store.AppendTo(nil)); a.status != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("offset store on a follower: status %d", a.status)
	}
	// A consumer offset stored on the leader is visible on every replica.
	if a := exchange(t, leader.storeOffset, wire.OpStoreConsumerOffset, client, 5, store.AppendTo(nil)); a.status != 0 {
		t.Fatalf("offset store on the leader: status %d", a.status)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated offset", func() bool {
			off, ok := nd.plane.lookup(clusterRef.Incarnation, 0).log.Offsets().Get(storage.KindConsumer, 7)
			return ok && off == 2
		})
	}

	// The leader dies; a new one is elected among the survivors.
	net.setDown(0)
	nodes[0].host().Close()
	v := waitLeader(t, nodes[1], g, func(v replication.View) bool { return v.HasLeader && v.Leader != 0 })
	survivors := []*testNode{nodes[1], nodes[2]}
	newLeader, follower := survivors[0], survivors[1]
	if v.Leader == 2 {
		newLeader, follower = survivors[1], survivors[0]
	}
	waitLeader(t, newLeader, g, func(v replication.View) bool { return v.Role == replication.RoleLeader })
	// The retry of a committed send is an empty success, not a new append.
	if st, base := csend(t, newLeader.plane, client, 2, retried); st != 0 || base != -1 {
		t.Fatalf("retried send on the new leader: status %d base %d", st, base)
	}
	if st, base := csend(t, newLeader.plane, client, 6, sendBody(t, clusterRef, 4, "d")); st != 0 || base != 5 {
		t.Fatalf("send on the new leader: status %d base %d", st, base)
	}
	for _, nd := range survivors {
		eventually(t, 5*time.Second, "messages after failover", func() bool { return messages(nd.plane) == 9 })
	}
	if !bytes.Equal(pollAll(t, newLeader.plane, clusterRef), pollAll(t, follower.plane, clusterRef)) {
		t.Fatal("survivors store different bytes")
	}

	// Purge is a metadata effect on every node; it goes through the
	// partition log, so offsets restart at 0 on every replica.
	for _, nd := range survivors {
		if err := nd.plane.PurgeTopic(purgeRef(1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range survivors {
		eventually(t, 5*time.Second, "replicated purge", func() bool { return messages(nd.plane) == 0 })
	}
	if st, base := csend(t, newLeader.plane, client, 7, sendBody(t, clusterRef, 2, "e")); st != 0 || base != 0 {
		t.Fatalf("send after purge: status %d base %d", st, base)
	}
	for _, nd := range survivors {
		eventually(t, 5*time.Second, "messages after purge", func() bool {
			st := nd.plane.PartitionStats(clusterRef, 0)
			return st.Messages == 2 && st.CurrentOffset == 1
		})
		if _, ok := nd.plane.lookup(clusterRef.Incarnation, 0).log.Offsets().Get(storage.KindConsumer, 7); ok {
			t.Fatalf("node %d kept a consumer offset across the purge", nd.id)
		}
	}
}

// TestClusterRestartReplaysIdempotently restarts a single-replica group
// over its kept raft log: every committed entry is applied again from the
// first index, and nothing is stored twice (also across a purge).
func TestClusterRestartReplaysIdempotently(t *testing.T) {
	kept := replication.NewMemoryLog()
	node := keptNode{t: t, dir: t.TempDir(), kept: kept}
	start, stop := node.start, node.stop
	g := replicated.GroupID(clusterRef, 0)
	client := wire.Uint128{Lo: 9}

	p, nd := start()
	for i := range 3 {
		if st, base := csend(t, p, client, uint64(i+1), sendBody(t, clusterRef, 3, "x")); st != 0 || base != int64(3*i) {
			t.Fatalf("send %d: status %d base %d", i, st, base)
		}
	}
	before := pollAll(t, p, clusterRef)
	// The bootstrap entries are compacted once they applied, with the
	// first election (a stop before that queues it again at the start).
	eventually(t, 5*time.Second, "bootstrap compaction", func() bool { first, _ := kept.FirstIndex(); return first >= 2 })
	stop(p, nd)

	p, nd = start()
	commit := waitLeader(t, nd, g, func(v replication.View) bool { return v.Applied == v.Commit && v.Commit > 0 }).Commit
	if st := p.PartitionStats(clusterRef, 0); st.Messages != 9 {
		t.Fatalf("after restart (commit %d): %+v", commit, st)
	}
	if first, _ := kept.FirstIndex(); first < 2 {
		t.Fatalf("the bootstrap entries were not compacted: first index %d", first)
	}
	// The replay applied the batches from their headers.
	if n := replicaOf(p, g).State().ReadsBack; n != 0 {
		t.Fatalf("the restart read %d batches back from the segment", n)
	}
	if !bytes.Equal(pollAll(t, p, clusterRef), before) {
		t.Fatal("restart changed the stored bytes")
	}
	// The replay rebuilt the duplicate window.
	if st, base := csend(t, p, client, 3, sendBody(t, clusterRef, 3, "x")); st != 0 || base != -1 {
		t.Fatalf("retry after restart: status %d base %d", st, base)
	}
	if err := p.PurgeTopic(purgeRef(1)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "purge", func() bool { return messages(p) == 0 })
	if st, base := csend(t, p, client, 4, sendBody(t, clusterRef, 2, "y")); st != 0 || base != 0 {
		t.Fatalf("send after purge: status %d base %d", st, base)
	}
	stop(p, nd)

	p, nd = start()
	waitLeader(t, nd, g, func(v replication.View) bool { return v.Applied == v.Commit && v.Commit > commit })
	if st := p.PartitionStats(clusterRef, 0); st.Messages != 2 || st.CurrentOffset != 1 {
		t.Fatalf("after a restart across a purge: %+v", st)
	}
	if st, base := csend(t, p, client, 5, sendBody(t, clusterRef, 1, "z")); st != 0 || base != 2 {
		t.Fatalf("send after the second restart: status %d base %d", st, base)
	}
	stop(p, nd)
}

// TestClusterConcurrentSends: concurrent sends on the leader get distinct,
// contiguous offsets in log order, and every replica stores the same bytes.
func TestClusterConcurrentSends(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	const senders, each = 4, 25
	var wg sync.WaitGroup
	bases := make(chan int64, senders*each)
	errs := make(chan string, senders*each)
	for s := range senders {
		wg.Go(func() {
			client := wire.Uint128{Lo: uint64(100 + s)}
			for i := range each {
				body, err := buildSend(clusterRef, 2, fmt.Sprintf("s%d-%d", s, i))
				if err != nil {
					errs <- err.Error()
					continue
				}
				a, err := runExchange(nodes[0].plane.send, wire.OpSendMessages, client, uint64(i+1), body)
				for tries := 0; err == nil && a.status == wire.ErrTransientNotAccepted.Code && tries < 20; tries++ {
					// Not accepted (a loaded machine moved the leadership
					// for a moment): retry the same request on the leader,
					// as a client does.
					time.Sleep(50 * time.Millisecond)
					lead, ok := nodes[0].repl.Leader(g)
					if !ok {
						continue
					}
					a, err = runExchange(nodes[lead].plane.send, wire.OpSendMessages, client, uint64(i+1), body)
				}
				if err != nil || a.status != 0 || len(a.body) != 24 {
					errs <- fmt.Sprintf("sender %d send %d: status %d body %d bytes", s, i, a.status, len(a.body))
					continue
				}
				bases <- int64(binary.LittleEndian.Uint64(a.body[16:]))
			}
		})
	}
	wg.Wait()
	close(bases)
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var got []int64
	for b := range bases {
		got = append(got, b)
	}
	slices.Sort(got)
	for i, b := range got {
		if b != int64(2*i) {
			t.Fatalf("base offsets %v are not 0, 2, 4, ...", got)
		}
	}
	for _, nd := range nodes {
		eventually(t, 10*time.Second, "replicated messages", func() bool { return messages(nd.plane) == 2*senders*each })
	}
	want := pollAll(t, nodes[0].plane, clusterRef)
	for _, nd := range nodes[1:] {
		if !bytes.Equal(pollAll(t, nd.plane, clusterRef), want) {
			t.Fatalf("node %d stores other bytes", nd.id)
		}
	}
}

// TestClusterEncrypted: the leader seals each batch before proposing it,
// so every replica stores the same ciphertext (the segments are the raft
// log) and serves the same plaintext.
func TestClusterEncrypted(t *testing.T) {
	_, nodes := startClusterWith(t, 3, testutil.Cipher(t, 1))
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	for i := range 3 {
		if st, base := csend(t, nodes[0].plane, wire.Uint128{Lo: 5}, uint64(i+1), sendBody(t, clusterRef, 2, "secret")); st != 0 || base != int64(2*i) {
			t.Fatalf("send %d: status %d base %d", i, st, base)
		}
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated messages", func() bool { return messages(nd.plane) == 6 })
	}
	want := pollAll(t, nodes[0].plane, clusterRef)
	if !bytes.Contains(want, []byte("secret")) {
		t.Fatal("poll did not decrypt")
	}
	for _, nd := range nodes[1:] {
		if !bytes.Equal(pollAll(t, nd.plane, clusterRef), want) {
			t.Fatalf("node %d serves other plaintext", nd.id)
		}
	}
	var stored [][]byte
	for _, nd := range nodes {
		logs, err := filepath.Glob(filepath.Join(nd.plane.PartitionDir(clusterRef, 0), "*.log"))
		if err != nil || len(logs) != 1 {
			t.Fatalf("node %d segment logs %v %v", nd.id, logs, err)
		}
		b, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("secret")) {
			t.Fatalf("node %d stores plaintext", nd.id)
		}
		stored = append(stored, b)
	}
	if !bytes.Equal(stored[0], stored[1]) || !bytes.Equal(stored[1], stored[2]) {
		t.Fatal("replicas store different bytes")
	}
}

// TestClusterTransientCodes: a leader that loses its quorum after
// admitting a send answers 57 (outcome unknown); with no leader a write
// waits for one, then answers 58; the retried send is stored exactly once
// when the quorum returns.
func TestClusterTransientCodes(t *testing.T) {
	net, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 3}
	body := sendBody(t, clusterRef, 2, "q")
	// Cut the followers off: the leader admits the send but cannot commit it.
	net.mu.Lock()
	net.down[1], net.down[2] = true, true
	net.mu.Unlock()
	if st, _ := csend(t, nodes[0].plane, client, 1, body); st != wire.ErrTransientNotCommitted.Code {
		t.Fatalf("send without a quorum: status %d", st)
	}
	// The isolated leader steps down: no leader is known any more, and a
	// write waits for one, then answers 58.
	waitLeader(t, nodes[0], g, func(v replication.View) bool { return !v.HasLeader })
	began := time.Now()
	if st, _ := csend(t, nodes[0].plane, client, 2, sendBody(t, clusterRef, 1, "r")); st != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("send with no leader: status %d", st)
	}
	if d := time.Since(began); d < replicated.LeaderWait-100*time.Millisecond {
		t.Fatalf("answered 58 after %v, before waiting for a leader", d)
	}
	// Node 1 returns: node 0 holds the longer log, so it leads again and
	// commits the first send. A retry answers 57 while that copy is still
	// in flight in the log, then the duplicate window's empty success;
	// the send is never stored twice.
	net.mu.Lock()
	delete(net.down, 1)
	net.mu.Unlock()
	waitLeader(t, nodes[0], g, func(v replication.View) bool { return v.Role == replication.RoleLeader })
	var st uint32
	var base int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, base = csend(t, nodes[0].plane, client, 1, body)
		if st != wire.ErrTransientNotCommitted.Code || time.Now().After(deadline) {
			break
		}
	}
	if st != 0 || base != -1 {
		t.Fatalf("retry on the re-elected leader: status %d base %d", st, base)
	}
	net.mu.Lock()
	delete(net.down, 2)
	net.mu.Unlock()
	for _, nd := range nodes {
		for deadline := time.Now().Add(10 * time.Second); messages(nd.plane) != 2; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not hold one copy of the retried send: %s", nd.id, describe(nd, g))
			}
		}
	}
}

// describe is a node's view of group g, for failure messages.
func describe(nd *testNode, g replication.GroupID) string {
	v, _ := nd.host().Status(g)
	halted := false
	if rep := replicaOf(nd.plane, g); rep != nil {
		halted = rep.State().Halted
	}
	return fmt.Sprintf("view %+v halted %v stats %+v", v, halted, nd.plane.PartitionStats(clusterRef, 0))
}

// TestClusterOffsetsAndLifecycle: a poll's auto-commit is stored on the
// leader at once and replicated from it, and stays local on a follower; a NoAck store is answered at
// once and still replicated; deleting the topic removes the group.
func TestClusterOffsetsAndLifecycle(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	if st, base := csend(t, nodes[0].plane, wire.Uint128{Lo: 1}, 1, sendBody(t, clusterRef, 4, "m")); st != 0 || base != 0 {
		t.Fatalf("send: status %d base %d", st, base)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated messages", func() bool { return messages(nd.plane) == 4 })
	}
	offset := func(nd *testNode, id uint32) (uint64, bool) {
		return nd.plane.lookup(clusterRef.Incarnation, 0).log.Offsets().Get(storage.KindConsumer, id)
	}
	poll := func(nd *testNode, consumer uint32) {
		req := wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(consumer)},
			StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
			Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.PollingStrategy{Kind: wire.PollOffset}, Count: 3, AutoCommit: true}
		if a := exchange(t, nd.plane.poll, wire.OpNonReplicated, wire.Uint128{Lo: 2}, 0, req.AppendTo(nil)); a.status != 0 {
			t.Fatalf("poll on node %d: status %d", nd.id, a.status)
		}
	}
	poll(nodes[0], 11) // leader: replicated
	// ... and stored on the leader before the poll is answered, so that
	// the next "next" poll or offset read there (where every node
	// forwards them) sees it.
	if off, ok := offset(nodes[0], 11); !ok || off != 2 {
		t.Fatalf("the leader's auto-commit is not stored when the poll is answered: %d %v", off, ok)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated auto-commit", func() bool { off, ok := offset(nd, 11); return ok && off == 2 })
	}
	poll(nodes[1], 12) // follower: local only
	if off, ok := offset(nodes[1], 12); !ok || off != 2 {
		t.Fatalf("follower's local auto-commit: %d %v", off, ok)
	}
	store := wire.StoreConsumerOffset{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(13)},
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Offset: 1, Ack: wire.AckNone}
	if a := exchange(t, nodes[0].plane.storeOffset, wire.OpStoreConsumerOffset, wire.Uint128{Lo: 1}, 2, store.AppendTo(nil)); a.status != 0 {
		t.Fatalf("NoAck store: status %d", a.status)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated NoAck store", func() bool { off, ok := offset(nd, 13); return ok && off == 1 })
	}
	if _, ok := offset(nodes[2], 12); ok {
		t.Fatal("a follower's auto-commit was replicated")
	}
	// An offset past the end is refused on the leader (as single node).
	store.Offset, store.Ack = 4, wire.AckQuorum
	if a := exchange(t, nodes[0].plane.storeOffset, wire.OpStoreConsumerOffset, wire.Uint128{Lo: 1}, 3, store.AppendTo(nil)); a.status != wire.ErrInvalidOffset.Code {
		t.Fatalf("store past the end: status %d", a.status)
	}
	del := wire.DeleteConsumerOffset{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(14)},
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Ack: wire.AckQuorum}
	if a := exchange(t, nodes[0].plane.deleteOffset, wire.OpDeleteConsumerOffset, wire.Uint128{Lo: 1}, 4, del.AppendTo(nil)); a.status != wire.ErrConsumerOffsetNotFound.Code {
		t.Fatalf("delete of nothing: status %d", a.status)
	}
	del.Consumer.ID = wire.NumericID(13)
	if a := exchange(t, nodes[0].plane.deleteOffset, wire.OpDeleteConsumerOffset, wire.Uint128{Lo: 1}, 5, del.AppendTo(nil)); a.status != 0 {
		t.Fatalf("delete: status %d", a.status)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated delete", func() bool { _, ok := offset(nd, 13); return !ok })
	}

	for _, nd := range nodes {
		if err := nd.plane.DeleteTopic(clusterRef); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "group removed", func() bool { _, ok := nd.host().Status(g); return !ok })
	}
}

// TestClusterBootstrapCompactedAfterEarlyStop: a node whose new group's
// bootstrap entries were not compacted before it stopped compacts them
// after its next start.
func TestClusterBootstrapCompactedAfterEarlyStop(t *testing.T) {
	dir := t.TempDir()
	kept := replication.NewMemoryLog()
	voters := []replication.NodeID{0}
	g := replicated.GroupID(clusterRef, 0)
	start := func(compact bool) (*Plane, *testNode) {
		r := &testReplicator{self: 0, voters: voters, noCompact: !compact}
		logs := func(string) (replication.LogStorage, error) { return kept, nil }
		p := newClusterPlane(t, dir, r, logs, &fakeTopics{ref: clusterRef, ids: []uint32{0}})
		startHost(t, newTestNet(), r, voters)
		if err := p.CreatePartitions(clusterRef, []uint32{0}); err != nil {
			t.Fatal(err)
		}
		nd := &testNode{id: 0, plane: p, repl: r}
		waitLeader(t, nd, g, func(v replication.View) bool { return v.Role == replication.RoleLeader && v.Applied >= 2 })
		return p, nd
	}
	stop := func(p *Plane, nd *testNode) {
		nd.host().Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	p, nd := start(false)
	stop(p, nd)
	if first, _ := kept.FirstIndex(); first != 1 {
		t.Fatalf("compacted although refused: first index %d", first)
	}
	p, nd = start(true)
	eventually(t, 5*time.Second, "bootstrap compaction after the restart", func() bool { first, _ := kept.FirstIndex(); return first >= 2 })
	stop(p, nd)
}
