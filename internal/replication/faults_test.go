package replication

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// lossy makes the network drop 5 %, duplicate 2 % and delay (so reorder)
// every envelope by up to 20 ms.
func lossy(n *memNet) { n.dropRate, n.dupRate, n.maxDelay = 0.05, 0.02, 20*time.Millisecond }

func TestLeaderCrashReelection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 7, nil)
		c.net.set(lossy)
		c.addGroup(1)
		acked := map[string]uint64{}
		for i := range 30 {
			d := fmt.Sprintf("a%d", i)
			idx, err := c.propose(1, []byte(d), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		old := c.leader(1, 5*time.Second)
		c.crash(old)
		killed := time.Now()
		newLead := c.leader(1, 30*time.Second)
		t.Logf("new leader %d elected %s after the kill (virtual time)", newLead, time.Since(killed))
		idx, err := c.propose(1, []byte("after-crash"), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		acked["after-crash"] = idx
		failover := time.Since(killed)
		t.Logf("failover (leader kill to first acknowledged write, virtual time, lossy network): %s", failover)
		// A lost vote costs a randomized election timeout (up to 2.4 s)
		// under this 5 % loss; 10 s means several rounds failed.
		if failover > 10*time.Second {
			t.Fatalf("failover took %s", failover)
		}
		if l := c.leader(1, 5*time.Second); l == old {
			t.Fatal("the crashed node is still leader")
		}
		for i := range 10 {
			d := fmt.Sprintf("b%d", i)
			idx, err := c.propose(1, []byte(d), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		// The old leader restarts from its storage and catches up.
		c.start(old)
		c.waitApplied(1, c.ids, len(acked), 20*time.Second)
		seq := c.checkSame(1, c.ids)
		checkAcked(t, 1, seq, acked)
	})
}

func TestIsolatedLeaderAndSnapshotCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 11, nil)
		c.addGroup(1)
		acked := map[string]uint64{}
		for i := range 10 {
			d := fmt.Sprintf("p%d", i)
			idx, err := c.propose(1, []byte(d), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		old := c.leader(1, 5*time.Second)
		c.net.isolate(old, c.ids, true)
		// The isolated leader cannot commit; a proposal there is never
		// acknowledged.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := c.hosts[old].Propose(ctx, 1, []byte("stranded"))
		cancel()
		if err == nil {
			t.Fatal("an isolated leader acknowledged a proposal")
		}
		var rest []NodeID
		for _, id := range c.ids {
			if id != old {
				rest = append(rest, id)
			}
		}
		// The majority elects a new leader and keeps writing.
		deadline := time.Now().Add(10 * time.Second)
		var lead NodeID
		for {
			l, ok := c.hosts[rest[0]].Leader(1)
			if ok && l != old {
				lead = l
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the majority did not elect a new leader")
			}
			time.Sleep(testTiming.Tick)
		}
		for i := range 20 {
			d := fmt.Sprintf("m%d", i)
			idx, err := c.hosts[lead].Propose(context.Background(), 1, []byte(d))
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		// Compact the log on both majority nodes: the old leader can only
		// catch up from a snapshot.
		for _, id := range rest {
			if _, err := c.hosts[id].Compact(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := c.hosts[old].Status(1); v.Role == RoleLeader {
			t.Fatalf("the isolated leader did not step down (CheckQuorum): %+v", v)
		}
		c.net.isolate(old, c.ids, false)
		c.waitApplied(1, c.ids, 30, 20*time.Second)
		seq := c.checkSame(1, c.ids)
		checkAcked(t, 1, seq, acked)
		for _, e := range c.sms[old].entries(1) {
			if string(e.Data) == "stranded" {
				t.Fatal("the stranded proposal was applied")
			}
		}
		sm := c.sms[old]
		sm.mu.Lock()
		restores := sm.restores
		sm.mu.Unlock()
		if restores == 0 {
			t.Fatal("the old leader caught up without a snapshot although the log was compacted")
		}
	})
}

func TestMembershipJointConsensus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 5, nil)
		c.addGroup(1)
		acked := map[string]uint64{}
		for i := range 10 {
			d := fmt.Sprintf("x%d", i)
			idx, err := c.propose(1, []byte(d), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		// Node 3 joins empty, first as a learner: it receives the log but
		// does not vote.
		c.start(3)
		c.addGroupOn(3, 1, GroupOptions{})
		lead := c.leader(1, 5*time.Second)
		ctx := context.Background()
		if _, err := c.hosts[lead].ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 3}}); err != nil {
			t.Fatal(err)
		}
		c.waitApplied(1, []NodeID{3}, 10, 10*time.Second)
		if v, _ := c.hosts[3].Status(1); !slices.Contains(v.Learners, 3) || slices.Contains(v.Voters, 3) {
			t.Fatalf("node 3 should be a learner: %+v", v)
		}
		// One joint change: promote 3 and remove the current leader.
		cs, err := c.hosts[lead].ChangeMembership(ctx, 1, []MemberChange{{AddVoter, 3}, {Remove, lead}})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.GetVotersOutgoing()) == 0 {
			t.Fatalf("two changes must enter a joint configuration: %v", cs)
		}
		var next []NodeID
		for _, id := range []NodeID{0, 1, 2, 3} {
			if id != lead {
				next = append(next, id)
			}
		}
		if _, err := c.hosts[next[0]].WaitFor(contextWithTimeout(t, 20*time.Second), 1, func(v View) bool {
			return !v.Joint && slices.Equal(v.Voters, next) && v.HasLeader && v.Leader != lead
		}); err != nil {
			v, _ := c.hosts[next[0]].Status(1)
			t.Fatalf("configuration did not settle on %v: %v, view %+v", next, err, v)
		}
		c.voters[1] = next
		for i := range 10 {
			d := fmt.Sprintf("y%d", i)
			idx, err := c.propose(1, []byte(d), 20*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
		}
		c.waitApplied(1, next, len(acked), 10*time.Second)
		seq := c.checkSame(1, append(next, lead))
		checkAcked(t, 1, seq, acked)
	})
}

func contextWithTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestRandomFaultSchedules runs random schedules of crashes, restarts,
// isolations and heals under a lossy network while a client writes, then
// checks that every replica applied one sequence holding every
// acknowledged entry at its index. IGGO_RAFT_SCHEDULES raises the count.
func TestRandomFaultSchedules(t *testing.T) {
	schedules := 4
	if s, err := strconv.Atoi(os.Getenv("IGGO_RAFT_SCHEDULES")); err == nil && s > 0 {
		schedules = s
	}
	for seed := range uint64(schedules) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runSchedule(t, seed) })
		})
	}
}

func runSchedule(t *testing.T, seed uint64) {
	c := newCluster(t, 5, seed+100, nil)
	c.net.set(lossy)
	rng := c.net.rng
	c.addGroup(1)
	acked := map[string]uint64{}
	crashed := map[NodeID]bool{}
	isolated := map[NodeID]bool{}
	var crashes, isolations int
	defer func() {
		t.Logf("seed %d: %d crashes, %d isolations, %d acknowledged writes", seed, crashes, isolations, len(acked))
	}()
	faulty := func() int { return len(crashed) + len(isolated) }
	for step := range 40 {
		c.net.mu.Lock()
		roll := rng.IntN(10)
		who := c.ids[rng.IntN(len(c.ids))]
		c.net.mu.Unlock()
		switch {
		case roll == 0 && !crashed[who] && !isolated[who] && faulty() < 2:
			c.crash(who)
			crashed[who] = true
			crashes++
		case roll == 1 && crashed[who]:
			c.start(who)
			delete(crashed, who)
		case roll == 2 && !crashed[who] && !isolated[who] && faulty() < 2:
			c.net.isolate(who, c.ids, true)
			isolated[who] = true
			isolations++
		case roll == 3 && isolated[who]:
			c.net.isolate(who, c.ids, false)
			delete(isolated, who)
		}
		d := fmt.Sprintf("s%d-%d", seed, step)
		idx, err := c.propose(1, []byte(d), 30*time.Second)
		if err != nil {
			t.Fatalf("step %d (crashed %v, isolated %v): %v", step, crashed, isolated, err)
		}
		acked[d] = idx
	}
	for id := range crashed {
		c.start(id)
	}
	for id := range isolated {
		c.net.isolate(id, c.ids, false)
	}
	c.waitApplied(1, c.ids, len(acked), 30*time.Second)
	seq := c.checkSame(1, c.ids)
	checkAcked(t, 1, seq, acked)
}

// TestFailoverTime measures, over many seeds on a loss-free network with
// 0-2 ms delays, the virtual time from killing the leader to the first
// acknowledged write, with quiescence on (the group is quiet when the
// leader dies) and off (followers were receiving heartbeats).
func TestFailoverTime(t *testing.T) {
	for _, quiet := range []bool{true, false} {
		var times []time.Duration
		for seed := range uint64(10) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 3, seed+500, func(cfg *Config) { cfg.DisableQuiescence = !quiet })
				c.net.set(func(n *memNet) { n.maxDelay = 2 * time.Millisecond })
				c.addGroup(1)
				if _, err := c.propose(1, []byte("first"), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				time.Sleep(3 * time.Second)
				if v, _ := c.hosts[0].Status(1); v.Quiesced != quiet {
					t.Fatalf("quiesced = %v, want %v", v.Quiesced, quiet)
				}
				old := c.leader(1, time.Second)
				c.crash(old)
				killed := time.Now()
				if _, err := c.propose(1, []byte("second"), 30*time.Second); err != nil {
					t.Fatal(err)
				}
				times = append(times, time.Since(killed))
			})
		}
		slices.Sort(times)
		t.Logf("quiescence=%v: failover p50 %s, max %s over %d runs (virtual time)", quiet, times[len(times)/2], times[len(times)-1], len(times))
		if times[len(times)-1] > 5*time.Second {
			t.Fatalf("quiescence=%v: failover max %s above 5 s", quiet, times[len(times)-1])
		}
	}
}
