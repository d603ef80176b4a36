package rebalance

import (
	"fmt"
	"slices"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
)

// actionKind is what the leader of a partition group does next to bring
// its membership in line with the placement.
type actionKind uint8

const (
	// actNone: the membership matches the placement.
	actNone actionKind = iota
	// actWait: something must happen elsewhere first (a member to come
	// back, a joint configuration to end).
	actWait
	// actAdd: add node as a learner, catch it up, promote it.
	actAdd
	// actRemove: remove node from the group.
	actRemove
	// actTransfer: this leader must leave; hand the leadership over.
	actTransfer
	// actCommit: every target member votes and nothing else is left:
	// commit the placement (Target, nil).
	actCommit
)

// action is the next step for one partition group.
type action struct {
	kind actionKind
	node replication.NodeID
	// why explains a wait (logged at debug level).
	why string
}

func (a action) String() string {
	switch a.kind {
	case actWait:
		return "wait: " + a.why
	case actAdd:
		return fmt.Sprintf("add replica %d", a.node)
	case actRemove:
		return fmt.Sprintf("remove replica %d", a.node)
	case actTransfer:
		return "hand the leadership over"
	case actCommit:
		return "commit the placement"
	}
	return "none"
}

// quorum is the majority of n voters.
func quorum(n int) int { return n/2 + 1 }

// decide returns the next step of the leader self of a partition group
// whose raft view is v, given the partition's placement pp, the members
// of the metadata group (the nodes still in the cluster) and the
// liveness of the nodes. It is pure: the Executor runs it while scanning
// and again, on fresh state, right before acting.
//
// The rules (package comment): wanted members (the Target during a
// move, else the Replicas) that are in the cluster, alive and not voters
// are added first; during a move nothing else happens before every
// target member in the cluster is a live voter. Then members that are
// not wanted or not in the cluster are removed, learners first and this
// leader last (it hands its leadership over instead), never leaving
// fewer live wanted voters than a quorum of the wanted list. Then a move
// is committed.
func decide(pp metadata.PartitionPlacement, v replication.View, members map[replication.NodeID]bool, alive func(replication.NodeID) bool, self replication.NodeID) action {
	if len(pp.Replicas) == 0 || v.Role != replication.RoleLeader {
		return action{kind: actNone}
	}
	if v.Joint {
		return action{kind: actWait, why: "a joint configuration is in progress"}
	}
	moving := len(pp.Target) > 0
	want := pp.Replicas
	if moving {
		want = pp.Target
	}
	isVoter := func(n replication.NodeID) bool { return slices.Contains(v.Voters, n) }
	ready := true
	var why string
	for _, r := range want {
		n := replication.NodeID(r)
		switch {
		case isVoter(n):
		case !members[n]:
			ready, why = false, fmt.Sprintf("replica %d is not in the cluster", n)
		case !alive(n):
			ready, why = false, fmt.Sprintf("replica %d is unreachable", n)
		default:
			return action{kind: actAdd, node: n}
		}
	}
	keep := func(n replication.NodeID) bool { return members[n] && slices.Contains(want, uint8(n)) }
	if moving {
		if !ready {
			return action{kind: actWait, why: why}
		}
		for _, r := range want {
			if n := replication.NodeID(r); !alive(n) {
				return action{kind: actWait, why: fmt.Sprintf("target replica %d is unreachable", n)}
			}
		}
	}
	// Extra members: learners first, then voters, this leader last.
	var extra []replication.NodeID
	for _, n := range v.Learners {
		if !keep(n) {
			extra = append(extra, n)
		}
	}
	leaving := false
	for _, n := range v.Voters {
		switch {
		case keep(n):
		case n == self:
			leaving = true
		default:
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		n := extra[0]
		live := 0
		for _, m := range v.Voters {
			if m != n && keep(m) && alive(m) {
				live++
			}
		}
		if live < quorum(len(want)) {
			return action{kind: actWait, why: fmt.Sprintf("removing replica %d would leave %d live voters of %v, below a quorum", n, live, want)}
		}
		return action{kind: actRemove, node: n}
	}
	if leaving {
		return action{kind: actTransfer}
	}
	if moving {
		return action{kind: actCommit}
	}
	if !ready {
		return action{kind: actWait, why: why}
	}
	return action{kind: actNone}
}
