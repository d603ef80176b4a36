package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

func TestFirstLeaderIsReplicaZero(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 3, seed, nil)
				// Even seeds deliver at once: replica 0's first campaign
				// then reaches peers that have not created the group yet.
				if seed%2 == 1 {
					c.net.set(func(n *memNet) { n.maxDelay = 5 * time.Millisecond })
				}
				start := time.Now()
				for g := range GroupID(8) {
					c.addGroup(g)
				}
				for g := range GroupID(8) {
					if l := c.leader(g, 5*time.Second); l != 0 {
						t.Fatalf("group %d: first leader is %d, want replica 0", g, l)
					}
				}
				// Replica 0 campaigns at once (and, if that campaign was
				// lost, again within two election timeouts); the others
				// hold their timers for two election timeouts and then
				// wait at least one more.
				if took := time.Since(start); took >= time.Duration(3*testTiming.ElectionTicks)*testTiming.Tick {
					t.Fatalf("first leader took %s", took)
				}
			})
		})
	}
}

func TestProposeCommitsOnQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 1, nil)
		c.addGroup(1)
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		ctx := context.Background()
		var followers []NodeID
		for _, id := range c.ids {
			if id != lead {
				followers = append(followers, id)
			}
		}
		// A follower refuses proposals with the leader's id (once it heard
		// from the leader: a majority may have elected it without it).
		if _, err := c.hosts[followers[0]].WaitFor(ctx, 1, func(v View) bool { return v.HasLeader }); err != nil {
			t.Fatal(err)
		}
		_, err := c.hosts[followers[0]].Propose(ctx, 1, []byte("x"))
		var nle *NotLeaderError
		if !errors.As(err, &nle) || !nle.HasLeader || nle.Leader != lead {
			t.Fatalf("follower propose: %v", err)
		}
		if _, err := h.Propose(ctx, 99, []byte("x")); !errors.Is(err, ErrUnknownGroup) {
			t.Fatalf("unknown group: %v", err)
		}

		// With one follower down, a quorum of two still commits.
		c.net.isolate(followers[0], c.ids, true)
		acked := map[string]uint64{}
		for i := range 20 {
			d := fmt.Sprintf("q%d", i)
			idx, err := h.Propose(ctx, 1, []byte(d))
			if err != nil {
				t.Fatalf("propose %d with a quorum: %v", i, err)
			}
			acked[d] = idx
		}
		c.waitApplied(1, []NodeID{lead, followers[1]}, 20, 5*time.Second)
		if n := len(c.sms[followers[0]].entries(1)); n != 0 {
			t.Fatalf("the isolated follower applied %d entries", n)
		}

		// With both followers gone nothing commits: the caller learns the
		// outcome is unknown, and nothing is applied anywhere.
		c.net.isolate(followers[1], c.ids, true)
		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err = h.Propose(short, 1, []byte("no-quorum"))
		cancel()
		if !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("propose without a quorum: %v", err)
		}
		for _, id := range c.ids {
			for _, e := range c.sms[id].entries(1) {
				if string(e.Data) == "no-quorum" {
					t.Fatalf("node %d applied an entry without a quorum", id)
				}
			}
		}

		// Heal: everyone converges on one sequence holding every
		// acknowledged entry, and the isolated follower catches up.
		c.net.isolate(followers[0], c.ids, false)
		c.net.isolate(followers[1], c.ids, false)
		if _, err := c.propose(1, []byte("after-heal"), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 21, 10*time.Second)
		seq := c.checkSame(1, c.ids)
		checkAcked(t, 1, seq, acked)
	})
}

// TestEarlyMessagesAwaitTheirGroup: replica 0 creates a fresh group and
// campaigns before its peers have created it; the peers keep that
// campaign's messages and step them when they add the group, so the
// first leader is there well within one election timeout of the last
// AddGroup instead of after replica 0's next campaign.
func TestEarlyMessagesAwaitTheirGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 1, nil)
		const g = GroupID(7)
		c.voters[g] = slices.Clone(c.ids)
		c.addGroupOn(0, g, GroupOptions{Voters: c.ids})
		time.Sleep(5 * testTiming.Tick)
		synctest.Wait()
		start := time.Now()
		for _, id := range c.ids[1:] {
			c.addGroupOn(id, g, GroupOptions{Voters: c.ids})
		}
		if l := c.leader(g, 5*time.Second); l != 0 {
			t.Fatalf("first leader %d, want replica 0", l)
		}
		if took := time.Since(start); took >= time.Duration(testTiming.ElectionTicks)*testTiming.Tick/2 {
			t.Fatalf("first leader %s after its peers created the group", took)
		}
		if n := c.hosts[1].Stats(); n.Groups != 1 {
			t.Fatalf("stats %+v", n)
		}
	})
}

// TestEarlyMessagesBounded: messages for a group that never comes are
// dropped after their time, and the buffer keeps its bounds.
func TestEarlyMessagesBounded(t *testing.T) {
	h := &Host{}
	big := &raftpb.Message{Type: raftpb.MsgApp.Enum(), Entries: []*raftpb.Entry{{Data: make([]byte, earlyMaxMessageSize)}}}
	h.holdEarly(1, transport.Envelope{Group: 1, Kind: transport.KindRaft, Msg: big})
	if len(h.early) != 0 {
		t.Fatal("a message over the size bound was kept")
	}
	small := &raftpb.Message{Type: raftpb.MsgPreVote.Enum()}
	for range earlyMaxPerGroup + 5 {
		h.holdEarly(1, transport.Envelope{Group: 1, Kind: transport.KindRaft, Msg: small})
	}
	h.holdEarly(1, transport.Envelope{Group: 1, Kind: transport.KindRaft, Msg: &raftpb.Message{Type: raftpb.MsgProp.Enum()}})
	if n := len(h.early[1].msgs); n != earlyMaxPerGroup {
		t.Fatalf("%d messages kept for one group, want %d", n, earlyMaxPerGroup)
	}
	for g := range uint64(earlyMaxGroups + 10) {
		h.holdEarly(1, transport.Envelope{Group: 100 + g, Kind: transport.KindRaft, Msg: small})
	}
	if len(h.early) != earlyMaxGroups {
		t.Fatalf("%d groups held, want %d", len(h.early), earlyMaxGroups)
	}
	h.ticks += earlyTTLTicks
	h.expireEarly()
	if len(h.early) != 0 || h.earlyBytes != 0 {
		t.Fatalf("after the time to live: %d groups, %d bytes", len(h.early), h.earlyBytes)
	}
}
