package replication

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

func TestTransferTarget(t *testing.T) {
	up := Candidate{Alive: true, Voter: true, CaughtUp: true}
	for _, c := range []struct {
		name    string
		self    NodeID
		prefs   []NodeID
		members map[NodeID]Candidate
		want    NodeID
		ok      bool
	}{
		{"self preferred", 1, []NodeID{1, 2, 3}, nil, 0, false},
		{"no preference", 1, nil, nil, 0, false},
		{"first is live", 2, []NodeID{1, 2, 3}, map[NodeID]Candidate{1: up}, 1, true},
		{"first is dead, self next", 2, []NodeID{1, 2, 3}, map[NodeID]Candidate{1: {Voter: true, CaughtUp: true}}, 0, false},
		{"first is dead, next live", 3, []NodeID{1, 2, 3}, map[NodeID]Candidate{2: up}, 2, true},
		{"first lags: wait for it", 3, []NodeID{1, 2, 3}, map[NodeID]Candidate{1: {Alive: true, Voter: true}, 2: up}, 0, false},
		{"first is a learner", 3, []NodeID{1, 2, 3}, map[NodeID]Candidate{1: {Alive: true, CaughtUp: true}, 2: up}, 2, true},
		{"first backed off", 3, []NodeID{1, 2, 3}, map[NodeID]Candidate{1: {Alive: true, Voter: true, CaughtUp: true, BackedOff: true}, 2: up}, 2, true},
		{"self not listed", 4, []NodeID{1, 2, 3}, map[NodeID]Candidate{3: up}, 3, true},
		{"nobody eligible", 4, []NodeID{1, 2}, nil, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []NodeID
			got, ok := TransferTarget(c.self, c.prefs, func(n NodeID) Candidate {
				asked = append(asked, n)
				return c.members[n]
			})
			if got != c.want || ok != c.ok {
				t.Fatalf("got %d %v, want %d %v", got, ok, c.want, c.ok)
			}
			if slices.Contains(asked, c.self) {
				t.Fatalf("asked about self: %v", asked)
			}
		})
	}
}

func TestPreferenceExcludesFollowLeader(t *testing.T) {
	_, err := New(Config{Network: newMemNet(1).endpoint(0), Timing: testTiming, FollowLeader: true,
		Preference: func(GroupID) []NodeID { return nil }})
	if err == nil {
		t.Fatal("FollowLeader with Preference accepted")
	}
}

// transferNet wraps a host's network: it counts the MsgTimeoutNow
// messages (a transfer raft starts once the target caught up) per group
// and target, and drops those to the targets in drop.
type transferNet struct {
	Network
	s *transferStats
}

type transferStats struct {
	mu    sync.Mutex
	sent  map[[2]uint64]int // (group, to) -> MsgTimeoutNow sent
	drop  map[NodeID]bool
	prefs map[GroupID][]NodeID
}

func newTransferStats(prefs map[GroupID][]NodeID) *transferStats {
	return &transferStats{sent: map[[2]uint64]int{}, drop: map[NodeID]bool{}, prefs: prefs}
}

func (n transferNet) Send(to NodeID, envs []transport.Envelope) {
	s := n.s
	s.mu.Lock()
	out := make([]transport.Envelope, 0, len(envs))
	for _, e := range envs {
		if e.Msg != nil && e.Msg.GetType() == raftpb.MsgTimeoutNow {
			s.sent[[2]uint64{e.Group, uint64(to)}]++
			if s.drop[to] {
				continue
			}
		}
		out = append(out, e)
	}
	s.mu.Unlock()
	n.Network.Send(to, out)
}

// total returns the MsgTimeoutNow messages sent so far.
func (s *transferStats) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.sent {
		n += v
	}
	return n
}

func (s *transferStats) to(g GroupID, n NodeID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[[2]uint64{uint64(g), uint64(n)}]
}

func (s *transferStats) preference(g GroupID) []NodeID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefs[g]
}

func (s *transferStats) setPreference(g GroupID, p []NodeID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prefs[g] = p
}

func (s *transferStats) config(cfg *Config) {
	cfg.Network = transferNet{cfg.Network, s}
	cfg.Preference = s.preference
}

// waitLeaders waits until every group in want is led by the node named,
// as that node and a majority of the live hosts see it.
func (c *cluster) waitLeaders(want map[GroupID]NodeID, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var wrong []string
		for _, g := range slices.Sorted(maps.Keys(want)) {
			w := want[g]
			support := 0
			for _, h := range c.hosts {
				if l, ok := h.Leader(g); ok && l == w {
					support++
				}
			}
			lead := c.hosts[w]
			if v, _ := lead.Status(g); lead == nil || v.Role != RoleLeader || support <= len(c.voters[g])/2 {
				l, _ := c.hosts[c.ids[0]].Leader(g)
				wrong = append(wrong, fmt.Sprintf("group %d: want %d, node %d sees %d", g, w, c.ids[0], l))
			}
		}
		if len(wrong) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("leaders not in place after %s: %v", within, wrong)
		}
		time.Sleep(testTiming.Tick)
	}
}

// TestLeadersFollowPreference: 3 hosts, 6 groups with different
// preferred orders (and one without): each group is first led by its
// preferred node; when that node dies the next in its order takes over
// (directly, by campaigning first); when it comes back (after entries it
// must catch up on) leadership returns to it; a manual transfer away is
// undone and a changed order is followed; each step costs one transfer
// per group that moves, and none happen when nothing changes.
func TestLeadersFollowPreference(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { leadersFollowPreference(t, seed) })
	}
}

func leadersFollowPreference(t *testing.T, seed uint64) {
	synctest.Test(t, func(t *testing.T) {
		prefs := map[GroupID][]NodeID{
			1: {0, 1, 2}, 2: {1, 2, 0}, 3: {2, 0, 1},
			4: {0, 2, 1}, 5: {1, 0, 2}, 6: {2, 1, 0},
		}
		s := newTransferStats(prefs)
		c := newCluster(t, 3, seed, s.config)
		for g := range GroupID(8) {
			c.addGroup(g) // 0 and 7 have no preference
		}
		want := map[GroupID]NodeID{0: 0, 1: 0, 2: 1, 3: 2, 4: 0, 5: 1, 6: 2, 7: 0}
		c.waitLeaders(want, 10*time.Second)
		c.settle(10 * time.Second)
		if n := s.total(); n != 0 {
			t.Fatalf("%d transfers to reach the preferred leaders, want 0 (they campaign first)", n)
		}

		// Node 2 dies: its groups go to the next in their order.
		c.crash(2)
		want[3], want[6] = 0, 1
		c.waitLeaders(want, 20*time.Second)
		for i := range 20 {
			if _, err := c.propose(3, fmt.Appendf(nil, "while 2 is down %d", i), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(10 * time.Second)
		if n := s.total(); n != 0 {
			t.Fatalf("%d transfers while node 2 is down, want 0", n)
		}

		// It comes back: once caught up it leads its groups again.
		c.start(2)
		want[3], want[6] = 2, 2
		c.waitLeaders(want, 20*time.Second)
		c.waitApplied(3, c.ids, 20, 10*time.Second)
		if a, b := s.to(3, 2), s.to(6, 2); a != 1 || b != 1 {
			t.Fatalf("transfers back to node 2: group 3 %d, group 6 %d, want 1 each", a, b)
		}

		// A manual transfer away is undone by the balancer.
		if err := c.hosts[0].TransferLeadership(contextWithTimeout(t, 5*time.Second), 1, 1); err != nil {
			t.Fatal(err)
		}
		c.waitLeaders(want, 10*time.Second)

		// A changed order is followed.
		s.setPreference(4, []NodeID{1, 0, 2})
		want[4] = 1
		c.waitLeaders(want, 10*time.Second)

		before := s.total()
		if before != 5 {
			t.Fatalf("%d transfers in all, want 5 (2 after the restart, 1 manual and 1 back, 1 new order)", before)
		}
		time.Sleep(30 * time.Second)
		if n := s.total(); n != before {
			t.Fatalf("%d transfers while nothing changed", n-before)
		}
		c.waitLeaders(want, time.Second)
	})
}

// TestTransferBackoff: a transfer to a node that never takes over (its
// MsgTimeoutNow is lost) is not retried for TransferBackoffElections
// election timeouts; the group stays writable on its leader meanwhile.
func TestTransferBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTransferStats(map[GroupID][]NodeID{1: {2, 0, 1}})
		c := newCluster(t, 3, 12, s.config)
		c.addGroup(1)
		c.waitLeaders(map[GroupID]NodeID{1: 2}, 10*time.Second)
		s.mu.Lock()
		s.drop[2] = true
		s.mu.Unlock()
		if err := c.hosts[2].TransferLeadership(contextWithTimeout(t, 5*time.Second), 1, 0); err != nil {
			t.Fatal(err)
		}
		const window = 60 * time.Second
		time.Sleep(window)
		attempts := s.to(1, 2)
		// One attempt, then one per back-off period of ten election
		// timeouts (plus the election timeout a failed attempt takes to
		// abort). Without the back-off it would be one per election
		// timeout and heartbeat, about 40.
		period := time.Duration(11*testTiming.ElectionTicks) * testTiming.Tick
		if most := int(window/period) + 1; attempts < 2 || attempts > most {
			t.Fatalf("%d transfer attempts in %s, want 2 to %d", attempts, window, most)
		}
		if l := c.leader(1, time.Second); l != 0 {
			t.Fatalf("leader %d, want 0 (its order's next)", l)
		}
		if _, err := c.propose(1, []byte("still writable"), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d attempts in %s while the target did not take over", attempts, window)

		// Right after an attempt failed, the target restarts: the
		// back-off ends when it is heard from again.
		for s.to(1, 2) == attempts {
			time.Sleep(testTiming.Tick)
		}
		time.Sleep(time.Duration(2*testTiming.ElectionTicks) * testTiming.Tick) // the attempt aborts
		c.crash(2)
		time.Sleep(time.Duration(2*testTiming.ElectionTicks) * testTiming.Tick) // declared dead
		s.mu.Lock()
		s.drop[2] = false
		s.mu.Unlock()
		c.start(2)
		c.waitLeaders(map[GroupID]NodeID{1: 2}, 5*time.Second)
	})
}
