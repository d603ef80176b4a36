package replication

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitForWakesOnlyOnItsGroup: commits in one group do not wake a
// caller waiting on another (each commit changes the group's view), and a
// change of the awaited group still does.
func TestWaitForWakesOnlyOnItsGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, 61, nil)
		c.addGroup(1)
		c.addGroup(2)
		c.leader(1, 5*time.Second)
		c.leader(2, 5*time.Second)
		h := c.hosts[0]
		ctx := context.Background()
		var evals atomic.Int64
		type waited struct {
			v   View
			err error
		}
		done := make(chan waited, 1)
		go func() {
			v, err := h.WaitFor(ctx, 1, func(v View) bool { evals.Add(1); return v.Applied >= 3 })
			done <- waited{v, err}
		}()
		synctest.Wait()
		select {
		case w := <-done:
			t.Fatalf("returned (applied %d, %v) before group 1 changed", w.v.Applied, w.err)
		default:
		}
		before := evals.Load()
		const n = 30
		for i := range n {
			if _, err := h.Propose(ctx, 2, fmt.Appendf(nil, "p%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if woke := evals.Load() - before; woke > 0 {
			t.Fatalf("%d commits in group 2 woke a waiter on group 1 %d times", n, woke)
		}
		if _, err := h.Propose(ctx, 1, []byte("x")); err != nil {
			t.Fatal(err)
		}
		select {
		case w := <-done:
			if w.err != nil || w.v.Applied < 3 {
				t.Fatalf("woke with applied %d: %v", w.v.Applied, w.err)
			}
		case <-time.After(time.Second):
			t.Fatal("the waiter on group 1 did not see its group's commit")
		}
	})
}
