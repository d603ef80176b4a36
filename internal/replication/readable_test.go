package replication

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestReadableAfterOwnTermApplied: a node that takes over leadership is
// Readable only once it has applied every entry acknowledged before it led;
// followers never are.
func TestReadableAfterOwnTermApplied(t *testing.T) {
	c := newCluster(t, 3, 11, nil)
	defer c.stop()
	const g GroupID = 1
	c.addGroup(g)
	var last uint64
	for i := range 30 {
		idx, err := c.propose(g, fmt.Appendf(nil, "entry %d", i), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		last = idx
	}
	lead := c.leader(g, 5*time.Second)
	if v, _ := c.hosts[lead].WaitFor(contextWithTimeout(t, 5*time.Second), g, func(v View) bool { return v.Readable }); v.Applied < last {
		t.Fatalf("the leader is Readable at applied %d, before the acknowledged %d", v.Applied, last)
	}
	to := (lead + 1) % 3
	if err := c.hosts[lead].TransferLeadership(contextWithTimeout(t, 5*time.Second), g, to); err != nil {
		t.Fatal(err)
	}
	v, err := c.hosts[to].WaitFor(contextWithTimeout(t, 5*time.Second), g, func(v View) bool { return v.Readable })
	if err != nil {
		t.Fatal(err)
	}
	if v.Role != RoleLeader || v.Applied < last {
		t.Fatalf("new leader Readable as %s at applied %d, acknowledged up to %d", v.Role, v.Applied, last)
	}
	if got := c.sms[to].entries(g); len(got) < 30 {
		t.Fatalf("new leader Readable with %d entries applied, 30 acknowledged", len(got))
	}
	for _, id := range []NodeID{0, 1, 2} {
		if id == to {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		fv, err := c.hosts[id].WaitFor(ctx, g, func(v View) bool { return v.HasLeader && v.Leader == to })
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if fv.Readable {
			t.Fatalf("follower %d is Readable", id)
		}
	}
}

// TestAwaitReadable: a Readable leader answers at once and without an
// allocation (it runs for every poll); a follower is refused once the
// bound has passed.
func TestAwaitReadable(t *testing.T) {
	c := newCluster(t, 3, 12, nil)
	defer c.stop()
	const g GroupID = 1
	c.addGroup(g)
	if _, err := c.propose(g, []byte("one"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	lead := c.leader(g, 5*time.Second)
	ctx := context.Background()
	if err := c.hosts[lead].AwaitReadable(ctx, g, 5*time.Second); err != nil {
		t.Fatalf("leader: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = c.hosts[lead].AwaitReadable(ctx, g, time.Second) }); n != 0 {
		t.Fatalf("AwaitReadable on a Readable leader allocates %.0f times", n)
	}
	follower := (lead + 1) % 3
	start := time.Now()
	if err := c.hosts[follower].AwaitReadable(ctx, g, 50*time.Millisecond); err == nil {
		t.Fatal("a follower is Readable")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("a follower was refused after %s, before the bound", d)
	}
}
