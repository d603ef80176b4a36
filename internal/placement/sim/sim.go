// Package sim is a deterministic model of partition leadership in a
// cluster, in virtual time: nodes crash and restart, elections hand a
// dead leader's partitions to a random live replica, and every heartbeat
// each leader applies the host's own balancing decision
// (replication.TransferTarget, with its per-round bound and back-off) to
// the partitions it leads. Tests use it to check that leadership spreads
// back out after failures at the scale of thousands of partitions, which
// real hosts cannot reach in a test.
//
// Randomness comes only from the seed, and nothing depends on map order
// or the wall clock: the same configuration and calls give the same run.
package sim

import (
	"math/rand/v2"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Config is the timing of the model.
type Config struct {
	// Seed seeds every random choice.
	Seed uint64
	// Tick is the step of virtual time (events land on ticks).
	Tick time.Duration
	// Heartbeat is the balancing round, and the delay before a
	// restarted node is heard from.
	Heartbeat time.Duration
	// ElectionTimeout is how long a crash goes unnoticed, and how long a
	// transfer that did not complete takes to be abandoned.
	ElectionTimeout time.Duration
	// TransferDelay is the longest a transfer takes to complete (each
	// takes a random part of it, at least one tick).
	TransferDelay time.Duration
	// CatchUp is the longest a restarted node's replica takes to catch up
	// with its leader, after the node is heard from.
	CatchUp time.Duration
}

// DefaultConfig is the cluster's default raft timing (docs/CLUSTER.md
// §2): 100 ms ticks, a 500 ms heartbeat and a 1.2 s election timeout;
// transfers take up to 300 ms and a restarted node's replicas up to 3 s
// to catch up.
func DefaultConfig(seed uint64) Config {
	return Config{
		Seed: seed, Tick: 100 * time.Millisecond, Heartbeat: 500 * time.Millisecond,
		ElectionTimeout: 1200 * time.Millisecond, TransferDelay: 300 * time.Millisecond, CatchUp: 3 * time.Second,
	}
}

// none is the leader of a partition without one.
const none = -1

// partition is one partition's raft group as the model sees it.
type partition struct {
	prefs  []replication.NodeID // the replica list, element 0 preferred
	leader int                  // node id, or none
	term   uint64
	// caughtUp is, per member (by position), when its replica holds the
	// leader's log; a zero value means it does.
	caughtUp []time.Duration
	// A transfer under way: to whom, when it completes (if the target is
	// up then), and when it is abandoned otherwise.
	transferring   bool
	to             int
	doneAt, giveUp time.Duration
	// The last transfer started: to whom, in which term, when.
	tried          bool
	triedTo        int
	triedTerm      uint64
	triedAt        time.Duration
	electionAt     time.Duration // when a leaderless partition elects, if electionQueued
	electionQueued bool
	busy           bool // on Cluster.busy
}

// node is one node's state.
type node struct {
	up             bool
	downAt, upAt   time.Duration
	leadsNoticed   bool // its crash was noticed and its leaderships given up
	transfersRound int
}

// Cluster is the model. It is not safe for concurrent use.
type Cluster struct {
	cfg   Config
	rng   *rand.Rand
	now   time.Duration
	nodes []node
	parts []partition
	// busy lists the partitions with an election or a transfer pending.
	busy []int
	// Counters.
	started, completed, failed, elections int
}

// New returns a model of nodes nodes (ids 0..nodes-1) holding placement
// (one replica list per partition, element 0 preferred), all up, each
// partition led by its preferred replica.
func New(cfg Config, nodes int, placement [][]uint8) *Cluster {
	c := &Cluster{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5851f42d4c957f2d))}
	c.nodes = make([]node, nodes)
	for i := range c.nodes {
		c.nodes[i].up = true
	}
	c.parts = make([]partition, len(placement))
	for i, l := range placement {
		p := &c.parts[i]
		for _, r := range l {
			p.prefs = append(p.prefs, replication.NodeID(r))
		}
		p.caughtUp = make([]time.Duration, len(l))
		p.leader = int(l[0])
		p.term = 1
	}
	return c
}

// Now returns the virtual time.
func (c *Cluster) Now() time.Duration { return c.now }

// Crash stops node n now; the others notice after an election timeout.
func (c *Cluster) Crash(n int) {
	c.nodes[n].up = false
	c.nodes[n].downAt = c.now
	c.nodes[n].leadsNoticed = false
}

// Restart starts node n again now: it is heard from after a heartbeat,
// and each of its replicas catches up a random while later.
func (c *Cluster) Restart(n int) {
	c.nodes[n].up = true
	c.nodes[n].upAt = c.now
	for i := range c.parts {
		p := &c.parts[i]
		if p.tried && p.triedTo == n && c.nodes[n].leadsNoticed {
			p.tried = false // the host ends a back-off when the node comes back
		}
		for k, r := range p.prefs {
			if int(r) == n {
				p.caughtUp[k] = c.now + c.cfg.Heartbeat + time.Duration(c.rng.Int64N(int64(c.cfg.CatchUp)+1))
			}
		}
		if p.leader == n {
			p.leader = none // it restarts as a follower
			c.scheduleElection(i)
		}
	}
}

// alive is the cluster's view of node n: a crash is noticed after an
// election timeout, a restart after a heartbeat.
func (c *Cluster) alive(n int) bool {
	nd := &c.nodes[n]
	if !nd.up {
		return c.now < nd.downAt+c.cfg.ElectionTimeout
	}
	return nd.upAt == 0 || c.now >= nd.upAt+c.cfg.Heartbeat
}

// Run advances virtual time by d, tick by tick.
func (c *Cluster) Run(d time.Duration) {
	for end := c.now + d; c.now < end; {
		c.now += c.cfg.Tick
		c.step()
	}
}

// step handles one tick: noticed crashes, elections, transfers ending,
// and on heartbeats the balancing round.
func (c *Cluster) step() {
	for n := range c.nodes {
		nd := &c.nodes[n]
		if !nd.up && !nd.leadsNoticed && !c.alive(n) {
			nd.leadsNoticed = true
			for i := range c.parts {
				if c.parts[i].leader == n {
					c.parts[i].leader = none
					c.scheduleElection(i)
				}
			}
		}
	}
	busy := c.busy[:0]
	for _, i := range c.busy {
		p := &c.parts[i]
		if p.leader == none && p.electionQueued && c.now >= p.electionAt {
			c.elect(p)
		}
		if p.transferring {
			switch {
			case c.now >= p.doneAt && c.nodes[p.to].up && p.leader != none && c.nodes[p.leader].up:
				p.leader, p.transferring = p.to, false
				p.term++
				c.completed++
			case c.now >= p.giveUp:
				p.transferring = false
				c.failed++
			}
		}
		if p.transferring || p.electionQueued {
			busy = append(busy, i)
		} else {
			p.busy = false
		}
	}
	c.busy = busy
	if c.now%c.cfg.Heartbeat == 0 {
		c.balance()
	}
}

// markBusy puts partition i on the list step looks at.
func (c *Cluster) markBusy(i int) {
	if p := &c.parts[i]; !p.busy {
		p.busy = true
		c.busy = append(c.busy, i)
	}
}

// scheduleElection makes a leaderless partition i elect within the next
// election timeout (as randomized raft timers would).
func (c *Cluster) scheduleElection(i int) {
	p := &c.parts[i]
	c.markBusy(i)
	p.electionQueued = true
	p.electionAt = c.now + c.cfg.Tick + time.Duration(c.rng.Int64N(int64(c.cfg.ElectionTimeout)))
	p.transferring = false
}

// elect makes a random live replica the leader when a majority of the
// replicas is up; otherwise it tries again after an election timeout.
func (c *Cluster) elect(p *partition) {
	var live []int
	for _, r := range p.prefs {
		if c.nodes[r].up && c.alive(int(r)) {
			live = append(live, int(r))
		}
	}
	if len(live) <= len(p.prefs)/2 {
		p.electionAt = c.now + c.cfg.ElectionTimeout
		return
	}
	p.leader = live[c.rng.IntN(len(live))]
	p.term++
	p.electionQueued = false
	c.elections++
}

// balance is one heartbeat round: every live leader applies
// replication.TransferTarget to each partition it leads that has no
// transfer under way, starting at most replication.MaxTransfersPerRound
// transfers.
func (c *Cluster) balance() {
	for n := range c.nodes {
		c.nodes[n].transfersRound = 0
	}
	backoff := replication.TransferBackoffElections * c.cfg.ElectionTimeout
	for i := range c.parts {
		p := &c.parts[i]
		l := p.leader
		if l == none || !c.nodes[l].up || p.transferring || c.nodes[l].transfersRound >= replication.MaxTransfersPerRound {
			continue
		}
		to, ok := replication.TransferTarget(replication.NodeID(l), p.prefs, func(m replication.NodeID) replication.Candidate {
			k := 0
			for p.prefs[k] != m {
				k++
			}
			return replication.Candidate{
				Alive: c.alive(int(m)),
				Voter: true,
				// A crashed replica still looks caught up (an idle
				// partition) until the crash is noticed: transfers to
				// it fail and back off.
				CaughtUp:  c.now >= p.caughtUp[k],
				BackedOff: p.tried && p.triedTo == int(m) && p.triedTerm == p.term && c.now < p.triedAt+backoff,
			}
		})
		if !ok {
			continue
		}
		c.nodes[l].transfersRound++
		c.started++
		c.markBusy(i)
		p.transferring, p.to = true, int(to)
		p.doneAt = c.now + c.cfg.Tick + time.Duration(c.rng.Int64N(int64(c.cfg.TransferDelay)))
		p.giveUp = c.now + c.cfg.ElectionTimeout
		p.tried, p.triedTo, p.triedTerm, p.triedAt = true, int(to), p.term, c.now
	}
}

// Leaders returns the number of partitions each node leads.
func (c *Cluster) Leaders() []int {
	out := make([]int, len(c.nodes))
	for i := range c.parts {
		if l := c.parts[i].leader; l != none {
			out[l]++
		}
	}
	return out
}

// Leaderless returns the number of partitions without a leader.
func (c *Cluster) Leaderless() int {
	n := 0
	for i := range c.parts {
		if c.parts[i].leader == none {
			n++
		}
	}
	return n
}

// Stats are the counts of a run.
type Stats struct {
	// TransfersStarted, TransfersCompleted and TransfersFailed count the
	// balancer's transfers; Elections counts leaders elected after a
	// crash or restart.
	TransfersStarted, TransfersCompleted, TransfersFailed, Elections int
}

// Stats returns the counts so far.
func (c *Cluster) Stats() Stats {
	return Stats{c.started, c.completed, c.failed, c.elections}
}
