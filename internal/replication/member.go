package replication

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// catchUpPoll is how often AddMember checks a learner's progress.
const catchUpPoll = 50 * time.Millisecond

// AddMember makes node id a voter of group g without letting it vote
// before it holds the log: it adds id as a learner, waits until the
// learner holds the leader's log up to the leader's last index as of the
// add, then promotes it. Run it on the group's leader (elsewhere it fails
// with a *NotLeaderError); a joint configuration in progress is waited
// out first. It is idempotent: a voter already is done (nil), and a
// learner already is not added again, only caught up and promoted.
//
// If ctx ends while the learner catches up, the error wraps
// ErrOutcomeUnknown and ctx's error: id stays a learner, and calling
// AddMember again finishes the promotion. A change raft ignored (another
// configuration change was still pending) fails with ErrProposalDropped.
// Other errors are those of ChangeMembership and Progress (see Transient).
func (h *Host) AddMember(ctx context.Context, g GroupID, id NodeID) error {
	if err := h.addMember(ctx, g, id); err != nil {
		return fmt.Errorf("add member %d to group %d: %w", id, g, err)
	}
	return nil
}

func (h *Host) addMember(ctx context.Context, g GroupID, id NodeID) error {
	m, err := h.settledMembership(ctx, g, id)
	if err != nil {
		return err
	}
	if m.voter {
		return nil
	}
	if !m.learner {
		cs, err := h.ChangeMembership(ctx, g, []MemberChange{{Type: AddLearner, Node: id}})
		if err != nil {
			return fmt.Errorf("add learner: %w", err)
		}
		if !slices.Contains(cs.GetLearners(), raftID(id)) && !slices.Contains(cs.GetLearnersNext(), raftID(id)) {
			return fmt.Errorf("add learner: %w: raft ignored the change (another configuration change was pending)", ErrProposalDropped)
		}
	}
	if err := h.catchUp(ctx, g, id); err != nil {
		return err
	}
	cs, err := h.ChangeMembership(ctx, g, []MemberChange{{Type: AddVoter, Node: id}})
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	if !slices.Contains(cs.GetVoters(), raftID(id)) {
		return fmt.Errorf("promote: %w: raft ignored the change (another configuration change was pending)", ErrProposalDropped)
	}
	return nil
}

// catchUp waits until learner id holds group g's log up to the leader's
// last index as of the call.
func (h *Host) catchUp(ctx context.Context, g GroupID, id NodeID) error {
	// id is a learner by now: a wait that ctx ends leaves the change
	// unfinished, whichever call it ends in.
	ended := func(at, target uint64) error {
		return fmt.Errorf("%w: learner did not catch up to index %d (at %d): %w", ErrOutcomeUnknown, target, at, ctx.Err())
	}
	_, target, err := h.Progress(ctx, g)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the learner's catch-up was not awaited: %w", ErrOutcomeUnknown, ctx.Err())
		}
		return err
	}
	tick := time.NewTicker(catchUpPoll)
	defer tick.Stop()
	var at uint64
	for {
		match, _, err := h.Progress(ctx, g)
		if err != nil {
			if ctx.Err() != nil {
				return ended(at, target)
			}
			return err
		}
		if at = match[id]; at >= target {
			return nil
		}
		select {
		case <-ctx.Done():
			return ended(at, target)
		case <-tick.C:
		}
	}
}

// membership is what AddMember needs to know of a node in a group.
type membership struct {
	voter, learner, joint bool
}

// membership reads node id's place in group g on the loop; it fails
// unless this node leads g.
func (h *Host) membership(ctx context.Context, g GroupID, id NodeID) (membership, error) {
	return onLeader(ctx, h, g, func(grp *group) membership {
		cs, rid := grp.confState, raftID(id)
		return membership{
			voter:   slices.Contains(cs.GetVoters(), rid),
			learner: slices.Contains(cs.GetLearners(), rid) || slices.Contains(cs.GetLearnersNext(), rid),
			joint:   len(cs.GetVotersOutgoing()) > 0,
		}
	})
}

// settledMembership is id's membership of group g once no joint
// configuration is in progress (or this node no longer leads g).
func (h *Host) settledMembership(ctx context.Context, g GroupID, id NodeID) (membership, error) {
	m, err := h.membership(ctx, g, id)
	if err != nil || !m.joint {
		return m, err
	}
	if _, err := h.WaitFor(ctx, g, func(v View) bool { return !v.Joint || v.Role != RoleLeader }); err != nil {
		return m, fmt.Errorf("wait for the joint configuration to end: %w", err)
	}
	return h.membership(ctx, g, id)
}
