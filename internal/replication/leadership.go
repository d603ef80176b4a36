package replication

import (
	"context"
	"fmt"

	"go.etcd.io/raft/v3"
)

// followTarget returns the leader of the FollowGroup when this host should
// hand its other groups to it.
func (h *Host) followTarget() (NodeID, bool) {
	if !h.cfg.FollowLeader {
		return 0, false
	}
	a := h.groups[h.cfg.FollowGroup]
	if a == nil || a.lead == raft.None {
		return 0, false
	}
	t := nodeID(a.lead)
	if t == h.cfg.Self || !h.alive(t) {
		return 0, false
	}
	return t, true
}

// mustTransfer reports whether g is led here but should follow the
// metadata leader elsewhere, or be handed to its preferred leader.
func (h *Host) mustTransfer(g *group) bool {
	if h.cfg.Preference != nil {
		_, ok := h.balanceTarget(g)
		return ok
	}
	t, ok := h.followTarget()
	return ok && g.id != h.cfg.FollowGroup && g.isVoter(t)
}

// followLeader starts leadership transfers of the groups this host leads
// to the leader of the FollowGroup (partition groups follow the metadata
// leader), a bounded number per heartbeat interval.
func (h *Host) followLeader() {
	t, ok := h.followTarget()
	if !ok {
		return
	}
	n := 0
	for _, g := range h.leading {
		if g.id == h.cfg.FollowGroup || !g.isVoter(t) || g.rn.BasicStatus().LeadTransferee != raft.None {
			continue
		}
		h.wake(g)
		g.rn.TransferLeader(raftID(t))
		h.markDirty(g)
		if n++; n >= maxTransfersPerRound {
			return
		}
	}
}

// TransferLeadership asks this node's leadership of group g to move to
// node to and waits until to leads it or ctx ends.
func (h *Host) TransferLeadership(ctx context.Context, g GroupID, to NodeID) error {
	errc := make(chan error, 1)
	if err := h.do(ctx, func() {
		grp := h.groups[g]
		switch {
		case grp == nil:
			errc <- fmt.Errorf("transfer group %d: %w", g, ErrUnknownGroup)
		case grp.state != raft.StateLeader:
			errc <- h.notLeader(grp)
		default:
			h.wake(grp)
			grp.rn.TransferLeader(raftID(to))
			h.markDirty(grp)
			errc <- nil
		}
	}); err != nil {
		return fmt.Errorf("transfer group %d: %w", g, err)
	}
	if err := <-errc; err != nil {
		return err
	}
	_, err := h.WaitFor(ctx, g, func(v View) bool { return v.HasLeader && v.Leader == to })
	return err
}

func (h *Host) notLeader(g *group) error {
	e := &NotLeaderError{Group: g.id}
	if g.lead != raft.None {
		e.Leader, e.HasLeader = nodeID(g.lead), true
	}
	return e
}

// Progress returns, on the leader of group g, the highest log index known
// to be replicated on each member (raft's Match), and the leader's own
// last index. Elsewhere it fails with a *NotLeaderError.
func (h *Host) Progress(ctx context.Context, g GroupID) (match map[NodeID]uint64, last uint64, err error) {
	type progress struct {
		match map[NodeID]uint64
		last  uint64
	}
	p, err := onLeader(ctx, h, g, func(grp *group) progress {
		st := grp.rn.Status()
		m := make(map[NodeID]uint64, len(st.Progress))
		for id, pr := range st.Progress {
			m[nodeID(id)] = pr.Match
		}
		return progress{match: m, last: st.Progress[raftID(h.cfg.Self)].Match}
	})
	if err != nil {
		return nil, 0, fmt.Errorf("progress of group %d: %w", g, err)
	}
	return p.match, p.last, nil
}

// onLeader runs fn with group g on the loop when this node leads g and
// returns what it returns; otherwise it fails with ErrUnknownGroup or a
// *NotLeaderError.
func onLeader[T any](ctx context.Context, h *Host, g GroupID, fn func(*group) T) (T, error) {
	type res struct {
		v   T
		err error
	}
	c := make(chan res, 1)
	if err := h.do(ctx, func() {
		grp := h.groups[g]
		switch {
		case grp == nil:
			c <- res{err: ErrUnknownGroup}
		case grp.state != raft.StateLeader:
			c <- res{err: h.notLeader(grp)}
		default:
			c <- res{v: fn(grp)}
		}
	}); err != nil {
		var zero T
		return zero, err
	}
	r := <-c
	return r.v, r.err
}

// Groups lists the ids of the groups on this host.
func (h *Host) Groups() []GroupID {
	h.viewMu.RLock()
	defer h.viewMu.RUnlock()
	out := make([]GroupID, 0, len(h.views))
	for id := range h.views {
		out = append(out, id)
	}
	return out
}
