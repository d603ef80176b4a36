package rebalance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
)

// newPlanner returns a planner on node 0 of w, with its background
// checks running until the test ends.
func newPlanner(t *testing.T, w *world, rda time.Duration) *Planner {
	p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w, self: 0}, MaxMoves: 2, ReplaceDeadAfter: rda, Interval: 5 * time.Millisecond})
	w.mu.Lock()
	w.maxMoves = 2
	w.wakers = append(w.wakers, p.Wake)
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

// threeNodeTopic places 6 partitions of RF 3 on nodes 0..2.
func threeNodeTopic(w *world) {
	for p := range 6 {
		r := []uint8{uint8(p % 3), uint8((p + 1) % 3), uint8((p + 2) % 3)}
		w.addPartition(uint32(p), r...)
	}
}

// checkPlacement checks that every partition has rf distinct replicas
// and that its group's voters are exactly those.
func checkPlacement(t *testing.T, w *world, rf int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, pp := range w.pls {
		r := slices.Clone(pp.Replicas)
		slices.Sort(r)
		if len(slices.Compact(r)) != rf || len(pp.Replicas) != rf {
			t.Errorf("partition %d: replicas %v, want %d distinct", pp.Partition, pp.Replicas, rf)
		}
	}
}

// A node added to a 3-node cluster gets its share of the replicas, at
// most MaxMoves moves at a time, every partition keeping 3 replicas.
func TestRebalanceOntoANewNode(t *testing.T) {
	w := newWorld(t, 3)
	threeNodeTopic(w)
	w.runExecutors(t, 3)
	p := newPlanner(t, w, 0)
	w.mu.Lock()
	w.meta = append(w.meta, 3)
	w.alive[3] = true
	w.mu.Unlock()
	r, err := p.Rebalance(context.Background())
	if err != nil || r.Started == 0 || r.Started > 2 {
		t.Fatalf("rebalance: %+v, %v", r, err)
	}
	waitFor(t, "the rebalance to finish", func() bool { return w.settled() && w.replicasPerNode()[3] >= 4 })
	checkPlacement(t, w, 3)
	for n, c := range w.replicasPerNode() {
		if c < 4 || c > 5 {
			t.Errorf("node %d holds %d replicas, want 4..5 (18 over 4 nodes)", n, c)
		}
	}
	if w.peakMoves > 2 {
		t.Errorf("%d moves in progress at once", w.peakMoves)
	}
	// Balanced: a second rebalance has nothing to do.
	if r, err := p.Rebalance(context.Background()); err != nil || r.Started != 0 || r.InProgress != 0 {
		t.Fatalf("second rebalance: %+v, %v", r, err)
	}
}

// Two rebalances asked at once merge: together they never start more
// than MaxMoves moves.
func TestConcurrentRebalancesMerge(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w)
	p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}, MaxMoves: 2, Interval: time.Hour})
	w.maxMoves = 2
	var wg sync.WaitGroup
	res := make([]Result, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.Rebalance(context.Background())
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		}()
	}
	wg.Wait()
	if res[0].Started+res[1].Started != 2 {
		t.Fatalf("started %d + %d moves, want 2 in all", res[0].Started, res[1].Started)
	}
}

// Draining a node moves all of its replicas to the others; the executors
// take it out of the groups.
func TestDrain(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w)
	w.runExecutors(t, 3)
	p := newPlanner(t, w, 0)
	if _, err := p.CheckRemoval(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stuck, release, err := p.Drain(ctx, 1)
	defer release()
	if err != nil || len(stuck) != 0 {
		t.Fatalf("drain: stuck %v, %v", stuck, err)
	}
	waitFor(t, "the groups to settle", w.settled)
	checkPlacement(t, w, 3)
	if n := w.replicasPerNode()[1]; n != 0 {
		t.Fatalf("node 1 still holds %d replicas", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for g, fg := range w.groups {
		if slices.Contains(fg.voters, 1) {
			t.Errorf("group %d: voters %v", g, fg.voters)
		}
	}
}

// A drain gives up a move onto the node in progress, and while it holds
// a rebalance never moves replicas onto the node.
func TestDrainAbortsMovesOntoTheNode(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w)
	w.pls[0].Target = []uint8{3, 1, 2} // 0 -> 3, in progress
	p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}, MaxMoves: 2, Interval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, release, err := p.Drain(ctx, 3)
	defer release()
	if err != nil {
		// Node 3 held nothing but the target of that move.
		t.Fatalf("drain: %v", err)
	}
	pp := w.Placements()[0]
	if len(pp.Target) != 0 || !slices.Equal(pp.Replicas, []uint8{0, 1, 2}) {
		t.Fatalf("placement %v -> %v, want the move given up", pp.Replicas, pp.Target)
	}
	if _, err := p.Rebalance(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pp := range w.Placements() {
		if slices.Contains(pp.Target, 3) {
			t.Fatalf("a move onto the drained node: %v", pp.Target)
		}
	}
	release()
	if r, err := p.Rebalance(context.Background()); err != nil || r.Started == 0 {
		t.Fatalf("rebalance after the drain ended: %+v, %v", r, err)
	}
}

func TestCheckRemoval(t *testing.T) {
	ctx := context.Background()
	t.Run("no room while reachable", func(t *testing.T) {
		w := newWorld(t, 3)
		threeNodeTopic(w)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		if _, err := p.CheckRemoval(ctx, 2); !errors.Is(err, ErrNoRoom) {
			t.Fatalf("err %v, want ErrNoRoom", err)
		}
	})
	t.Run("unreachable: stuck partitions", func(t *testing.T) {
		w := newWorld(t, 3)
		threeNodeTopic(w)
		w.setAlive(2, false, time.Second)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		rm, err := p.CheckRemoval(ctx, 2)
		if err != nil || len(rm.Stuck) != 6 || rm.Movable != 0 {
			t.Fatalf("removal %+v, %v; want 6 stuck", rm, err)
		}
	})
	t.Run("movable with a fourth node", func(t *testing.T) {
		w := newWorld(t, 4)
		threeNodeTopic(w)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		rm, err := p.CheckRemoval(ctx, 2)
		if err != nil || len(rm.Stuck) != 0 || rm.Movable != 6 {
			t.Fatalf("removal %+v, %v; want 6 movable", rm, err)
		}
	})
	t.Run("a move in progress takes it away", func(t *testing.T) {
		w := newWorld(t, 4)
		threeNodeTopic(w)
		for i := range w.pls {
			w.pls[i].Target = slices.Clone(w.pls[i].Replicas)
			w.pls[i].Target[slices.Index(w.pls[i].Target, 2)] = 3
		}
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		rm, err := p.CheckRemoval(ctx, 2)
		if err != nil || len(rm.Stuck) != 0 || rm.Movable != 6 {
			t.Fatalf("removal %+v, %v; want 6 movable", rm, err)
		}
	})
	t.Run("last replica", func(t *testing.T) {
		w := newWorld(t, 3)
		w.addPartition(0, 1)
		w.setAlive(1, false, time.Second)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		if _, err := p.CheckRemoval(ctx, 1); !errors.Is(err, ErrLastReplica) {
			t.Fatalf("err %v, want ErrLastReplica", err)
		}
	})
	t.Run("a reachable single replica moves", func(t *testing.T) {
		w := newWorld(t, 3)
		w.addPartition(0, 1)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		if rm, err := p.CheckRemoval(ctx, 1); err != nil || rm.Movable != 1 {
			t.Fatalf("removal %+v, %v; want 1 movable", rm, err)
		}
	})
	t.Run("no quorum left", func(t *testing.T) {
		w := newWorld(t, 3)
		w.addPartition(0, 0, 1)
		w.setAlive(1, false, time.Second)
		p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}})
		if _, err := p.CheckRemoval(ctx, 1); !errors.Is(err, ErrNoQuorum) {
			t.Fatalf("err %v, want ErrNoQuorum", err)
		}
	})
}

// A node unreachable for longer than ReplaceDeadAfter has its replicas
// re-created on the live nodes; the executors then remove it from each
// group once the replacement votes.
func TestDeadNodeReplaced(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w) // node 3 holds nothing yet
	w.runExecutors(t)
	w.setAlive(2, false, time.Minute) // not dead yet
	newPlanner(t, w, 10*time.Minute)
	time.Sleep(50 * time.Millisecond)
	if n := w.replicasPerNode()[2]; n != 6 {
		t.Fatalf("node 2's replicas moved before it counted as dead: %d left", n)
	}
	w.setAlive(2, false, 11*time.Minute)
	waitFor(t, "node 2's replicas to move", func() bool { return w.replicasPerNode()[2] == 0 && w.settled() })
	checkPlacement(t, w, 3)
	w.mu.Lock()
	defer w.mu.Unlock()
	for g, fg := range w.groups {
		if slices.Contains(fg.voters, 2) || !slices.Contains(fg.voters, 3) {
			t.Errorf("group %d: voters %v", g, fg.voters)
		}
	}
}

// A new metadata leader finds moves in progress and goes on planning
// until the placement is balanced.
func TestPlannerResumesMovesInProgress(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w)
	w.pls[0].Target = []uint8{3, 1, 2}
	w.setAlive(3, false, time.Second) // the move waits for it
	w.runExecutors(t)
	p := newPlanner(t, w, 0)
	waitFor(t, "the planner to find the move", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.wanted
	})
	w.setAlive(3, true, 0)
	waitFor(t, "the rebalance to finish", func() bool { return w.settled() && w.replicasPerNode()[3] >= 4 })
	checkPlacement(t, w, 3)
}

func TestPlannerRefusesOffTheLeader(t *testing.T) {
	w := newWorld(t, 3)
	p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: follower{}})
	if _, err := p.Rebalance(context.Background()); !errors.Is(err, replication.ErrNotLeader) {
		t.Fatalf("err %v, want ErrNotLeader", err)
	}
}

type follower struct{}

func (follower) Nodes(context.Context) ([]NodeInfo, error) { return nil, nil }
func (follower) Leader() bool                              { return false }

func TestCount(t *testing.T) {
	w := newWorld(t, 4)
	threeNodeTopic(w)
	w.pls[0].Target = []uint8{3, 1, 2}
	w.pls = append(w.pls, pl(nil, nil))
	c := Count(w.Placements())
	if c.MovesInProgress != 1 || c.Placed != 6 || c.Replicas[3] != 1 || c.Replicas[0] != 6 {
		t.Fatalf("counts %+v", c)
	}
}

// A partition whose other replicas are no quorum gets no move off a dead
// node: nothing could carry it out, and it would hold a place in the
// budget for ever.
func TestNoMoveWithoutAQuorum(t *testing.T) {
	w := newWorld(t, 4)
	w.addPartition(0, 0, 2) // 2 replicas, one on the dead node
	w.addPartition(1, 2)    // 1 replica, on the dead node
	w.addPartition(2, 0, 1, 2)
	w.setAlive(2, false, time.Hour)
	p := NewPlanner(PlannerConfig{Logger: testLog(), Store: w, Cluster: fcluster{w: w}, ReplaceDeadAfter: time.Minute, Interval: time.Hour})
	if _, err := p.Rebalance(context.Background()); err != nil {
		t.Fatal(err)
	}
	pls := w.Placements()
	if len(pls[0].Target) != 0 || len(pls[1].Target) != 0 {
		t.Fatalf("moves planned without a quorum: %v, %v", pls[0].Target, pls[1].Target)
	}
	if !slices.Equal(pls[2].Target, []uint8{0, 1, 3}) {
		t.Fatalf("partition 2: target %v, want [0 1 3]", pls[2].Target)
	}
}
