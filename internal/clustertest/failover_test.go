//go:build !windows

package clustertest

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// producerPause paces each producer, keeping the logs (and every full
// read of them) small enough for two shared cores.
const producerPause = 2 * time.Millisecond

// runLoad starts producers producers (spread over the partitions), one
// leader reader and one any-node reader per partition.
func runLoad(w *Workload, producers int) {
	for i := range producers {
		w.Producer(uint32(i)%w.Partitions, producerPause)
	}
	for p := range w.Partitions {
		w.Reader(p, 150*time.Millisecond)
		w.LocalReader(p, 300*time.Millisecond)
	}
}

// acksBetween counts acknowledged appends completed in [from, to).
func acksBetween(ops []Op, from, to int64) int {
	n := 0
	for _, op := range ops {
		if op.Kind == Append && op.Outcome == OK && op.Return >= from && op.Return < to {
			n++
		}
	}
	return n
}

// TestLeaderKillUnderLoad SIGKILLs the leader while four producers write
// two partitions; the survivors elect a new leader and keep acknowledging,
// the old leader restarts on its data and catches up, and every
// acknowledged message is found exactly once at its offset on every node.
// It reports the failover time, kill to the first acknowledged write
// invoked after the kill. IGGO_CLUSTER_FAILOVERS=N repeats the kill N
// times (default 1) for a distribution of failover times.
func TestLeaderKillUnderLoad(t *testing.T) {
	rounds := 1
	if s := os.Getenv("IGGO_CLUSTER_FAILOVERS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("IGGO_CLUSTER_FAILOVERS=%q: want a positive number", s)
		}
		rounds = v
	}
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 2)
	runLoad(w, 4)
	time.Sleep(2 * time.Second)
	if n := acksBetween(w.History.Ops(), 0, w.History.Now()); n == 0 {
		t.Fatalf("no write acknowledged before the fault")
	}
	var times []time.Duration
	for round := range rounds {
		old := h.WaitLeader(30 * time.Second)
		w.logStored(t, "before the kill")
		killAt := w.History.Now()
		h.Kill(old)
		leader := h.WaitLeader(30 * time.Second)
		if leader == old {
			t.Fatalf("node %d is still reported as leader after it was killed", old)
		}
		deadline := time.Now().Add(20 * time.Second)
		ft, ok := failoverTime(w.History.Ops(), killAt)
		for !ok && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			ft, ok = failoverTime(w.History.Ops(), killAt)
		}
		if !ok {
			t.Fatalf("no write acknowledged within 20 s after killing leader node %d (new leader node %d)", old, leader)
		}
		times = append(times, ft)
		t.Logf("failover %d: leader node %d killed, node %d leads, first acknowledged write %v after the kill", round+1, old, leader, ft.Round(time.Millisecond))
		if ft > 15*time.Second {
			t.Errorf("failover took %v, more than 15 s", ft)
		}
		time.Sleep(time.Second)
		h.Start(old)
		time.Sleep(2 * time.Second)
	}
	slices.Sort(times)
	t.Logf("failover times over %d kills: min %v, median %v, max %v", len(times),
		times[0].Round(time.Millisecond), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
	r := w.Verify(t, 30*time.Second)
	if r.Counts.Acked == 0 {
		t.Fatal("nothing acknowledged")
	}
	checkTampered(t, w.History.Ops())
}

// checkTampered shows the checks can fail: the same history with one
// acknowledged append moved to another acknowledged append's offset must
// be rejected by porcupine and by the stored-log check.
func checkTampered(t *testing.T, ops []Op) {
	t.Helper()
	var a, b = -1, -1
	for i, op := range ops {
		if op.Kind != Append || op.Outcome != OK {
			continue
		}
		if a < 0 {
			a = i
		} else if op.Partition == ops[a].Partition {
			b = i
			break
		}
	}
	if b < 0 {
		t.Fatal("history too short to tamper with (fewer than two acknowledged appends on one partition)")
	}
	tampered := append([]Op(nil), ops...)
	tampered[b].Offset = tampered[a].Offset
	if res := CheckLinearizable(tampered); res != porcupine.Illegal {
		t.Errorf("porcupine on a history with one offset acknowledged twice: %v, want Illegal", res)
	}
	var logs [][]uint64
	for _, op := range ops {
		if op.Final {
			logs = append(logs, op.Log)
		}
	}
	if r := checkLogs(tampered, logs); len(r.Anomalies) == 0 {
		t.Error("the stored-log check found nothing wrong with a tampered history")
	}
	// Dropping an acknowledged message from the final read is caught too.
	lost := append([]Op(nil), ops...)
	for i := range lost {
		if lost[i].Final && lost[i].Partition == ops[a].Partition {
			l := append([]uint64(nil), lost[i].Log...)
			lost[i].Log = append(l[:ops[a].Offset:ops[a].Offset], l[ops[a].Offset+1:]...)
		}
	}
	if res := CheckLinearizable(lost); res != porcupine.Illegal {
		t.Errorf("porcupine on a history whose final read lost an acknowledged message: %v, want Illegal", res)
	}
}
