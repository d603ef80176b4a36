package sim

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/placement"
)

const (
	simNodes      = 12
	simPartitions = 10000
	simRF         = 3
)

// deviation returns the mean of c and the largest relative distance of
// an element from it.
func deviation(c []int) (mean, dev float64) {
	sum := 0
	for _, v := range c {
		sum += v
	}
	mean = float64(sum) / float64(len(c))
	for _, v := range c {
		dev = max(dev, math.Abs(float64(v)-mean)/mean)
	}
	return mean, dev
}

func nodes(n int) []placement.Node {
	out := make([]placement.Node, n)
	for i := range out {
		out[i].ID = uint8(i)
	}
	return out
}

// perNode counts replicas and preferred leaders per node.
func perNode(n int, lists [][]uint8) (replicas, leaders []int) {
	load := placement.NewLoad(lists)
	for i := range n {
		replicas = append(replicas, load.Replicas(uint8(i)))
		leaders = append(leaders, load.Leaders(uint8(i)))
	}
	return replicas, leaders
}

func place(t *testing.T) [][]uint8 {
	t.Helper()
	lists, err := placement.Place(nodes(simNodes), nil, simRF, simPartitions)
	if err != nil {
		t.Fatal(err)
	}
	return lists
}

// TestPlacementAtScale: 12 nodes, 10,000 partitions, rf 3: replicas (and
// preferred leaders) per node within 10% of the mean after creation, and
// after a 13th node joins and Plan runs, in rounds of bounded moves,
// until it has no more (preferred leaders then evened out by
// BalanceLeaders).
func TestPlacementAtScale(t *testing.T) {
	start := time.Now()
	lists := place(t)
	replicas, leaders := perNode(simNodes, lists)
	_, rdev := deviation(replicas)
	_, ldev := deviation(leaders)
	t.Logf("created: replicas %v (max deviation %.2f%%), preferred leaders %v (%.2f%%)", replicas, 100*rdev, leaders, 100*ldev)
	if rdev > 0.1 || ldev > 0.1 {
		t.Fatalf("after creation: replicas %.1f%%, leaders %.1f%% from the mean", 100*rdev, 100*ldev)
	}

	grown := nodes(simNodes + 1)
	moves, rounds := 0, 0
	for ; ; rounds++ {
		if rounds > 100 {
			t.Fatal("rebalance did not converge in 100 rounds")
		}
		ms, err := placement.Plan(grown, lists, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			break
		}
		for _, m := range ms {
			m.Apply(lists[m.Index])
		}
		moves += len(ms)
	}
	leads, err := placement.BalanceLeaders(grown, lists, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leads {
		l.Apply(lists[l.Index])
	}
	for i, l := range lists {
		if len(l) != simRF || l[0] == l[1] || l[0] == l[2] || l[1] == l[2] {
			t.Fatalf("partition %d: %v", i, l)
		}
	}
	replicas, leaders = perNode(simNodes+1, lists)
	_, rdev = deviation(replicas)
	_, ldev = deviation(leaders)
	t.Logf("after adding node 12: %d moves in %d rounds, %d leader changes; replicas %v (max deviation %.2f%%), preferred leaders %v (%.2f%%); %s",
		moves, rounds, len(leads), replicas, 100*rdev, leaders, 100*ldev, time.Since(start))
	if rdev > 0.1 || ldev > 0.1 {
		t.Fatalf("after the rebalance: replicas %.1f%%, leaders %.1f%% from the mean", 100*rdev, 100*ldev)
	}
}

// TestLeadersRecoverAfterRestarts: 12 nodes, 10,000 partitions, rf 3,
// every partition first led by its preferred replica. Two nodes crash
// and restart (both at once, or one after the other); elections hand
// their partitions to random live replicas; within 60 s (virtual) of the
// second restart every node leads within 20% of the mean, and stays so,
// through the balancer's own decisions, without a transfer storm.
func TestLeadersRecoverAfterRestarts(t *testing.T) {
	lists := place(t)
	for _, sc := range []struct {
		name     string
		schedule func(c *Cluster) // runs the crashes and restarts
	}{
		{"together", func(c *Cluster) {
			c.Crash(2)
			c.Crash(7)
			c.Run(30 * time.Second)
			c.Restart(2)
			c.Restart(7)
		}},
		{"one after the other", func(c *Cluster) {
			c.Crash(2)
			c.Run(20 * time.Second)
			c.Restart(2)
			c.Run(5 * time.Second)
			c.Crash(7)
			c.Run(20 * time.Second)
			c.Restart(7)
		}},
		{"one fails again while its leaderships return", func(c *Cluster) {
			c.Crash(2)
			c.Crash(7)
			c.Run(10 * time.Second)
			c.Restart(2)
			c.Restart(7)
			c.Run(900 * time.Millisecond)
			c.Crash(7)
			c.Run(10 * time.Second)
			c.Restart(7)
		}},
		{"restart within the election timeout", func(c *Cluster) {
			c.Crash(2)
			c.Crash(7)
			c.Run(3 * time.Second)
			c.Restart(2)
			c.Restart(7)
		}},
	} {
		for _, v := range []struct {
			name string
			cfg  Config
		}{
			{"default timing", DefaultConfig(1)},
			{"default timing", DefaultConfig(2)},
			{"slow", slowConfig(3)},
		} {
			t.Run(fmt.Sprintf("%s/%s/seed%d", sc.name, v.name, v.cfg.Seed), func(t *testing.T) {
				c := New(v.cfg, simNodes, lists)
				if _, dev := deviation(c.Leaders()); dev > 0.1 {
					t.Fatalf("initial leaders %v", c.Leaders())
				}
				sc.schedule(c)
				restarted := c.Now()
				balancedAt := time.Duration(-1)
				worst := 0.0
				for c.Now() < restarted+60*time.Second {
					c.Run(500 * time.Millisecond)
					_, dev := deviation(c.Leaders())
					if dev <= 0.2 && balancedAt < 0 && c.Leaderless() == 0 {
						balancedAt = c.Now() - restarted
					}
					if balancedAt >= 0 {
						worst = max(worst, dev)
					}
				}
				leaders := c.Leaders()
				_, dev := deviation(leaders)
				st := c.Stats()
				t.Logf("within ±20%% %s after the restart; at 60 s: leaders %v, max deviation %.2f%% (worst since %.2f%%); %d elections, transfers %d started, %d completed, %d failed",
					balancedAt, leaders, 100*dev, 100*worst, st.Elections, st.TransfersStarted, st.TransfersCompleted, st.TransfersFailed)
				if balancedAt < 0 || worst > 0.2 || c.Leaderless() > 0 {
					t.Fatalf("leaders %v not within 20%% of the mean within 60 s of the restart (worst %.1f%%)", leaders, 100*worst)
				}
				// Every transfer moves a partition to a replica preferred
				// over its leader; a storm would re-move partitions.
				if st.TransfersStarted > 2*st.Elections+10 {
					t.Fatalf("%d transfers for %d elections", st.TransfersStarted, st.Elections)
				}
				// Back at every preferred leader: all nodes within a few.
				if slices.Max(leaders)-slices.Min(leaders) > 2 {
					t.Fatalf("leaders %v: not back at the preferred replicas", leaders)
				}
			})
		}
	}
}

// slowConfig is a pessimistic timing: a 5 s election timeout (so a 50 s
// back-off), transfers of up to 2 s and catching up for up to 20 s.
func slowConfig(seed uint64) Config {
	c := DefaultConfig(seed)
	c.ElectionTimeout, c.TransferDelay, c.CatchUp = 5*time.Second, 2*time.Second, 20*time.Second
	return c
}

// TestSimDeterministic: the same seed gives the same run.
func TestSimDeterministic(t *testing.T) {
	lists := place(t)
	run := func() ([]int, Stats) {
		c := New(DefaultConfig(7), simNodes, lists[:2000])
		c.Crash(1)
		c.Crash(4)
		c.Run(10 * time.Second)
		c.Restart(1)
		c.Run(2 * time.Second)
		return c.Leaders(), c.Stats()
	}
	l1, s1 := run()
	l2, s2 := run()
	if !slices.Equal(l1, l2) || s1 != s2 {
		t.Fatalf("two runs differ: %v %+v and %v %+v", l1, s1, l2, s2)
	}
}
