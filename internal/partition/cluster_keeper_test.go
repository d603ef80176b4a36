package partition

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// setUp reconnects node id to the test network.
func (n *testNet) setUp(id replication.NodeID) {
	n.mu.Lock()
	delete(n.down, id)
	n.mu.Unlock()
}

// purgeIDs returns every node's applied purge identity of partition 0.
func purgeIDs(nodes []*testNode) []uint64 {
	out := make([]uint64, len(nodes))
	for i, nd := range nodes {
		if rep := replicaOf(nd.plane, replicated.GroupID(clusterRef, 0)); rep != nil {
			out[i] = rep.State().PurgeApplied
		}
	}
	return out
}

// sendOld stores n single-message batches through node 0 (the leader).
func sendOld(t *testing.T, nodes []*testNode, client wire.Uint128, first uint64, n int) {
	t.Helper()
	for i := range n {
		if st, _ := csend(t, nodes[0].plane, client, first+uint64(i), sendBody(t, clusterRef, 1, "old")); st != 0 {
			t.Fatalf("send %d: status %d", i, st)
		}
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the messages on every node", func() bool { return messages(nd.plane) == uint64(n) })
	}
}

// TestClusterPurgeSurvivesLeaderChange: the partition leader is cut off
// right when the purge's metadata entry applies on every node, so the
// node that leads then cannot commit the purge and the others leave it to
// it. The purge still happens, once, on every replica: the new leader's
// keeper proposes it.
func TestClusterPurgeSurvivesLeaderChange(t *testing.T) {
	net, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 21}
	sendOld(t, nodes, client, 1, 3)

	net.setDown(0)
	for _, nd := range nodes {
		if err := nd.plane.PurgeTopic(purgeRef(7)); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes[1:] {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader != 0 })
	}
	for _, nd := range nodes[1:] {
		eventually(t, 5*time.Second, "the purge on the new leader's side", func() bool { return messages(nd.plane) == 0 })
	}
	net.setUp(0)
	eventually(t, 10*time.Second, "the purge on the old leader", func() bool { return messages(nodes[0].plane) == 0 })
	// Nodes 1 and 2 applied the entry; node 0, behind the compaction at
	// the purge, learnt it from the partition snapshot.
	eventually(t, 5*time.Second, "purge 7 known on every node", func() bool {
		for _, id := range purgeIDs(nodes) {
			if id != 7 {
				return false
			}
		}
		return true
	})
	// Applied once: what is sent after it stays.
	v := waitLeader(t, nodes[1], g, func(v replication.View) bool { return v.HasLeader })
	leader := nodes[v.Leader]
	if st, base := csend(t, leader.plane, client, 10, sendBody(t, clusterRef, 2, "new")); st != 0 || base != 0 {
		t.Fatalf("send after the purge: status %d base %d", st, base)
	}
	time.Sleep(300 * time.Millisecond) // a second purge would land meanwhile
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the messages sent after the purge", func() bool { return messages(nd.plane) == 2 })
	}
}

// TestClusterPurgeProposedTwiceAppliesOnce: a second proposal of the same
// purge (a node that also believed it led) is refused by the leader, and
// the messages sent between the two survive.
func TestClusterPurgeProposedTwiceAppliesOnce(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 22}
	sendOld(t, nodes, client, 1, 3)
	purge := purgeEntry(1, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := nodes[0].repl.Propose(ctx, g, purge); err != nil {
		t.Fatal(err)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the purge", func() bool { return messages(nd.plane) == 0 })
	}
	if st, base := csend(t, nodes[0].plane, client, 10, sendBody(t, clusterRef, 2, "between")); st != 0 || base != 0 {
		t.Fatalf("send after the purge: status %d base %d", st, base)
	}
	if _, err := nodes[0].repl.Propose(ctx, g, purge); !errors.Is(err, replicated.ErrPurgeKnown) {
		t.Errorf("second proposal of purge 4: %v, want ErrPurgeKnown", err)
	}
	// The metadata asking for it once more changes nothing either.
	for _, nd := range nodes {
		if err := nd.plane.PurgeTopic(purgeRef(4)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	for i, nd := range nodes {
		if n := messages(nd.plane); n != 2 {
			t.Fatalf("node %d holds %d messages after the second purge proposal, want the 2 sent between", i, n)
		}
	}
}

// TestClusterPurgeWantedAcrossRestart: a purge asked for while the group
// has no leader is in no log and applied nowhere; every node restarts, the
// metadata names the purge again (CreatePartitions), and it happens.
func TestClusterPurgeWantedAcrossRestart(t *testing.T) {
	dc := newDurableCluster(t, 3, &fakeTopics{ref: clusterRef, ids: []uint32{0}})
	start := func(ref func() catalog.TopicRef) (*testNet, []*testNode) { return dc.start(ref()) }
	stop := dc.stop
	g := replicated.GroupID(clusterRef, 0)

	net, nodes := start(func() catalog.TopicRef { return clusterRef })
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader })
	}
	v := waitLeader(t, nodes[0], g, func(v replication.View) bool { return v.HasLeader })
	nodes[0], nodes[v.Leader] = nodes[v.Leader], nodes[0] // sendOld sends through nodes[0]
	sendOld(t, nodes, wire.Uint128{Lo: 23}, 1, 3)
	for _, nd := range nodes {
		net.setDown(nd.id)
	}
	// No node leads any more (CheckQuorum): no keeper can propose, so the
	// purge is only wanted, in no log.
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return !v.HasLeader })
	}
	for _, nd := range nodes {
		if err := nd.plane.PurgeTopic(purgeRef(9)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for i, nd := range nodes {
		if n := messages(nd.plane); n != 3 {
			t.Fatalf("node %d: %d messages before the restart, want 3 (the purge could not commit)", i, n)
		}
	}
	stop(nodes)

	_, nodes = start(func() catalog.TopicRef { return purgeRef(9) })
	defer stop(nodes)
	// Every node knows the purge: from the entry, or, behind the
	// compaction at the purge, from the partition snapshot.
	eventually(t, 10*time.Second, "the wanted purge applied after the restart on every node", func() bool {
		for _, id := range purgeIDs(nodes) {
			if id != 9 {
				return false
			}
		}
		return true
	})
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Applied == v.Commit })
		eventually(t, 5*time.Second, "no message after the purge", func() bool { return messages(nd.plane) == 0 })
	}
}

// TestClusterPollRightAfterPurgeReply: once AwaitPartitions returns (the
// PURGE_TOPIC reply waits for it), a poll on that node sees no message of
// before the purge, also on a follower.
func TestClusterPollRightAfterPurgeReply(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 24}
	for round := range 5 {
		sendOld(t, nodes, client, uint64(10*round+1), 3)
		id := uint64(round + 1)
		for _, nd := range nodes {
			if err := nd.plane.PurgeTopic(purgeRef(id)); err != nil {
				t.Fatal(err)
			}
		}
		for i, nd := range nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := nd.plane.AwaitPartitions(ctx, purgeRef(id))
			cancel()
			if err != nil {
				t.Fatalf("round %d node %d: %v", round, i, err)
			}
			var polled wire.PolledMessages
			if err := polled.Decode(pollAll(t, nd.plane, clusterRef)); err != nil {
				t.Fatal(err)
			}
			if polled.Count != 0 {
				t.Fatalf("round %d node %d: a poll right after the purge reply returned %d old messages", round, i, polled.Count)
			}
		}
	}
}

// groupOffset returns node nd's stored offset of consumer group 3 on
// partition 0.
func groupOffset(nd *testNode) (uint64, bool) {
	part := nd.plane.lookup(clusterRef.Incarnation, 0)
	if part == nil || part.log == nil {
		return 0, false
	}
	return part.log.Offsets().Get(storage.KindGroup, 3)
}

// TestClusterGroupOffsetDeletionSurvivesLeaderChange: like a purge, the
// deletion of a deleted group's offsets is proposed by whichever node
// leads the partition, also when the leader is cut off right when the
// metadata entry applies.
func TestClusterGroupOffsetDeletionSurvivesLeaderChange(t *testing.T) {
	net, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	sendOld(t, nodes, wire.Uint128{Lo: 25}, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	store := commit.Write{Kind: commit.OffsetStore, Consumer: storage.KindGroup, ID: 3, Offset: 1}
	if out := replicaOf(nodes[0].plane, g).Commit(ctx, store); out.Code != 0 {
		t.Fatalf("group offset store: status %d", out.Code)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the group offset on every node", func() bool { _, ok := groupOffset(nd); return ok })
	}

	net.setDown(0)
	for _, nd := range nodes {
		if err := nd.plane.DeleteGroupOffsets(clusterRef, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes[1:] {
		actx, acancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := nd.plane.AwaitPartitions(actx, clusterRef)
		acancel()
		if err != nil {
			t.Fatalf("node %d: %v", nd.id, err)
		}
		if _, ok := groupOffset(nd); ok {
			t.Fatalf("node %d keeps the deleted group's offset", nd.id)
		}
	}
	net.setUp(0)
	eventually(t, 10*time.Second, "the deletion on the old leader", func() bool { _, ok := groupOffset(nodes[0]); return !ok })
	if messages(nodes[1].plane) != 2 {
		t.Fatalf("the deletion touched the messages: %d", messages(nodes[1].plane))
	}
}

// historyTopics is fakeTopics that knows group 3 was deleted
// (catalog.GroupHistory).
type historyTopics struct{ fakeTopics }

func (h *historyTopics) GroupDeleted(_ catalog.TopicRef, group uint32) bool { return group == 3 }

// TestClusterGroupDeletionWantedAcrossRestart: the offsets of a deleted
// group whose deletion applied nowhere (no leader) are found when the
// groups start again after a restart of every node, and deleted.
func TestClusterGroupDeletionWantedAcrossRestart(t *testing.T) {
	dc := newDurableCluster(t, 3, &historyTopics{fakeTopics{ref: clusterRef, ids: []uint32{0}}})
	g := replicated.GroupID(clusterRef, 0)
	net, nodes := dc.start(clusterRef)
	v := waitLeader(t, nodes[0], g, func(v replication.View) bool { return v.HasLeader })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	store := commit.Write{Kind: commit.OffsetStore, Consumer: storage.KindGroup, ID: 3, Offset: 1}
	if out := replicaOf(nodes[v.Leader].plane, g).Commit(ctx, store); out.Code != 0 {
		t.Fatalf("group offset store: status %d", out.Code)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the group offset on every node", func() bool { _, ok := groupOffset(nd); return ok })
	}
	for _, nd := range nodes {
		net.setDown(nd.id)
	}
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return !v.HasLeader })
	}
	for _, nd := range nodes {
		if err := nd.plane.DeleteGroupOffsets(clusterRef, 3); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for _, nd := range nodes {
		if _, ok := groupOffset(nd); !ok {
			t.Fatalf("node %d: the deletion applied without a leader", nd.id)
		}
	}
	dc.stop(nodes)

	_, nodes = dc.start(clusterRef)
	defer dc.stop(nodes)
	for _, nd := range nodes {
		eventually(t, 10*time.Second, "the deleted group's offset gone after the restart", func() bool { _, ok := groupOffset(nd); return !ok })
	}
}
