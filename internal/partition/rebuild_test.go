package partition

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// callLeaveTest is the call kind of the leave call in these tests.
const callLeaveTest uint8 = 3

// rebuildReplicator is testReplicator with what a rebuild needs
// (replicated.Rebuilder), as the broker's partitionReplicator has it.
type rebuildReplicator struct{ *testReplicator }

func (r rebuildReplicator) LeaderOf(g replication.GroupID) (replication.NodeID, bool) {
	return r.host().LeaderOf(g)
}
func (r rebuildReplicator) Status(g replication.GroupID) (replication.View, bool) {
	return r.host().Status(g)
}
func (r rebuildReplicator) RemoveMember(ctx context.Context, g replication.GroupID, id replication.NodeID) error {
	return r.host().RemoveMember(ctx, g, id)
}
func (r rebuildReplicator) TransferLeadership(ctx context.Context, g replication.GroupID, to replication.NodeID) error {
	return r.host().TransferLeadership(ctx, g, to)
}
func (r rebuildReplicator) Leave(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error) {
	return r.host().Call(ctx, to, callLeaveTest, payload)
}

func (r rebuildReplicator) Peers(ctx context.Context) (map[replication.NodeID]replication.Peer, error) {
	return r.host().Peers(ctx)
}

var _ replicated.Rebuilder = rebuildReplicator{}

// countingObserver counts rebuilds (RebuildObserver).
type countingObserver struct{ damaged, rebuilt atomic.Int32 }

func (o *countingObserver) ReplicaDamaged() { o.damaged.Add(1) }
func (o *countingObserver) ReplicaRebuilt() { o.rebuilt.Add(1) }

// startRebuildCluster is startCluster with nodes that rebuild damaged
// replicas, each answering leave calls.
func startRebuildCluster(t *testing.T, n int) ([]*testNode, []*countingObserver) {
	t.Helper()
	obs := make([]*countingObserver, n)
	_, nodes := startNodes(t, n, clusterRef, func(i int, r *testReplicator) Options {
		obs[i] = &countingObserver{}
		return Options{Dir: t.TempDir(), Replicator: rebuildReplicator{r}, RebuildObserver: obs[i]}
	}, func(r *testReplicator, p *Plane) { r.host().HandleCall(callLeaveTest, p.ServeLeave) })
	return nodes, obs
}

// TestRebuildDamagedLeader reports damage in the replica of the
// partition's leader while it runs (as the scrubber does): the leader
// hands its leadership over, leaves the group, wipes its replica and
// waits as an empty learner; added back (as the rebalance executor does)
// it catches up and ends with the same bytes as the others. It never
// leads or votes meanwhile, and the partition takes writes throughout.
func TestRebuildDamagedLeader(t *testing.T) {
	nodes, obs := startRebuildCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 42}
	req := uint64(0)
	for range 20 {
		req++
		if st, _ := csend(t, nodes[0].plane, client, req, sendBody(t, clusterRef, 5, "before")); st != 0 {
			t.Fatalf("send: status %d", st)
		}
	}
	if !nodes[0].plane.ReplicaDamaged(clusterRef, 0, errors.New("test: a record failed its checksum")) {
		t.Fatal("the damage report did not start a rebuild")
	}
	if nodes[0].plane.ReplicaDamaged(clusterRef, 0, errors.New("test: again")) {
		t.Fatal("a second report started a second rebuild")
	}
	// Another node leads, and node 0 is no member any more.
	var leader *testNode
	eventually(t, 10*time.Second, "node 0 removed under a new leader", func() bool {
		for _, nd := range nodes[1:] {
			v, ok := nd.host().Status(g)
			if ok && v.Role == replication.RoleLeader && !slices.Contains(v.Voters, 0) && !slices.Contains(v.Learners, 0) {
				leader = nd
				return true
			}
		}
		return false
	})
	// Writes go on meanwhile, on the new leader.
	for range 10 {
		req++
		if st, _ := csend(t, leader.plane, client, req, sendBody(t, clusterRef, 5, "during")); st != 0 {
			t.Fatalf("send during the rebuild to node %d: status %d; %s; %s; %s", leader.id, st, describe(nodes[0], g), describe(nodes[1], g), describe(nodes[2], g))
		}
	}
	// Node 0 wiped its replica and waits with an empty one.
	eventually(t, 10*time.Second, "node 0's empty replica", func() bool {
		part := nodes[0].plane.lookup(clusterRef.Incarnation, 0)
		return part != nil && part.log != nil && messages(nodes[0].plane) == 0
	})
	// The executor's step: add it back (learner, catch-up, promotion).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var sawLead atomic.Bool
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if v, ok := nodes[0].host().Status(g); ok && !slices.Contains(v.Voters, 0) && v.Role == replication.RoleLeader {
				sawLead.Store(true)
			}
		}
	}()
	if err := leader.host().AddMember(ctx, g, 0); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if sawLead.Load() {
		t.Fatal("node 0 led the group before it was a voter again")
	}
	eventually(t, 10*time.Second, "the rebuilt log", func() bool { return messages(nodes[0].plane) == 150 })
	eventually(t, 10*time.Second, "the rebuilt line", func() bool { return obs[0].rebuilt.Load() == 1 })
	if obs[0].damaged.Load() != 1 {
		t.Fatalf("damaged %d times, want 1", obs[0].damaged.Load())
	}
	// Identical stored bytes: node 0 leads again and serves them.
	want := pollAll(t, leader.plane, clusterRef)
	waitLeader(t, nodes[0], g, func(v replication.View) bool { return slices.Contains(v.Voters, 0) && v.Applied >= v.Commit })
	eventually(t, 10*time.Second, "node 0 leading", func() bool {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return leader.host().TransferLeadership(tctx, g, 0) == nil
	})
	waitLeader(t, nodes[0], g, func(v replication.View) bool { return v.Role == replication.RoleLeader })
	if got := pollAll(t, nodes[0].plane, clusterRef); !bytes.Equal(got, want) {
		t.Fatalf("the rebuilt replica polls %d bytes, the old leader %d (or other bytes)", len(got), len(want))
	}
	req++
	if st, base := csend(t, nodes[0].plane, client, req, sendBody(t, clusterRef, 1, "after")); st != 0 || base != 150 {
		t.Fatalf("send to the rebuilt leader: status %d base %d", st, base)
	}
}
