package rebalance

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
)

// A move whose replaced replica leads the group: the target is added and
// votes, the leader hands over to a target member, which removes it and
// commits.
func TestExecutorMoveAwayFromTheLeader(t *testing.T) {
	w := newWorld(t, 4)
	w.addPartition(0, 2, 0, 1) // led by 2
	w.pls[0].Target = []uint8{3, 0, 1}
	w.runExecutors(t)
	waitFor(t, "the move to finish", w.settled)
	pp := w.Placements()[0]
	if !slices.Equal(pp.Replicas, []uint8{3, 0, 1}) {
		t.Fatalf("replicas %v, want [3 0 1]", pp.Replicas)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	log := strings.Join(w.log, "\n")
	for _, want := range []string{"learner 3", "voter 3", "leader 2 ->", "removed 2", "placement [3 0 1] -> []"} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in the log:\n%s", want, log)
		}
	}
	if i, j := strings.Index(log, "voter 3"), strings.Index(log, "removed 2"); i > j {
		t.Errorf("replica 2 removed before 3 voted:\n%s", log)
	}
}

// A target replica that is down stops the move before anything is
// removed; once it is back, the move completes.
func TestExecutorWaitsForADownTarget(t *testing.T) {
	w := newWorld(t, 4)
	w.addPartition(0, 0, 1, 2)
	w.pls[0].Target = []uint8{0, 1, 3}
	w.setAlive(3, false, time.Second)
	w.runExecutors(t)
	time.Sleep(100 * time.Millisecond)
	w.mu.Lock()
	g := w.groups[groupOf(w, 0)]
	voters := slices.Clone(g.voters)
	w.mu.Unlock()
	if !slices.Contains(voters, 2) || slices.Contains(voters, 3) {
		t.Fatalf("voters %v while the target is down, want 2 kept and 3 not a voter", voters)
	}
	w.setAlive(3, true, 0)
	waitFor(t, "the move to finish", w.settled)
	if pp := w.Placements()[0]; !slices.Equal(pp.Replicas, []uint8{0, 1, 3}) {
		t.Fatalf("replicas %v", pp.Replicas)
	}
}

// A member that left the metadata group (a node removed while down)
// leaves every partition group, as long as a quorum of the replica list
// stays, but not while this node's metadata view lags its commit (a
// restart replaying an older membership); a replica back in the cluster
// is added again.
func TestExecutorMembersFollowTheCluster(t *testing.T) {
	w := newWorld(t, 3)
	w.addPartition(0, 0, 1, 2)
	w.addPartition(1, 1, 2, 0)
	w.setAlive(2, false, time.Minute)
	w.mu.Lock()
	w.meta = []replication.NodeID{0, 1}
	w.replaying = true // the membership seen is an older one
	w.mu.Unlock()
	w.runExecutors(t)
	time.Sleep(50 * time.Millisecond)
	w.mu.Lock()
	for g, fg := range w.groups {
		if !slices.Contains(fg.voters, 2) {
			t.Errorf("group %d: node 2 removed while the metadata view was replaying", g)
		}
	}
	w.replaying = false
	w.mu.Unlock()
	gone := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, g := range w.groups {
			if slices.Contains(g.voters, 2) {
				return false
			}
		}
		return true
	}
	waitFor(t, "node 2 to leave every group", gone)
	if pp := w.Placements()[0]; !slices.Equal(pp.Replicas, []uint8{0, 1, 2}) {
		t.Fatalf("the placement changed: %v", pp.Replicas)
	}
	// Added back under its id (a wiped node rejoining).
	w.setAlive(2, true, 0)
	w.mu.Lock()
	w.meta = []replication.NodeID{0, 1, 2}
	w.mu.Unlock()
	waitFor(t, "node 2 to vote again", w.settled)
}

// The executor bounds the steps it runs at a time.
func TestExecutorBoundsConcurrency(t *testing.T) {
	w := newWorld(t, 4)
	for p := range 6 {
		w.addPartition(uint32(p), 0, 1, 2)
		w.pls[p].Target = []uint8{0, 1, 3}
	}
	e := NewExecutor(ExecutorConfig{Self: 0, Host: &fhost{w: w, self: 0, addDelay: 50 * time.Millisecond}, Store: w,
		Interval: 2 * time.Millisecond, MaxConcurrent: 2, StepTimeout: time.Second, Logger: testLog()})
	ctx, cancel := contextWithCleanup(t)
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	peak := 0
	deadline := time.Now().Add(10 * time.Second)
	for !w.settled() && time.Now().Before(deadline) {
		peak = max(peak, e.Running())
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if !w.settled() {
		t.Fatal("moves did not finish")
	}
	if peak > 2 || peak == 0 {
		t.Fatalf("peak of %d steps at a time, want 1..2", peak)
	}
}

func groupOf(w *world, i int) replication.GroupID {
	for g := range w.groups {
		pp := w.placementOf(g)
		if pp.Partition == w.pls[i].Partition {
			return g
		}
	}
	return 0
}
