package replication

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestCompactTo: a member added while cut off finds the leader's log
// compacted by CompactTo and catches up from the caller's snapshot, then
// from the log after it; out-of-range indexes and an index before an
// applied configuration change are refused.
func TestCompactTo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 31, nil)
		c.addGroup(1)
		ctx := context.Background()
		var lastA uint64
		for i := range 10 {
			idx, err := c.propose(1, fmt.Appendf(nil, "a%d", i), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			lastA = idx
		}
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		if err := h.CompactTo(ctx, 1, 0, nil); !errors.Is(err, ErrCompactRange) {
			t.Fatalf("index 0: %v", err)
		}
		v, _ := h.Status(1)
		if err := h.CompactTo(ctx, 1, v.Applied+1, nil); !errors.Is(err, ErrCompactRange) {
			t.Fatalf("past the applied index %d: %v", v.Applied, err)
		}
		if err := h.CompactTo(ctx, 99, 1, nil); !errors.Is(err, ErrUnknownGroup) {
			t.Fatalf("unknown group: %v", err)
		}

		// Node 3 joins as a learner but hears nothing yet.
		c.start(3)
		c.net.isolate(3, c.ids, true)
		c.addGroupOn(3, 1, GroupOptions{})
		if _, err := h.ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 3}}); err != nil {
			t.Fatal(err)
		}
		if err := h.CompactTo(ctx, 1, lastA, nil); !errors.Is(err, ErrCompactConf) {
			t.Fatalf("index %d before the learner was added: %v", lastA, err)
		}

		var at uint64
		for i := range 10 {
			idx, err := h.Propose(ctx, 1, fmt.Appendf(nil, "b%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if i == 4 {
				at = idx
			}
		}
		var upTo []Entry
		for _, e := range c.sms[lead].entries(1) {
			if e.Index <= at {
				upTo = append(upTo, e)
			}
		}
		data := encodeEntries(upTo)
		if err := h.CompactTo(ctx, 1, at, data); err != nil {
			t.Fatal(err)
		}
		if first, _ := c.storages[lead][1].FirstIndex(); first != at+1 {
			t.Fatalf("log starts at %d after CompactTo(%d)", first, at)
		}
		for _, idx := range []uint64{at, at - 1} {
			if err := h.CompactTo(ctx, 1, idx, data); !errors.Is(err, ErrCompactRange) {
				t.Fatalf("index %d, not above the snapshot at %d: %v", idx, at, err)
			}
		}

		c.net.isolate(3, c.ids, false)
		c.waitApplied(1, []NodeID{3}, 20, 20*time.Second)
		sm := c.sms[3]
		sm.mu.Lock()
		restores, restoredAt, restored := sm.restores, sm.restoredAt, sm.restoredData
		sm.mu.Unlock()
		if restores != 1 || restoredAt != at || !bytes.Equal(restored, data) {
			t.Fatalf("learner restored %d times, last at %d (%d bytes); want once at %d with the %d bytes given",
				restores, restoredAt, len(restored), at, len(data))
		}
		// And it keeps following the log after the snapshot.
		if _, err := h.Propose(ctx, 1, []byte("c0")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 21, 10*time.Second)
		seq := c.checkSame(1, c.ids)
		if got := c.sms[3].entries(1); len(got) != len(seq) || string(got[len(got)-1].Data) != "c0" {
			t.Fatalf("learner applied %d entries, the group %d", len(got), len(seq))
		}
	})
}

// TestCompactToAfterRestart: a restarted node applies its log again, so
// it knows the configuration changes CompactTo must not precede.
func TestCompactToAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 32, nil)
		c.addGroup(1)
		ctx := context.Background()
		before, err := c.propose(1, []byte("x0"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		lead := c.leader(1, 5*time.Second)
		// A learner that never shows up: only its configuration entry matters.
		if _, err := c.hosts[lead].ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 7}}); err != nil {
			t.Fatal(err)
		}
		after, err := c.propose(1, []byte("x1"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 2, 10*time.Second)
		n := c.ids[(int(lead)+1)%len(c.ids)]
		c.crash(n)
		c.start(n)
		c.waitApplied(1, []NodeID{n}, 2, 10*time.Second)
		if err := c.hosts[n].CompactTo(ctx, 1, before, nil); !errors.Is(err, ErrCompactConf) {
			t.Fatalf("restarted node, index %d before the change: %v", before, err)
		}
		if err := c.hosts[n].CompactTo(ctx, 1, after, nil); err != nil {
			t.Fatalf("restarted node, index %d after the change: %v", after, err)
		}
	})
}

// TestCompactTwiceAtOneIndex: a Compact with nothing applied since the
// last one answers ErrCompactRange and leaves the group serving.
func TestCompactTwiceAtOneIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 32, nil)
		c.addGroup(1)
		if _, err := c.propose(1, []byte("a"), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		ctx := context.Background()
		at, err := h.Compact(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := h.Compact(ctx, 1); !errors.Is(err, ErrCompactRange) {
			t.Fatalf("second compaction at %d: %d, %v", at, again, err)
		}
		if _, err := c.propose(1, []byte("b"), 10*time.Second); err != nil {
			t.Fatalf("proposal after the refused compaction: %v", err)
		}
	})
}
