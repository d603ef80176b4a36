package replication

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
)

// Role is a node's raft role in a group.
type Role uint8

// Roles.
const (
	RoleFollower Role = iota
	RoleCandidate
	RoleLeader
	RolePreCandidate
)

// String names the role.
func (r Role) String() string {
	switch r {
	case RoleLeader:
		return "leader"
	case RoleCandidate:
		return "candidate"
	case RolePreCandidate:
		return "pre-candidate"
	}
	return "follower"
}

func roleOf(s raft.StateType) Role {
	switch s {
	case raft.StateLeader:
		return RoleLeader
	case raft.StateCandidate:
		return RoleCandidate
	case raft.StatePreCandidate:
		return RolePreCandidate
	}
	return RoleFollower
}

// View is what this host knows about one group, as last published by the
// loop. Term, Commit and Applied are the values the broker puts in the
// reply header's view, op and commit fields.
type View struct {
	Leader    NodeID
	HasLeader bool
	Role      Role
	Term      uint64
	Commit    uint64
	Applied   uint64
	// Readable is true on a leader that has applied an entry of its own
	// term: raft commits no entry of a term before every entry committed
	// in earlier terms, so this node's state machine then holds every
	// write any leader acknowledged, and reads served from it see them.
	// A node that just became leader (its log holds those entries, but
	// it may not have applied them yet) is not Readable until the empty
	// entry raft appends for its term has applied here.
	Readable bool
	// Quiesced is true while the group does not tick.
	Quiesced bool
	// Voters and Learners are the current configuration; Joint is true
	// while a joint-consensus change is in progress (VotersOutgoing set).
	Voters, Learners []NodeID
	Joint            bool
}

func (v View) equal(o View) bool {
	return v.Leader == o.Leader && v.HasLeader == o.HasLeader && v.Role == o.Role && v.Term == o.Term &&
		v.Commit == o.Commit && v.Applied == o.Applied && v.Readable == o.Readable && v.Quiesced == o.Quiesced && v.Joint == o.Joint &&
		slices.Equal(v.Voters, o.Voters) && slices.Equal(v.Learners, o.Learners)
}

func nodes(ids []uint64) []NodeID {
	out := make([]NodeID, 0, len(ids))
	for _, id := range ids {
		out = append(out, nodeID(id))
	}
	slices.Sort(out)
	return out
}

// publish recomputes g's view and, when it changed, stores it and wakes
// the callers waiting for g (only those: a commit in one partition's
// group does not wake a waiter on another group, and with nobody
// waiting a change costs no allocation).
func (h *Host) publish(g *group) {
	st := g.rn.BasicStatus()
	v := View{
		HasLeader: st.Lead != raft.None,
		Role:      roleOf(st.RaftState),
		Term:      st.GetTerm(),
		Commit:    st.GetCommit(),
		Applied:   g.applied,
		Readable:  st.RaftState == raft.StateLeader && g.appliedTerm == st.GetTerm(),
		Quiesced:  g.quiesced,
		Joint:     len(g.confState.GetVotersOutgoing()) > 0,
	}
	if v.HasLeader {
		v.Leader = nodeID(st.Lead)
	}
	if g.hasView && g.viewConf == g.confVersion {
		v.Voters, v.Learners = g.view.Voters, g.view.Learners
	} else {
		v.Voters, v.Learners = nodes(g.confState.GetVoters()), nodes(g.confState.GetLearners())
		g.viewConf = g.confVersion
	}
	if g.hasView && v.equal(g.view) {
		return
	}
	g.view, g.hasView = v, true
	h.viewMu.Lock()
	h.views[g.id] = v
	h.notifyLocked(g.id)
	h.viewMu.Unlock()
}

// notifyLocked wakes everyone waiting for a change of group g's view.
// Caller holds viewMu for writing.
func (h *Host) notifyLocked(g GroupID) {
	if ch, ok := h.viewWaits[g]; ok {
		close(ch)
		delete(h.viewWaits, g)
	}
}

// viewWait returns group g's view and the channel closed at its next
// change.
func (h *Host) viewWait(g GroupID) (View, bool, chan struct{}) {
	h.viewMu.Lock()
	defer h.viewMu.Unlock()
	v, ok := h.views[g]
	ch, waiting := h.viewWaits[g]
	if !waiting {
		ch = make(chan struct{})
		h.viewWaits[g] = ch
	}
	return v, ok, ch
}

// Status returns the published view of group g.
func (h *Host) Status(g GroupID) (View, bool) {
	h.viewMu.RLock()
	defer h.viewMu.RUnlock()
	v, ok := h.views[g]
	return v, ok
}

// Leader returns the leader of group g as this node knows it (false while
// unknown, as GET_CLUSTER_METADATA then reports no leader).
func (h *Host) Leader(g GroupID) (NodeID, bool) {
	v, ok := h.Status(g)
	return v.Leader, ok && v.HasLeader
}

// AwaitReadable returns nil once this node leads group g and has applied
// an entry of its own term (View.Readable), waiting at most within (and
// while ctx lasts). A Readable group costs one view lookup: no context or
// timer is made unless it has to wait.
func (h *Host) AwaitReadable(ctx context.Context, g GroupID, within time.Duration) error {
	if v, ok := h.Status(g); ok && v.Readable {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	_, err := h.WaitFor(ctx, g, func(v View) bool { return v.Readable })
	return err
}

// WaitFor blocks until cond holds for group g's view, ctx ends or the host
// stops.
func (h *Host) WaitFor(ctx context.Context, g GroupID, cond func(View) bool) (View, error) {
	h.viewMu.RLock()
	v, ok := h.views[g]
	h.viewMu.RUnlock()
	if ok && cond(v) {
		return v, nil // the common case: no wait channel made
	}
	for {
		v, ok, ch := h.viewWait(g)
		if ok && cond(v) {
			return v, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v, fmt.Errorf("group %d: %w", g, ctx.Err())
		case <-h.done:
			return v, ErrStopped
		}
	}
}
