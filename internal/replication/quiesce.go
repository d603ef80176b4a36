package replication

import (
	"errors"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// tick advances the raft clock of every active group, pings the peers
// and checks their liveness. Quiesced groups cost nothing here.
func (h *Host) tick() {
	h.ticks++
	if len(h.early) > 0 {
		h.expireEarly()
	}
	hb := uint64(h.cfg.Timing.HeartbeatTicks)
	h.checkPeers()
	if h.ticks%hb == 0 {
		for id := range h.peers {
			h.enqueue(id, transport.Envelope{Kind: transport.KindPing})
		}
		h.announce()
	}
	for _, g := range h.active {
		if g.campaignAt != 0 && h.ticks >= g.campaignAt {
			g.campaignAt = 0
			err := h.guard(g, g.rn.Campaign)
			if errors.Is(err, ErrLogLost) {
				h.fail(g, err) // raft panicked on its storage
				continue
			}
			if err != nil {
				h.log.Debug("campaign", "group", uint64(g.id), "err", err)
			}
		}
		if g.holdTicks > 0 {
			g.holdTicks--
			h.markDirty(g)
			continue
		}
		// A tick may campaign, which reads the log: a failed log panics
		// raft, and only this group stops.
		if err := h.guard(g, func() error { g.rn.Tick(); return nil }); err != nil {
			h.fail(g, err)
			continue
		}
		h.stats.ticks.Add(1)
		if g.state == raft.StateLeader {
			g.checkQuiesce = true
		}
		h.markDirty(g)
	}
	if h.cfg.FollowLeader && h.ticks%hb == 0 {
		h.followLeader()
	}
	if h.cfg.Preference != nil && h.ticks%hb == 0 {
		h.balanceLeaders()
	}
}

// knowPeer starts pinging n if it is new.
func (h *Host) knowPeer(n NodeID) {
	if n == h.cfg.Self {
		return
	}
	if _, ok := h.peers[n]; !ok {
		h.peers[n] = &peerState{lastHeard: h.ticks, alive: true}
	}
}

// heard records traffic from a peer.
func (h *Host) heard(from NodeID) {
	ps := h.peers[from]
	if ps == nil {
		ps = &peerState{alive: true}
		h.peers[from] = ps
	}
	ps.lastHeard = h.ticks
	if !ps.alive {
		ps.alive = true
		h.log.Info("replica peer is back", "peer", uint64(from))
		h.peerUp(from)
	}
}

func (h *Host) alive(n NodeID) bool {
	if n == h.cfg.Self {
		return true
	}
	ps := h.peers[n]
	return ps != nil && ps.alive
}

// checkPeers marks peers silent for an election timeout as dead.
func (h *Host) checkPeers() {
	limit := uint64(h.cfg.Timing.ElectionTicks)
	for id, ps := range h.peers {
		if ps.alive && h.ticks-ps.lastHeard >= limit {
			ps.alive = false
			h.log.Info("replica peer is silent", "peer", uint64(id), "ticks", h.ticks-ps.lastHeard)
			h.peerDown(id)
		}
	}
}

// peerDown resets the connection to the dead peer (Resetter: nothing
// written to it may arrive late), fails the calls waiting for its reply, forgets
// its leaderships (directory.go) and wakes every quiesced group it
// belongs to. In the
// groups it led, every follower forgets it (so it grants pre-votes at
// once) and the lowest-numbered live voter campaigns two ticks later
// (the pause lets the other survivors notice the silence too); the others
// hold their election timer for one election timeout, so their own
// campaigns (the fallback) do not split the vote. Like the
// reference's "next view's primary is view % n", this picks one
// candidate deterministically and avoids split votes.
func (h *Host) peerDown(n NodeID) {
	// The calls to n fail now; what was written for them (and anything
	// else) must not reach n later, when it is heard from again.
	if r, ok := h.cfg.Network.(Resetter); ok {
		r.Reset(n)
	}
	h.calls.failPeer(n, ErrCallLost)
	h.dir.forget(n)
	for _, g := range h.groups {
		if !g.members[n] {
			continue
		}
		if g.quiesced {
			h.wake(g)
		}
		if g.lead == raftID(n) && g.state == raft.StateFollower {
			if err := g.rn.ForgetLeader(); err != nil {
				h.log.Debug("forget leader", "group", uint64(g.id), "err", err)
			}
			if h.candidate(g, n) {
				g.campaignAt = h.ticks + 2
			} else {
				g.holdTicks = h.cfg.Timing.ElectionTicks
			}
		}
		h.markDirty(g)
	}
}

// candidate reports whether this node is the live voter of g other than
// dead that campaigns first: the lowest-numbered one, or with
// Config.Preference the first of the group's preferred order.
func (h *Host) candidate(g *group, dead NodeID) bool {
	voters := make([]NodeID, 0, len(g.confState.GetVoters()))
	for _, id := range g.confState.GetVoters() {
		voters = append(voters, nodeID(id))
	}
	c, ok := h.firstCandidate(g.id, voters, func(v NodeID) bool { return v == dead || !h.alive(v) })
	return ok && c == h.cfg.Self
}

// peerUp wakes the quiesced groups this node leads that include n, so a
// returning (possibly restarted) peer is caught up at once, and ends the
// balancer's back-off from n: it failed to take over before it went; the
// peer gets this host's full leadership table, and is asked for its own
// (peerDown forgot its claims).
func (h *Host) peerUp(n NodeID) {
	h.dir.markResync(n)
	h.requestTable(n)
	for _, g := range h.leading {
		if g.transfer.to == n {
			g.transfer = transferAttempt{}
		}
		if g.quiesced && g.members[n] {
			h.wake(g)
			h.markDirty(g)
		}
	}
}

// wake makes a quiesced group tick again.
func (h *Host) wake(g *group) {
	g.quietTicks = 0
	if !g.quiesced {
		return
	}
	g.quiesced = false
	h.active[g.id] = g
	h.stats.active.Add(1)
}

func (h *Host) quiesce(g *group) {
	if g.quiesced {
		return
	}
	g.quiesced = true
	g.quietTicks = 0
	h.dirDirty(g.id) // its claim is not recomputed while it is quiet
	delete(h.active, g.id)
	h.stats.active.Add(-1)
}

// evaluateQuiesce runs after a group's Ready work: a leader counts quiet
// ticks and quiesces; a follower honours a pending quiesce request.
func (h *Host) evaluateQuiesce(g *group) {
	if h.cfg.DisableQuiescence {
		g.quiesceReq = nil
		return
	}
	if m := g.quiesceReq; m != nil {
		g.quiesceReq = nil
		st := g.rn.BasicStatus()
		if st.RaftState == raft.StateFollower && st.Lead == m.GetFrom() && st.GetTerm() == m.GetTerm() &&
			st.GetCommit() == m.GetCommit() && g.applied == st.GetCommit() && !g.rn.HasReady() {
			h.quiesce(g)
		}
	}
	if g.checkQuiesce {
		g.checkQuiesce = false
		h.leaderQuiesce(g)
	}
}

// leaderQuiesce quiesces a leader whose group is idle: no transfer or
// joint configuration in progress, nothing pending, every member alive
// and holding the whole log, all of it committed and applied. It waits
// one heartbeat interval more than that, so a heartbeat carrying the
// final commit index has gone out before followers are asked to stop.
func (h *Host) leaderQuiesce(g *group) {
	st := g.rn.BasicStatus()
	if st.RaftState != raft.StateLeader || st.LeadTransferee != raft.None || len(g.pending) > 0 ||
		len(g.proposed) > 0 || g.applied != st.GetCommit() || len(g.confState.GetVotersOutgoing()) > 0 || h.mustTransfer(g) {
		g.quietTicks = 0
		return
	}
	last, err := g.storage.LastIndex()
	if err != nil || last != st.GetCommit() {
		g.quietTicks = 0
		return
	}
	idle := true
	g.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pr.Match != last || !h.alive(nodeID(id)) {
			idle = false
		}
	})
	if !idle {
		g.quietTicks = 0
		return
	}
	g.quietTicks++
	if g.quietTicks <= h.cfg.Timing.HeartbeatTicks {
		return
	}
	for n := range g.members {
		if n == h.cfg.Self {
			continue
		}
		h.enqueue(n, transport.Envelope{Group: uint64(g.id), Kind: transport.KindQuiesce, Msg: &raftpb.Message{
			Type: raftpb.MsgHeartbeat.Enum(), From: new(raftID(h.cfg.Self)), To: new(raftID(n)),
			Term: new(st.GetTerm()), Commit: new(st.GetCommit()),
		}})
	}
	h.quiesce(g)
	h.publish(g)
}
