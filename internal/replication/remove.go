package replication

import (
	"context"
	"fmt"
	"slices"
)

// RemoveMember takes node id out of group g's configuration (voter or
// learner) and returns once the configuration without it applied on this
// node. Run it on the group's leader (elsewhere it fails with a
// *NotLeaderError); a joint configuration in progress is waited out
// first, and a node that is no member is done at once (nil). A change
// raft ignored (another configuration change was still pending) fails
// with ErrProposalDropped. Unlike AddMember it does not check that the
// rest of the group keeps a quorum: the caller decides.
//
// Once it returned nil, the configurations committed from then on count
// nothing id acknowledged before: id may forget its log (a damaged
// replica is wiped and rebuilt) and be added back as a new learner.
func (h *Host) RemoveMember(ctx context.Context, g GroupID, id NodeID) error {
	if err := h.removeMember(ctx, g, id); err != nil {
		return fmt.Errorf("remove member %d from group %d: %w", id, g, err)
	}
	return nil
}

func (h *Host) removeMember(ctx context.Context, g GroupID, id NodeID) error {
	m, err := h.settledMembership(ctx, g, id)
	if err != nil {
		return err
	}
	if !m.voter && !m.learner {
		return nil
	}
	cs, err := h.ChangeMembership(ctx, g, []MemberChange{{Type: Remove, Node: id}})
	if err != nil {
		return err
	}
	rid := raftID(id)
	if slices.Contains(cs.GetVoters(), rid) || slices.Contains(cs.GetVotersOutgoing(), rid) ||
		slices.Contains(cs.GetLearners(), rid) || slices.Contains(cs.GetLearnersNext(), rid) {
		return fmt.Errorf("%w: raft ignored the change (another configuration change was pending)", ErrProposalDropped)
	}
	return nil
}
