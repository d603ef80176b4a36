//go:build !windows

package clustertest

import (
	"testing"
	"time"
)

// TestRetriedSendsAcrossFailover kills the leader twice under producers
// that retry every request of unknown outcome with their client id and
// the original request number, on whichever node leads next (the
// exactly-once path of the contract). Every message must be stored exactly
// once: a retry of an applied request must be answered from the duplicate
// window, never appended again.
func TestRetriedSendsAcrossFailover(t *testing.T) {
	h := StartCluster(t, 3)
	w := NewWorkload(t, h, 1)
	for range 3 {
		w.RetryingProducer(0, producerPause)
	}
	w.Reader(0, 150*time.Millisecond)
	time.Sleep(2 * time.Second)
	for range 2 {
		old := h.WaitLeader(30 * time.Second)
		h.Kill(old)
		h.WaitLeader(30 * time.Second)
		time.Sleep(3 * time.Second)
		h.Start(old)
		time.Sleep(2 * time.Second)
	}
	time.Sleep(time.Second)
	r := w.Verify(t, 30*time.Second)
	retried, dups := 0, 0
	for _, op := range w.History.Ops() {
		if op.Retries > 0 {
			retried++
		}
		if op.Dup {
			dups++
		}
	}
	t.Logf("%d requests retried, %d answered as duplicates; %d anomalies", retried, dups, r.Total)
}
