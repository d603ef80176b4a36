//go:build !windows

package clustertest

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// defaultSchedules is how many randomized schedules run without
// IGGO_CLUSTER_SCHEDULES.
const defaultSchedules = 1

// faultsPerSchedule is the number of faults in one schedule.
const faultsPerSchedule = 4

// TestRandomMinorityFaults runs randomized fault schedules under load:
// each fault picks one node (a minority of three) and kills it (SIGKILL,
// restarted on its data) or freezes it (SIGSTOP/SIGCONT) for a random
// while, then brings it back and lets the cluster settle; a node that
// then exits on its own is an error. Wiped data directories have their
// own test (TestWipedFollowerRestart). After the schedule every node holds
// the same log, every acknowledged message exactly once at its offset, and
// the history is linearizable. IGGO_CLUSTER_SCHEDULES=N runs N schedules
// (seeds IGGO_CLUSTER_SEED, +1, ...; default from the clock, logged).
func TestRandomMinorityFaults(t *testing.T) {
	n := defaultSchedules
	if s := os.Getenv("IGGO_CLUSTER_SCHEDULES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("IGGO_CLUSTER_SCHEDULES=%q: want a positive number", s)
		}
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("IGGO_CLUSTER_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("IGGO_CLUSTER_SEED=%q: %v", s, err)
		}
		seed = v
	}
	for i := range n {
		s := seed + uint64(i)
		t.Run("seed="+strconv.FormatUint(s, 10), func(t *testing.T) { runSchedule(t, s) })
	}
}

func runSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 2)
	runLoad(w, 4)
	time.Sleep(time.Second)
	kinds := map[string]int{}
	for range faultsPerSchedule {
		leader := h.WaitLeader(30 * time.Second)
		victim := rng.IntN(h.N())
		hold := time.Duration(500+rng.IntN(2500)) * time.Millisecond
		role := "follower"
		if victim == leader {
			role = "leader"
		}
		if rng.IntN(2) == 0 {
			kinds["kill"]++
			t.Logf("fault: kill %s node %d, down %v", role, victim, hold)
			h.Kill(victim)
			time.Sleep(hold)
			h.Restart(victim, false)
		} else {
			kinds["freeze"]++
			t.Logf("fault: freeze %s node %d for %v", role, victim, hold)
			h.Pause(victim)
			time.Sleep(hold)
			h.Resume(victim)
		}
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		if h.Exited(victim) {
			t.Errorf("node %d exited after the fault (%v); errors: %v", victim, h.proc(victim).Err(), h.LogLines(victim, "level=ERROR"))
			h.Restart(victim, false)
		}
	}
	h.WaitLeader(30 * time.Second)
	time.Sleep(time.Second)
	r := w.Verify(t, 60*time.Second)
	t.Logf("seed %d: faults %v; %d anomalies", seed, kinds, r.Total)
}
