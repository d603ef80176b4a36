package replication

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// orderRec watches, per node, what its storage holds durably and what it
// sends, and records every message that promises more than the storage
// held when it left: a term above the stored one, an acknowledgement of
// entries not yet appended. It also counts the leader appends whose
// entries had already been sent.
type orderRec struct {
	mu         sync.Mutex
	term       map[NodeID]uint64 // stored hard state term
	last       map[NodeID]uint64 // last stored log index
	sent       map[NodeID]uint64 // highest entry index sent in a MsgApp
	sentBefore map[NodeID]int    // appends whose last entry was already sent
	appends    map[NodeID]int    // appends holding proposed data
	violations []string
}

func newOrderRec() *orderRec {
	return &orderRec{
		term: map[NodeID]uint64{}, last: map[NodeID]uint64{}, sent: map[NodeID]uint64{},
		sentBefore: map[NodeID]int{}, appends: map[NodeID]int{},
	}
}

func (r *orderRec) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.violations...)
}

func (r *orderRec) counts(n NodeID) (appends, sentBefore int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.appends[n], r.sentBefore[n]
}

// orderLog is a LogStorage reporting to an orderRec.
type orderLog struct {
	LogStorage
	rec  *orderRec
	node NodeID
}

func (l *orderLog) Append(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return l.LogStorage.Append(ents)
	}
	lastIdx := ents[len(ents)-1].GetIndex()
	hasData := false
	for _, e := range ents {
		hasData = hasData || (e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0)
	}
	l.rec.mu.Lock()
	if hasData {
		l.rec.appends[l.node]++
		if l.rec.sent[l.node] >= lastIdx {
			l.rec.sentBefore[l.node]++
		}
	}
	l.rec.mu.Unlock()
	if err := l.LogStorage.Append(ents); err != nil {
		return err
	}
	l.rec.mu.Lock()
	l.rec.last[l.node] = lastIdx
	l.rec.mu.Unlock()
	return nil
}

func (l *orderLog) SetHardState(st *raftpb.HardState) error {
	if err := l.LogStorage.SetHardState(st); err != nil {
		return err
	}
	l.rec.mu.Lock()
	l.rec.term[l.node] = st.GetTerm()
	l.rec.mu.Unlock()
	return nil
}

func (l *orderLog) ApplySnapshot(snap *raftpb.Snapshot) error {
	if err := l.LogStorage.ApplySnapshot(snap); err != nil {
		return err
	}
	l.rec.mu.Lock()
	l.rec.last[l.node] = snap.GetMetadata().GetIndex()
	l.rec.mu.Unlock()
	return nil
}

// tapNet is a Network that shows every batch to see before sending it.
type tapNet struct {
	Network
	self NodeID
	see  func(self NodeID, envs []transport.Envelope)
}

func (n tapNet) Send(to NodeID, envs []transport.Envelope) {
	n.see(n.self, envs)
	n.Network.Send(to, envs)
}

// see records what node self sends (a tapNet's see).
func (r *orderRec) see(self NodeID, envs []transport.Envelope) {
	r.mu.Lock()
	for _, e := range envs {
		m := e.Msg
		if e.Kind != transport.KindRaft || m == nil {
			continue
		}
		switch t := m.GetType(); {
		case t == raftpb.MsgPreVote || t == raftpb.MsgPreVoteResp:
			// A pre-vote carries the term the candidate would take.
		case m.GetTerm() > r.term[self]:
			r.violations = append(r.violations, fmt.Sprintf("node %d sent %v at term %d, stored term %d", self, t, m.GetTerm(), r.term[self]))
		}
		if m.GetType() == raftpb.MsgAppResp && !m.GetReject() && m.GetIndex() > r.last[self] {
			r.violations = append(r.violations, fmt.Sprintf("node %d acknowledged %d, stored up to %d", self, m.GetIndex(), r.last[self]))
		}
		if ents := m.GetEntries(); m.GetType() == raftpb.MsgApp && len(ents) > 0 {
			r.sent[self] = max(r.sent[self], ents[len(ents)-1].GetIndex())
		}
	}
	r.mu.Unlock()
}

func orderCluster(t *testing.T, n int, seed uint64, rec *orderRec) *cluster {
	return newCluster(t, n, seed, func(cfg *Config) {
		cfg.Network = tapNet{Network: cfg.Network, self: cfg.Self, see: rec.see}
	})
}

func TestLeaderSendsWhileItPersists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newOrderRec()
		c := orderCluster(t, 3, 21, rec)
		c.voters[1] = c.ids
		for _, id := range c.ids {
			c.addGroupOn(id, 1, GroupOptions{Voters: c.ids, Storage: &orderLog{LogStorage: NewMemoryLog(), rec: rec, node: id}})
		}
		lead := c.leader(1, 5*time.Second)
		// Right after the election a follower may still be probed (one
		// message in flight, nothing else sent until it answers), so the
		// first proposal's entries can leave a Ready later. Warm up, then
		// count.
		if _, err := c.hosts[lead].Propose(context.Background(), 1, []byte("warm-up")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, c.ids, 1, 10*time.Second)
		rec.mu.Lock()
		rec.appends[lead], rec.sentBefore[lead] = 0, 0
		rec.mu.Unlock()
		for i := range 30 {
			if _, err := c.hosts[lead].Propose(context.Background(), 1, fmt.Appendf(nil, "p%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		c.waitApplied(1, c.ids, 31, 10*time.Second)
		c.checkSame(1, c.ids)
		if v := rec.failures(); len(v) > 0 {
			t.Fatalf("messages promised more than the storage held:\n%v", v)
		}
		// Every append of the leader's proposals overlapped its send.
		appends, before := rec.counts(lead)
		if appends != 30 || before != appends {
			t.Fatalf("leader: %d of %d appends began after their entries were sent", before, appends)
		}
		// Followers persist first: their acknowledgements all checked out
		// above, over appends that did happen.
		for _, id := range c.ids {
			if a, _ := rec.counts(id); id != lead && a == 0 {
				t.Fatalf("follower %d never appended", id)
			}
		}
	})
}

// TestSoleVoterPersistsTermFirst: a sole voter that restarts elects
// itself at a new term without any peer's help and then appends to its
// learner; nothing of the new term may leave before the term is durable.
func TestSoleVoterPersistsTermFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newOrderRec()
		c := orderCluster(t, 2, 22, rec)
		c.voters[1] = []NodeID{0}
		c.addGroupOn(0, 1, GroupOptions{Voters: []NodeID{0}, Storage: &orderLog{LogStorage: NewMemoryLog(), rec: rec, node: 0}})
		c.addGroupOn(1, 1, GroupOptions{Storage: &orderLog{LogStorage: NewMemoryLog(), rec: rec, node: 1}})
		if l := c.leader(1, 5*time.Second); l != 0 {
			t.Fatalf("leader %d", l)
		}
		ctx := context.Background()
		if _, err := c.hosts[0].ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.hosts[0].Propose(ctx, 1, []byte("before")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, []NodeID{1}, 1, 10*time.Second)
		v0, _ := c.hosts[0].Status(1)
		// Restart the voter: it elects itself at a new term and appends
		// to the learner at once.
		c.crash(0)
		c.start(0)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if v, _ := c.hosts[0].Status(1); v.Role == RoleLeader && v.Term > v0.Term {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the restarted voter did not lead again")
			}
			time.Sleep(testTiming.Tick)
		}
		if _, err := c.hosts[0].Propose(ctx, 1, []byte("after")); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, []NodeID{1}, 2, 10*time.Second)
		c.checkSame(1, c.ids)
		if v := rec.failures(); len(v) > 0 {
			t.Fatalf("messages promised more than the storage held:\n%v", v)
		}
	})
}

// TestSendsEarlyOnlyForAStableLeader checks the rule of handleReady on
// hand-built Readys, including the combination raft does not produce
// today (becoming leader and changing term in one Ready).
func TestSendsEarlyOnlyForAStableLeader(t *testing.T) {
	ents := []*raftpb.Entry{{Index: new(uint64(8)), Term: new(uint64(3)), Data: []byte("x")}}
	msgs := []*raftpb.Message{{Type: raftpb.MsgApp.Enum(), To: new(uint64(2)), Term: new(uint64(3))}}
	leader := &raft.SoftState{Lead: 1, RaftState: raft.StateLeader}
	follower := &raft.SoftState{Lead: 2, RaftState: raft.StateFollower}
	cases := []struct {
		name  string
		state raft.StateType
		rd    raft.Ready
		want  bool
	}{
		{"leader", raft.StateLeader, raft.Ready{Entries: ents, Messages: msgs}, true},
		{"leader, commit moves", raft.StateLeader, raft.Ready{Entries: ents, Messages: msgs,
			HardState: &raftpb.HardState{Term: new(uint64(3)), Vote: new(uint64(1)), Commit: new(uint64(7))}}, true},
		{"becomes leader", raft.StateCandidate, raft.Ready{SoftState: leader, Entries: ents, Messages: msgs}, true},
		{"becomes leader at a new term", raft.StateCandidate, raft.Ready{SoftState: leader, Entries: ents, Messages: msgs,
			HardState: &raftpb.HardState{Term: new(uint64(4)), Vote: new(uint64(1))}}, false},
		{"leader, new vote", raft.StateLeader, raft.Ready{Entries: ents, Messages: msgs,
			HardState: &raftpb.HardState{Term: new(uint64(3)), Vote: new(uint64(2))}}, false},
		{"steps down", raft.StateLeader, raft.Ready{SoftState: follower, Entries: ents, Messages: msgs}, false},
		{"follower", raft.StateFollower, raft.Ready{Entries: ents, Messages: msgs}, false},
		{"leader, nothing to write", raft.StateLeader, raft.Ready{Messages: msgs}, false},
		{"leader, nothing to send", raft.StateLeader, raft.Ready{Entries: ents}, false},
	}
	for _, tc := range cases {
		g := &group{state: tc.state, hardTerm: 3, hardVote: 1}
		if got := g.sendsEarly(&tc.rd); got != tc.want {
			t.Errorf("%s: sendsEarly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
