package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestAddMember: a fresh node added to a group with entries becomes a
// voter holding them; a repeated call is a no-op; a follower refuses; a
// learner that cannot catch up in time stays a learner (outcome unknown)
// and a later call promotes it without adding it again.
func TestAddMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 53, nil)
		c.addGroup(1)
		acked := map[string]uint64{}
		for i := range 20 {
			d := fmt.Sprintf("e%d", i)
			idx, err := c.propose(1, []byte(d), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		ctx := contextWithTimeout(t, 60*time.Second)

		follower := c.ids[(slices.Index(c.ids, lead)+1)%len(c.ids)]
		var nle *NotLeaderError
		if err := c.hosts[follower].AddMember(ctx, 1, 3); !errors.As(err, &nle) {
			t.Fatalf("AddMember on a follower: %v", err)
		}
		if err := h.AddMember(ctx, 99, 3); !errors.Is(err, ErrUnknownGroup) {
			t.Fatalf("AddMember to an unknown group: %v", err)
		}

		c.start(3)
		c.addGroupOn(3, 1, GroupOptions{})
		if err := h.AddMember(ctx, 1, 3); err != nil {
			t.Fatal(err)
		}
		v, _ := h.Status(1)
		if !slices.Contains(v.Voters, 3) || slices.Contains(v.Learners, 3) {
			t.Fatalf("node 3 is not a voter after AddMember: %+v", v)
		}
		c.voters[1] = v.Voters
		c.waitApplied(1, []NodeID{3}, len(acked), 10*time.Second)
		checkAcked(t, 1, c.checkSame(1, c.voters[1]), acked)
		if err := h.AddMember(ctx, 1, 3); err != nil {
			t.Fatalf("AddMember of a voter: %v", err)
		}
		if again, _ := h.Status(1); !slices.Equal(again.Voters, v.Voters) || len(again.Learners) != 0 {
			t.Fatalf("a repeated AddMember changed the configuration: %+v", again)
		}

		// Node 4 is cut off: it becomes a learner but cannot catch up.
		c.start(4)
		c.addGroupOn(4, 1, GroupOptions{})
		c.net.isolate(4, c.ids, true)
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := h.AddMember(short, 1, 4)
		cancel()
		if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AddMember of a node that cannot catch up: %v", err)
		}
		if v, _ := h.Status(1); !slices.Contains(v.Learners, 4) || slices.Contains(v.Voters, 4) {
			t.Fatalf("node 4 should have stayed a learner: %+v", v)
		}
		c.net.isolate(4, c.ids, false)
		if err := h.AddMember(ctx, 1, 4); err != nil {
			t.Fatal(err)
		}
		v, _ = h.Status(1)
		if !slices.Contains(v.Voters, 4) || len(v.Learners) != 0 {
			t.Fatalf("node 4 is not a voter after the second AddMember: %+v", v)
		}
		c.voters[1] = v.Voters
		c.waitApplied(1, []NodeID{4}, len(acked), 10*time.Second)
		c.checkSame(1, c.voters[1])
	})
}
