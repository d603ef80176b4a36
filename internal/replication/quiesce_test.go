package replication

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// settle waits until every running host has no active group.
func (c *cluster) settle(within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		busy := 0
		for _, h := range c.hosts {
			busy += int(h.Stats().ActiveGroups)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d groups still active after %s", busy, within)
		}
		time.Sleep(testTiming.Tick)
	}
}

func sumStats(c *cluster) Stats {
	var s Stats
	for _, h := range c.hosts {
		x := h.Stats()
		s.Ticks += x.Ticks
		s.RaftMessagesSent += x.RaftMessagesSent
		s.EnvelopesSent += x.EnvelopesSent
	}
	return s
}

func TestQuiescence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const groups = 200
		c := newCluster(t, 3, 3, nil)
		c.net.set(func(n *memNet) { n.maxDelay = 2 * time.Millisecond })
		for g := range GroupID(groups) {
			c.addGroup(g)
		}
		for g := range GroupID(groups) {
			if _, err := c.propose(g, []byte(fmt.Sprint("init", g)), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		c.settle(10 * time.Second)

		// Ten idle seconds: no raft message, no tick; only one ping per
		// peer pair per heartbeat interval (3 hosts x 2 peers x 20).
		before := sumStats(c)
		time.Sleep(10 * time.Second)
		after := sumStats(c)
		raftMsgs := after.RaftMessagesSent - before.RaftMessagesSent
		ticks := after.Ticks - before.Ticks
		envs := after.EnvelopesSent - before.EnvelopesSent
		t.Logf("%d idle groups x 3 hosts, 10 s: %d raft messages, %d group ticks, %d envelopes", groups, raftMsgs, ticks, envs)
		if raftMsgs != 0 || ticks != 0 {
			t.Fatalf("idle groups must be silent: %d raft messages, %d ticks", raftMsgs, ticks)
		}
		interval := time.Duration(testTiming.HeartbeatTicks) * testTiming.Tick
		if want := uint64(3 * 2 * (10 * time.Second / interval)); envs > want+6 {
			t.Fatalf("%d envelopes in 10 s, want about %d pings", envs, want)
		}

		// A proposal wakes one group, commits, and it quiesces again.
		lead := c.leader(7, time.Second)
		if _, err := c.hosts[lead].Propose(context.Background(), 7, []byte("wake")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(7, c.ids, 2, 5*time.Second)
		c.settle(10 * time.Second)
		for _, id := range c.ids {
			if v, _ := c.hosts[id].Status(7); !v.Quiesced || v.Commit != v.Applied {
				t.Fatalf("node %d group 7 after wake: %+v", id, v)
			}
		}

		// The leader of every group (replica 0) dies while they are all
		// quiesced: the survivors notice the silent peer, wake the groups
		// it led and elect new leaders.
		c.crash(0)
		killed := time.Now()
		for g := range GroupID(groups) {
			c.voters[g] = []NodeID{0, 1, 2}
			if l := c.leader(g, 10*time.Second); l == 0 {
				t.Fatalf("group %d still led by the dead node", g)
			}
		}
		t.Logf("all %d quiesced groups re-elected %s after the leader host died (virtual time)", groups, time.Since(killed))
		if took := time.Since(killed); took > 5*time.Second {
			t.Fatalf("re-election of quiesced groups took %s", took)
		}
		idx, err := c.propose(3, []byte("after"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.waitApplied(3, []NodeID{1, 2}, 2, 5*time.Second)
		seq := c.checkSame(3, []NodeID{0, 1, 2})
		checkAcked(t, 3, seq, map[string]uint64{"after": idx})
	})
}

func TestGroupsFollowMetadataLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const meta = GroupID(0)
		c := newCluster(t, 3, 9, func(cfg *Config) { cfg.FollowLeader, cfg.FollowGroup = true, meta })
		for g := range GroupID(20) {
			c.addGroup(g)
		}
		for g := range GroupID(20) {
			if l := c.leader(g, 5*time.Second); l != 0 {
				t.Fatalf("group %d: first leader %d", g, l)
			}
		}
		c.settle(10 * time.Second)
		if err := c.hosts[0].TransferLeadership(contextWithTimeout(t, 5*time.Second), meta, 2); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for g := GroupID(1); g < 20; g++ {
			for {
				if l, ok := c.hosts[2].Leader(g); ok && l == 2 {
					break
				}
				if time.Now().After(deadline) {
					v, _ := c.hosts[2].Status(g)
					t.Fatalf("group %d did not follow the metadata leader to 2: %+v", g, v)
				}
				time.Sleep(testTiming.Tick)
			}
		}
		c.settle(10 * time.Second)
		if _, err := c.hosts[2].Propose(context.Background(), 5, []byte("on the new leader")); err != nil {
			t.Fatal(err)
		}
	})
}
