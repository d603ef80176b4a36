package partition

import (
	"bytes"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterSendAfterPurgeLandsAfterIt: a send that follows a purge
// (its metadata entry applied, the partition entry only queued) waits for
// the purge and is stored after it, never purged by it.
func TestClusterSendAfterPurgeLandsAfterIt(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 11}
	for round := range 5 {
		for i := range 3 {
			if st, _ := csend(t, nodes[0].plane, client, uint64(10*round+i+1), sendBody(t, clusterRef, 2, "old")); st != 0 {
				t.Fatalf("round %d send %d: status %d", round, i, st)
			}
		}
		for _, nd := range nodes {
			if err := nd.plane.PurgeTopic(purgeRef(uint64(round + 1))); err != nil {
				t.Fatal(err)
			}
		}
		if st, base := csend(t, nodes[0].plane, client, uint64(10*round+9), sendBody(t, clusterRef, 1, "new")); st != 0 || base != 0 {
			t.Fatalf("round %d: send right after the purge: status %d base %d, want stored at 0", round, st, base)
		}
		for _, nd := range nodes {
			eventually(t, 5*time.Second, "the send after the purge on every node", func() bool { return messages(nd.plane) == 1 })
		}
	}
}

// TestClusterFollowerCatchesUpAcrossPurge: a follower that was cut off
// while the partition was purged and written again receives the purge and
// the batches after it in one go; it keeps those batches whole in its raft
// log until the purge has applied, then stores them, and ends with the
// leader's messages. A restart afterwards reads the same.
func TestClusterFollowerCatchesUpAcrossPurge(t *testing.T) {
	dc := newDurableCluster(t, 3, &fakeTopics{ref: clusterRef, ids: []uint32{0}})
	g := replicated.GroupID(clusterRef, 0)
	net, nodes := dc.start(clusterRef)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader })
	}
	v := waitLeader(t, nodes[0], g, func(v replication.View) bool { return v.HasLeader })
	leader := nodes[v.Leader]
	lag := nodes[(int(v.Leader)+1)%3]
	client := wire.Uint128{Lo: 31}
	for i := range 3 {
		if st, _ := csend(t, leader.plane, client, uint64(i+1), sendBody(t, clusterRef, 2, "old")); st != 0 {
			t.Fatalf("send %d: status %d", i, st)
		}
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the old messages on every node", func() bool { return messages(nd.plane) == 6 })
	}
	net.setDown(lag.id)
	// The leader's compaction at the purge waits, so the follower gets
	// the log as entries, not as a snapshot.
	release := make(chan struct{})
	leader.plane.mode.(replicatedMode).set.Hold(release)
	for _, nd := range nodes {
		if err := nd.plane.PurgeTopic(purgeRef(1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if st, base := csend(t, leader.plane, client, uint64(10+i), sendBody(t, clusterRef, 1, "new")); st != 0 || base != int64(i) {
			t.Fatalf("send %d after the purge: status %d base %d", i, st, base)
		}
	}
	net.setUp(lag.id)
	eventually(t, 10*time.Second, "the lagging follower", func() bool { return messages(lag.plane) == 4 })
	if got, want := pollAll(t, lag.plane, clusterRef), pollAll(t, leader.plane, clusterRef); !bytes.Equal(got, want) {
		t.Fatalf("the follower's messages differ from the leader's:\n%x\n%x", got, want)
	}
	if n := replicaOf(lag.plane, g).State().KeptWhole; n == 0 {
		t.Fatal("the follower kept no batch whole: the purge and the batches after it did not arrive together")
	}
	close(release)
	dc.stop(nodes)
	_, nodes = dc.start(clusterRef)
	for _, nd := range nodes {
		eventually(t, 10*time.Second, "the messages after a restart", func() bool { return messages(nd.plane) == 4 })
	}
}

// purgeRef is clusterRef for the purge of identity id.
func purgeRef(id uint64) catalog.TopicRef {
	r := clusterRef
	r.PurgedAt = id
	return r
}
