package replication

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Propose appends data to group g's log through raft and returns its index
// once it is committed on a quorum and applied by this host's state
// machine. Only the leader admits proposals (raft's forwarding is off):
// elsewhere it fails at once with a *NotLeaderError. If ctx ends after
// the entry was admitted, or a leadership change replaces the entry in
// this node's log before it is stored, the error wraps ErrOutcomeUnknown:
// the entry may still commit. A context error without ErrOutcomeUnknown
// means it was never admitted (see Transient). An admitted entry is
// resolved only when its index applies, which needs a leader, so callers
// bound the wait with ctx.
func (h *Host) Propose(ctx context.Context, g GroupID, data []byte) (uint64, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("propose to group %d: empty entries are reserved for raft", g)
	}
	w := &waiter{done: make(chan result, 1)}
	if err := h.do(ctx, func() { h.admit(g, w, func(rn *raft.RawNode) error { return h.proposeData(h.groups[g], data) }) }); err != nil {
		return 0, fmt.Errorf("propose to group %d: %w", g, err)
	}
	r, err := h.await(ctx, w)
	if err != nil {
		return 0, fmt.Errorf("propose to group %d: %w", g, err)
	}
	return r.index, nil
}

// proposeData runs the group's Prepare hook, then proposes data. Runs on
// the loop.
func (h *Host) proposeData(grp *group, data []byte) error {
	if grp.prepare == nil {
		return grp.rn.Propose(data)
	}
	accepted, err := grp.prepare(data)
	if err != nil {
		return err
	}
	if err := grp.rn.Propose(data); err != nil {
		return err
	}
	accepted()
	return nil
}

// admit runs step (a proposal) on group g's RawNode if this node leads it.
// Runs on the loop.
func (h *Host) admit(g GroupID, w *waiter, step func(*raft.RawNode) error) {
	grp := h.groups[g]
	switch {
	case grp == nil:
		w.finish(result{err: ErrUnknownGroup})
		return
	case grp.state != raft.StateLeader:
		w.finish(result{err: h.notLeader(grp)})
		return
	}
	h.wake(grp)
	if err := step(grp.rn); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			err = ErrProposalDropped
		}
		w.finish(result{err: err})
		return
	}
	grp.admitted(w)
	h.markDirty(grp)
}

// await waits for w, turning a late cancellation into ErrOutcomeUnknown.
func (h *Host) await(ctx context.Context, w *waiter) (result, error) {
	select {
	case r := <-w.done:
		return r, r.err
	case <-ctx.Done():
		return result{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	case <-h.stopped:
		select {
		case r := <-w.done:
			return r, r.err
		default:
		}
		return result{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ErrStopped)
	}
}

// ChangeType is one kind of membership change.
type ChangeType uint8

// Membership changes.
const (
	// AddVoter adds a voting member (or promotes a learner).
	AddVoter ChangeType = iota + 1
	// AddLearner adds a non-voting member that receives the log; add new
	// nodes as learners first so their data arrives before they vote.
	AddLearner
	// Remove removes a member.
	Remove
)

// MemberChange is one change of a ChangeMembership call.
type MemberChange struct {
	Type ChangeType
	Node NodeID
}

// ChangeMembership proposes changes to group g as one ConfChangeV2. More
// than one change goes through joint consensus, left automatically by
// raft once the joint configuration commits. It returns the configuration
// after the change applied here (possibly still joint: watch View.Joint).
// Its errors mean what Propose's do (see Transient).
func (h *Host) ChangeMembership(ctx context.Context, g GroupID, changes []MemberChange) (*raftpb.ConfState, error) {
	cc := &raftpb.ConfChangeV2{Transition: raftpb.ConfChangeTransitionAuto.Enum()}
	for _, c := range changes {
		var t raftpb.ConfChangeType
		switch c.Type {
		case AddVoter:
			t = raftpb.ConfChangeAddNode
		case AddLearner:
			t = raftpb.ConfChangeAddLearnerNode
		case Remove:
			t = raftpb.ConfChangeRemoveNode
		default:
			return nil, fmt.Errorf("change membership of group %d: unknown change type %d", g, c.Type)
		}
		cc.Changes = append(cc.Changes, &raftpb.ConfChangeSingle{Type: t.Enum(), NodeId: new(raftID(c.Node))})
	}
	w := &waiter{done: make(chan result, 1)}
	if err := h.do(ctx, func() { h.admit(g, w, func(rn *raft.RawNode) error { return rn.ProposeConfChange(cc) }) }); err != nil {
		return nil, fmt.Errorf("change membership of group %d: %w", g, err)
	}
	r, err := h.await(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("change membership of group %d: %w", g, err)
	}
	return r.conf, nil
}
