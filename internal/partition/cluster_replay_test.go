package partition

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterRestartReplaysMembershipChanges restarts a group whose log
// holds membership changes (a learner added, then a joint change that
// adds another and removes the first, left automatically) between its
// batches: the start-up replay follows them from the headers, so nothing
// is read back from the segment, and raft resumes with the membership
// they made (a later change and a later send still work).
func TestClusterRestartReplaysMembershipChanges(t *testing.T) {
	node := keptNode{t: t, dir: t.TempDir(), kept: replication.NewMemoryLog()}
	start, stop := node.start, node.stop
	voters := []replication.NodeID{0}
	g := replicated.GroupID(clusterRef, 0)
	client := wire.Uint128{Lo: 11}
	change := func(nd *testNode, cs ...replication.MemberChange) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := nd.host().ChangeMembership(ctx, g, cs); err != nil {
			t.Fatal(err)
		}
	}
	send := func(p *Plane, req uint64, base int64) {
		t.Helper()
		if st, b := csend(t, p, client, req, sendBody(t, clusterRef, 2, "m")); st != 0 || b != base {
			t.Fatalf("send %d: status %d base %d", req, st, b)
		}
	}

	p, nd := start()
	send(p, 1, 0)
	change(nd, replication.MemberChange{Type: replication.AddLearner, Node: 5})
	send(p, 2, 2)
	change(nd, replication.MemberChange{Type: replication.AddLearner, Node: 6}, replication.MemberChange{Type: replication.Remove, Node: 5})
	waitLeader(t, nd, g, func(v replication.View) bool { return !v.Joint && slices.Equal(v.Learners, []replication.NodeID{6}) })
	send(p, 3, 4)
	before := pollAll(t, p, clusterRef)
	stop(p, nd)

	p, nd = start()
	v := waitLeader(t, nd, g, func(v replication.View) bool { return v.Applied == v.Commit && v.Commit > 0 })
	if !slices.Equal(v.Voters, voters) || !slices.Equal(v.Learners, []replication.NodeID{6}) || v.Joint {
		t.Fatalf("membership after restart: voters %v learners %v joint %v", v.Voters, v.Learners, v.Joint)
	}
	if n := replicaOf(p, g).State().ReadsBack; n != 0 {
		t.Fatalf("the restart read %d batches back from the segment", n)
	}
	if !bytes.Equal(pollAll(t, p, clusterRef), before) {
		t.Fatal("restart changed the stored bytes")
	}
	send(p, 3, -1) // the window was replayed across the changes
	change(nd, replication.MemberChange{Type: replication.Remove, Node: 6})
	send(p, 4, 6)
	stop(p, nd)

	p, nd = start()
	v = waitLeader(t, nd, g, func(v replication.View) bool { return v.Applied == v.Commit && v.Commit > 0 })
	if len(v.Learners) != 0 || !slices.Equal(v.Voters, voters) {
		t.Fatalf("membership after the second restart: voters %v learners %v", v.Voters, v.Learners)
	}
	if st := p.PartitionStats(clusterRef, 0); st.Messages != 8 {
		t.Fatalf("after the second restart: %+v", st)
	}
	if n := replicaOf(p, g).State().ReadsBack; n != 0 {
		t.Fatalf("the second restart read %d batches back from the segment", n)
	}
	stop(p, nd)
}

// keptNode starts and stops a single-voter plane of partition 0 over a
// raft log kept in memory across restarts (dir holds the partition).
type keptNode struct {
	t    *testing.T
	dir  string
	kept replication.LogStorage
}

// start opens the plane and waits until it leads the group.
func (k keptNode) start() (*Plane, *testNode) {
	k.t.Helper()
	voters := []replication.NodeID{0}
	logs := func(string) (replication.LogStorage, error) { return k.kept, nil }
	r := &testReplicator{self: 0, voters: voters}
	p := newClusterPlane(k.t, k.dir, r, logs, &fakeTopics{ref: clusterRef, ids: []uint32{0}})
	startHost(k.t, newTestNet(), r, voters)
	nd := &testNode{id: 0, plane: p, repl: r}
	if err := p.CreatePartitions(clusterRef, []uint32{0}); err != nil {
		k.t.Fatal(err)
	}
	waitLeader(k.t, nd, replicated.GroupID(clusterRef, 0), func(v replication.View) bool { return v.Role == replication.RoleLeader })
	return p, nd
}

// stop closes the host and the plane.
func (k keptNode) stop(p *Plane, nd *testNode) {
	k.t.Helper()
	nd.host().Close()
	if err := p.Close(); err != nil {
		k.t.Fatal(err)
	}
}
