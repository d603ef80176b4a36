package partition

import (
	"bytes"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// segmentedClient is the client segmentedCluster's send uses.
var segmentedClient = wire.Uint128{Lo: 9}

// segmentedCluster starts 3 replicas whose segments end after every
// batch, waits until node 0 leads partition 0, and returns send, which
// sends a batch of n messages there as segmentedClient (next request
// number).
func segmentedCluster(t *testing.T) (*testNet, []*testNode, replication.GroupID, func(n int)) {
	t.Helper()
	s := clusterRef.Settings
	s.SegmentSize = 1 // every batch ends its segment once revealed
	net, nodes := startClusterSettings(t, 3, nil, s)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	req := uint64(0)
	send := func(n int) {
		t.Helper()
		req++
		if st, _ := csend(t, nodes[0].plane, segmentedClient, req, sendBody(t, clusterRef, n, "m")); st != 0 {
			t.Fatalf("send %d: status %d", req, st)
		}
	}
	return net, nodes, g, send
}

// compactWhileDown runs with node 2 down (segments of one batch each,
// 12 messages on the live nodes after 3 more sends of 2): it removes the 4
// oldest segments on nodes 0 and 1, which compacts their raft logs past
// what node 2 holds, and brings node 2 back.
func compactWhileDown(t *testing.T, net *testNet, nodes []*testNode, g replication.GroupID, send func(int)) {
	t.Helper()
	for range 3 {
		send(2)
	}
	for _, nd := range nodes[:2] {
		eventually(t, 5*time.Second, "batches on the two live nodes", func() bool { return messages(nd.plane) == 12 })
	}
	first, err := replicaOf(nodes[0].plane, g).State().FirstIndex, error(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, nd := range nodes[:2] {
		if err := nd.plane.DeleteSegments(clusterRef, 0, 4); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes[:2] {
		part := nd.plane.lookup(clusterRef.Incarnation, 0)
		eventually(t, 5*time.Second, "segments removed", func() bool { f, _ := part.log.Bounds(); return f == 8 })
	}
	if now := replicaOf(nodes[0].plane, g).State().FirstIndex; now <= first {
		t.Fatalf("raft log not compacted before its segments went: first index %d, before %d (%v)", now, first, err)
	}
	net.mu.Lock()
	delete(net.down, 2)
	net.mu.Unlock()
}

// TestClusterCompactionCatchUp: removing segments compacts the raft log
// past them first; a replica that was down while that happened catches
// up from the snapshot (restarting empty at the first retained offset)
// and then from the retained segments, read back as raft entries.
func TestClusterCompactionCatchUp(t *testing.T) {
	net, nodes, g, send := segmentedCluster(t)
	for range 3 {
		send(2)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "first batches everywhere", func() bool { return messages(nd.plane) == 6 })
	}
	net.setDown(2)
	compactWhileDown(t, net, nodes, g, send)
	send(2)
	want := pollAll(t, nodes[0].plane, clusterRef)
	part2 := nodes[2].plane.lookup(clusterRef.Incarnation, 0)
	eventually(t, 10*time.Second, "the lagging replica caught up", func() bool {
		f, next := part2.log.Bounds()
		return f == 8 && next == 14
	})
	if got := pollAll(t, nodes[2].plane, clusterRef); !bytes.Equal(got, want) {
		t.Fatal("the caught-up replica serves other messages than the leader")
	}
	for _, nd := range nodes {
		if next, _ := nd.plane.lookup(clusterRef.Incarnation, 0).log.Tail(); next != 14 {
			t.Fatalf("node %d tail %d", nd.id, next)
		}
	}
}
