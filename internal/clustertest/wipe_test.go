//go:build !windows

package clustertest

import (
	"strings"
	"testing"
	"time"
)

// TestWipedFollowerRestart restarts a follower with an empty data
// directory under load. The node either rejoins and catches up (then it
// must hold the same log as the leader), or refuses to start with a clear
// error in its log (an exit, not a crash: a Go panic fails the test); in
// both cases the other two keep acknowledging writes.
func TestWipedFollowerRestart(t *testing.T) {
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 1)
	runLoad(w, 3)
	time.Sleep(2 * time.Second)
	leader := h.WaitLeader(10 * time.Second)
	victim := (leader + 2) % h.N()
	from := w.History.Now()
	h.Restart(victim, true)
	// Give it time to rejoin or to give up.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !h.Exited(victim) {
		if _, err := w.readAll(victim); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if n := acksBetween(w.History.Ops(), from, w.History.Now()); n == 0 {
		t.Errorf("no write acknowledged after follower node %d restarted wiped", victim)
	}
	if h.Exited(victim) {
		lines := h.LogLines(victim, "level=ERROR")
		if len(lines) == 0 {
			t.Errorf("wiped node %d exited without an ERROR line in its log", victim)
		}
		// A refusal is a deliberate exit with an operator-facing reason; a
		// crash (a Go panic) is not one.
		if panics := h.LogLines(victim, "panic: "); len(panics) > 0 {
			t.Errorf("wiped node %d crashed instead of refusing to start or rejoining (%v): %s", victim, h.proc(victim).Err(), strings.Join(panics, " | "))
		}
		t.Logf("wiped node %d exited (%v): %s", victim, h.proc(victim).Err(), strings.Join(lines, " | "))
		w.Verify(t, 20*time.Second)
		return
	}
	t.Logf("wiped node %d rejoined", victim)
	w.Verify(t, 60*time.Second)
}
