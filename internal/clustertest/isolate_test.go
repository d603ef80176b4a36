//go:build !windows

package clustertest

import (
	"testing"
	"time"
)

// pauseWindow is how long a frozen node stays frozen: longer than an
// election timeout with the default timers (1.2-2.4 s), so the others
// notice.
const pauseWindow = 4 * time.Second

// TestFrozenNodes freezes (SIGSTOP) first a follower, then the leader,
// under load. With a follower frozen the other two keep acknowledging;
// with the leader frozen the other two elect a new leader and keep
// acknowledging; each thawed node (SIGCONT) catches up, and the old
// leader, which missed a term, gives up leadership rather than splitting
// the log. A node frozen this way keeps its sockets, as a node cut off by
// the network does; network namespaces are not needed for it.
func TestFrozenNodes(t *testing.T) {
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 1)
	runLoad(w, 3)
	time.Sleep(time.Second)

	leader := h.WaitLeader(10 * time.Second)
	follower := (leader + 1) % h.N()
	from := w.History.Now()
	h.Pause(follower)
	time.Sleep(pauseWindow)
	to := w.History.Now()
	h.Resume(follower)
	if n := acksBetween(w.History.Ops(), from+int64(time.Second), to); n == 0 {
		t.Errorf("no write acknowledged while follower node %d was frozen", follower)
	} else {
		t.Logf("follower node %d frozen %v: %d writes acknowledged meanwhile", follower, pauseWindow, n)
	}
	time.Sleep(time.Second)

	old := h.WaitLeader(10 * time.Second)
	at := w.History.Now()
	h.Pause(old)
	newLeader := h.WaitLeader(30 * time.Second)
	if newLeader == old {
		t.Fatalf("frozen node %d still agreed on as leader", old)
	}
	time.Sleep(pauseWindow)
	ft, ok := failoverTime(w.History.Ops(), at)
	if !ok {
		t.Fatalf("no write acknowledged after freezing leader node %d", old)
	}
	t.Logf("leader node %d frozen, node %d leads, first acknowledged write %v after the freeze", old, newLeader, ft.Round(time.Millisecond))
	h.Resume(old)
	time.Sleep(2 * time.Second)
	if l := h.WaitLeader(30 * time.Second); l == old {
		// Legal only after a new election the old leader won; the history
		// check below would show a split log.
		t.Logf("thawed node %d leads again", old)
	}
	w.Verify(t, 30*time.Second)
}
