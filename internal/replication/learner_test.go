package replication

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestAddMemberAfterCompaction: a node added to a group whose log every
// member compacted past the entries it lacks catches up from the
// leader's snapshot, which was taken before the node was added (its
// ConfState does not name the node), then from the entries after it, and
// votes.
func TestAddMemberAfterCompaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 71, nil)
		c.addGroup(1)
		for i := range 10 {
			if _, err := c.propose(1, []byte(fmt.Sprintf("a%d", i)), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		ctx := contextWithTimeout(t, 60*time.Second)
		lead := c.leader(1, 5*time.Second)
		if _, err := c.hosts[lead].Compact(ctx, 1); err != nil {
			t.Fatalf("compact on the leader %d: %v", lead, err)
		}
		for i := range 5 {
			if _, err := c.propose(1, []byte(fmt.Sprintf("b%d", i)), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if l := c.leader(1, 5*time.Second); l != lead {
			t.Fatalf("leader changed from %d to %d", lead, l)
		}
		c.start(3)
		c.addGroupOn(3, 1, GroupOptions{})
		if err := c.hosts[lead].AddMember(ctx, 1, 3); err != nil {
			t.Fatal(err)
		}
		v, _ := c.hosts[lead].Status(1)
		if !slices.Contains(v.Voters, 3) {
			t.Fatalf("node 3 is not a voter: %+v", v)
		}
		// It restored the snapshot (the first 10 entries) and applied the
		// 5 after it; it then takes part in new commits.
		if _, err := c.propose(1, []byte("c"), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := c.sms[3].entries(1)
			if n := len(got); n > 0 && string(got[n-1].Data) == "c" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node 3 applied %d entries, the last not \"c\"", len(c.sms[3].entries(1)))
			}
			time.Sleep(testTiming.Tick)
		}
		if v3, _ := c.hosts[3].Status(1); !slices.Contains(v3.Voters, 3) {
			t.Fatalf("node 3's own view: %+v", v3)
		}
	})
}
