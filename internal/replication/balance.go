package replication

import (
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// Leader balancing ("spread" partition leaders): with Config.Preference
// set, every heartbeat interval each host hands the groups it leads to
// their preferred leader, at most MaxTransfersPerRound per round.

// MaxTransfersPerRound bounds the leadership transfers a host starts per
// heartbeat interval, following the metadata leader or balancing.
const MaxTransfersPerRound = maxTransfersPerRound

// TransferBackoffElections is how many election timeouts a leader waits,
// after starting a transfer to a node that did not take over, before it
// tries that node for the same group again (unless the node is declared
// dead and comes back meanwhile, or the term changes).
const TransferBackoffElections = 10

// Candidate is what the leader of a group knows of one member when it
// decides whether to hand leadership over (TransferTarget).
type Candidate struct {
	// Alive: the host hears from the member's node.
	Alive bool
	// Voter: the member votes in the group (a learner cannot lead).
	Voter bool
	// CaughtUp: the member holds every committed entry of the group, so
	// a transfer completes within a round trip instead of holding
	// proposals back while it catches up.
	CaughtUp bool
	// BackedOff: a transfer to the member started less than
	// TransferBackoffElections election timeouts ago, in the current
	// term, and did not complete.
	BackedOff bool
}

// TransferTarget is the balancer's decision for one group led by self
// with preferred replica order replicas (element 0 first): the preferred
// leader is the first member that is self, or alive, a voter and not
// backed off. When that is self, or when it has not caught up yet (the
// leader waits for it rather than handing over twice), there is nothing
// to do; otherwise it is the node to transfer to. A list without any
// such member (nil: no preference) also means nothing to do. member is
// asked about the members before the preferred one and about it, in
// list order, and about nobody else.
func TransferTarget(self NodeID, replicas []NodeID, member func(NodeID) Candidate) (NodeID, bool) {
	for _, n := range replicas {
		if n == self {
			return 0, false
		}
		c := member(n)
		if !c.Alive || !c.Voter || c.BackedOff {
			continue
		}
		if !c.CaughtUp {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// transferAttempt is the last transfer the balancer started in a group.
type transferAttempt struct {
	to         NodeID
	term, tick uint64
	set        bool
}

// balanceTarget applies TransferTarget to group g, which this host
// leads, when no transfer is under way in it.
func (h *Host) balanceTarget(g *group) (NodeID, bool) {
	st := g.rn.BasicStatus()
	if st.RaftState != raft.StateLeader || st.LeadTransferee != raft.None {
		return 0, false
	}
	prefs := h.cfg.Preference(g.id)
	if len(prefs) == 0 {
		return 0, false
	}
	backoff := uint64(TransferBackoffElections * h.cfg.Timing.ElectionTicks)
	return TransferTarget(h.cfg.Self, prefs, func(n NodeID) Candidate {
		c := Candidate{Alive: h.alive(n), Voter: g.isVoter(n)}
		a := g.transfer
		c.BackedOff = a.set && a.to == n && a.term == st.GetTerm() && h.ticks < a.tick+backoff
		if c.Alive && c.Voter && !c.BackedOff {
			c.CaughtUp = caughtUp(g, n, st.GetCommit())
		}
		return c
	})
}

// caughtUp reports whether member n of g, which this host leads, holds
// every committed entry (raft's Match at least the commit index). Under
// load a follower's Match trails the leader's last index by the appends
// in flight; raft completes the transfer once it has those.
func caughtUp(g *group, n NodeID, commit uint64) bool {
	ok := false
	g.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id == raftID(n) {
			ok = pr.Match >= commit
		}
	})
	return ok
}

// balanceLeaders starts the transfers of the groups this host leads to
// their preferred leaders, a bounded number per heartbeat interval.
func (h *Host) balanceLeaders() {
	n := 0
	for _, g := range h.leading {
		to, ok := h.balanceTarget(g)
		if !ok {
			continue
		}
		h.wake(g)
		g.transfer = transferAttempt{to: to, term: g.rn.BasicStatus().GetTerm(), tick: h.ticks, set: true}
		g.rn.TransferLeader(raftID(to))
		h.markDirty(g)
		if n++; n >= maxTransfersPerRound {
			return
		}
	}
}

// firstCandidate returns the voter of group id that campaigns first,
// among voters not skipped (skip may be nil): with a preference the first
// such member of the group's list, otherwise (or when the list has none)
// the lowest-numbered such voter. It reports false when there is none.
func (h *Host) firstCandidate(id GroupID, voters []NodeID, skip func(NodeID) bool) (NodeID, bool) {
	ok := func(v NodeID) bool { return (skip == nil || !skip(v)) && slices.Contains(voters, v) }
	if h.cfg.Preference != nil {
		for _, p := range h.cfg.Preference(id) {
			if ok(p) {
				return p, true
			}
		}
	}
	best, found := NodeID(0), false
	for _, v := range voters {
		if ok(v) && (!found || v < best) {
			best, found = v, true
		}
	}
	return best, found
}
