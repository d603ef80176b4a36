package replication

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// noticeRec counts the appends without entries each node sends.
type noticeRec struct {
	mu    sync.Mutex
	empty map[NodeID]int
}

func (r *noticeRec) see(self NodeID, envs []transport.Envelope) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range envs {
		if m := e.Msg; e.Kind == transport.KindRaft && m != nil && m.GetType() == raftpb.MsgApp && len(m.GetEntries()) == 0 {
			r.empty[self]++
		}
	}
}

func (r *noticeRec) take(id NodeID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.empty[id]
	r.empty[id] = 0
	return n
}

// TestCommitNoticesRideOnTheNextAppend: under back-to-back proposals the
// leader does not send a commit-only append per commit (raft's broadcast
// of every new commit index): the next proposal's append carries it. The
// last commit still reaches the followers one hold later, not at the
// next heartbeat.
func TestCommitNoticesRideOnTheNextAppend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &noticeRec{empty: map[NodeID]int{}}
		c := newCluster(t, 3, 51, func(cfg *Config) {
			cfg.Network = tapNet{Network: cfg.Network, self: cfg.Self, see: rec.see}
		})
		c.net.set(func(n *memNet) { n.inOrder = true })
		c.addGroup(1)
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		ctx := context.Background()
		if _, err := h.Propose(ctx, 1, []byte("warm-up")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 1, 5*time.Second)
		time.Sleep(10 * time.Millisecond) // the warm-up's notice leaves
		rec.take(lead)
		merged := h.Stats().NoticesMerged
		const n = 40
		for i := range n {
			if _, err := h.Propose(ctx, 1, fmt.Appendf(nil, "p%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		done := time.Now()
		sent := rec.take(lead)
		// Without the hold: one per commit and follower, 2n.
		if sent > 2 {
			t.Fatalf("leader sent %d commit-only appends during %d back-to-back proposals, want at most 2", sent, n)
		}
		if got := h.Stats().NoticesMerged - merged; got < 2*n-4 {
			t.Fatalf("%d notices merged, want about %d", got, 2*n)
		}
		// The last commit reaches the followers after one hold.
		for {
			all := true
			for _, id := range c.ids {
				if len(c.sms[id].entries(1)) < n+1 {
					all = false
				}
			}
			if all {
				break
			}
			if time.Since(done) > 10*DefaultCommitNoticeHold {
				t.Fatalf("followers did not apply the last entry within %s of its commit", 10*DefaultCommitNoticeHold)
			}
			time.Sleep(DefaultCommitNoticeHold / 10)
		}
		if wait := time.Since(done); wait < DefaultCommitNoticeHold {
			t.Fatalf("followers applied the last commit after %s, before the hold ended", wait)
		}
		c.checkSame(1, c.ids)
	})
}

// TestCommitNoticesOff: a negative CommitNoticeHold sends every notice at
// once, as raft emits it.
func TestCommitNoticesOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &noticeRec{empty: map[NodeID]int{}}
		c := newCluster(t, 3, 52, func(cfg *Config) {
			cfg.CommitNoticeHold = -1
			cfg.Network = tapNet{Network: cfg.Network, self: cfg.Self, see: rec.see}
		})
		c.net.set(func(n *memNet) { n.inOrder = true })
		c.addGroup(1)
		lead := c.leader(1, 5*time.Second)
		h := c.hosts[lead]
		if _, err := h.Propose(context.Background(), 1, []byte("warm-up")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 1, 5*time.Second)
		rec.take(lead)
		const n = 10
		for i := range n {
			if _, err := h.Propose(context.Background(), 1, fmt.Appendf(nil, "p%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if sent := rec.take(lead); sent < n {
			t.Fatalf("leader sent %d commit-only appends for %d commits with the hold off", sent, n)
		}
		if m := h.Stats().NoticesMerged; m != 0 {
			t.Fatalf("%d notices merged with the hold off", m)
		}
	})
}
