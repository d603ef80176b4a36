package replicated

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Rebuilder is what a Set needs of the replication host, beyond
// Replicator, to rebuild a damaged replica from its peers (rebuild.go).
// A Replicator that does not provide it keeps a damaged replica stopped.
type Rebuilder interface {
	// LeaderOf is the leader of group g as this node knows it, also for
	// groups it does not run (Host.LeaderOf).
	LeaderOf(g replication.GroupID) (replication.NodeID, bool)
	// Status is this node's view of group g (Host.Status).
	Status(g replication.GroupID) (replication.View, bool)
	// RemoveMember and TransferLeadership are Host's.
	RemoveMember(ctx context.Context, g replication.GroupID, id replication.NodeID) error
	TransferLeadership(ctx context.Context, g replication.GroupID, to replication.NodeID) error
	// Peers is the liveness of the other nodes (Host.Peers).
	Peers(ctx context.Context) (map[replication.NodeID]replication.Peer, error)
	// Leave sends a leave call (leave_codec.go) to node to and returns
	// its reply; the callee runs Set.ServeLeave.
	Leave(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error)
}

// ErrNoRebuild: the Set's Replicator cannot rebuild a replica.
var ErrNoRebuild = errors.New("partition: this node cannot rebuild a replica (no Rebuilder)")

// Back-off between attempts to leave a group.
const (
	leaveRetryMin = 200 * time.Millisecond
	leaveRetryMax = time.Second
	// leaveCallTimeout bounds one leave call: the leader's membership
	// change commits in a round trip unless a quorum is missing.
	leaveCallTimeout = 10 * time.Second
)

func (s *Set) rebuilder() (Rebuilder, bool) {
	rb, ok := s.r.(Rebuilder)
	return rb, ok
}

// CanRebuild reports whether a damaged replica can be rebuilt from its
// peers here.
func (s *Set) CanRebuild() bool {
	_, ok := s.rebuilder()
	return ok
}

// Leave takes this node's replica of partition id of t out of its group:
// if it leads the group it hands the leadership to another voter first;
// while the group runs here it waits until the other voters are a live
// quorum without it (a replica that still takes part does not take the
// partition down with it); then it stops the group here (its files are
// closed) and asks the group's leader, again until it succeeds or ctx
// ends, to remove this node from the group's raft configuration (the
// leader refuses too while the members left would have no live quorum). It returns the leader that
// confirmed the removal and the raft index as of which this node was no
// member there (a configuration at or after it that lists this node as a
// voter added it back). Only once Leave returned nil may the replica's
// files (segments and raft log) be wiped: raft forbids a member to forget
// entries it acknowledged, and a non-member has none the group counts.
func (s *Set) Leave(ctx context.Context, t catalog.TopicRef, id uint32) (replication.NodeID, uint64, error) {
	rb, ok := s.rebuilder()
	if !ok {
		return 0, 0, ErrNoRebuild
	}
	g := GroupID(t, id)
	self := s.r.Self()
	if err := s.handOff(ctx, rb, g, self); err != nil {
		return 0, 0, err
	}
	if err := s.awaitLiveQuorum(ctx, rb, g, self); err != nil {
		return 0, 0, err
	}
	s.Drop(t, []uint32{id})
	if err := s.flushOps(ctx); err != nil {
		return 0, 0, err
	}
	wait := leaveRetryMin
	var last error
	for {
		leader, index, err := s.askLeave(ctx, rb, g, self)
		if err == nil {
			return leader, index, nil
		}
		if !errors.Is(err, errLeaveRetry) || last == nil || last.Error() != err.Error() {
			s.log.Info("partition replica waits to leave its group", "group", uint64(g), "err", err)
		}
		last = err
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("leave group %d: %w (last: %w)", g, ctx.Err(), last)
		case <-time.After(wait):
		}
		wait = min(2*wait, leaveRetryMax)
	}
}

// errLeaveRetry marks a leave attempt worth repeating.
var errLeaveRetry = errors.New("retry")

// askLeave makes one leave call to the leader this node knows of g.
func (s *Set) askLeave(ctx context.Context, rb Rebuilder, g replication.GroupID, self replication.NodeID) (replication.NodeID, uint64, error) {
	leader, ok := rb.LeaderOf(g)
	if !ok {
		return 0, 0, fmt.Errorf("%w: no leader known", errLeaveRetry)
	}
	if leader == self {
		return 0, 0, fmt.Errorf("%w: this node's directory still names itself", errLeaveRetry)
	}
	cctx, cancel := context.WithTimeout(ctx, leaveCallTimeout)
	defer cancel()
	b, err := rb.Leave(cctx, leader, encodeLeaveRequest(g))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: call replica %d: %w", errLeaveRetry, leader, err)
	}
	r, err := decodeLeaveReply(b)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: replica %d: %w", errLeaveRetry, leader, err)
	}
	if r.outcome != leaveDone {
		return 0, 0, fmt.Errorf("%w: replica %d does not lead the group", errLeaveRetry, leader)
	}
	return leader, r.index, nil
}

// handOff transfers the leadership of g away from this node when it
// leads g, to another voter, trying each in turn until one leads.
func (s *Set) handOff(ctx context.Context, rb Rebuilder, g replication.GroupID, self replication.NodeID) error {
	wait := leaveRetryMin
	for {
		v, ok := rb.Status(g)
		if !ok || v.Role != replication.RoleLeader {
			return nil
		}
		for _, n := range v.Voters {
			if n == self {
				continue
			}
			tctx, cancel := context.WithTimeout(ctx, leaveCallTimeout)
			err := rb.TransferLeadership(tctx, g, n)
			cancel()
			if err == nil {
				return nil
			}
			s.log.Info("partition replica could not hand its leadership over", "group", uint64(g), "to", uint64(n), "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hand the leadership of group %d over: %w", g, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, leaveRetryMax)
	}
}

// awaitLiveQuorum waits, while group g runs here, until its voters other
// than self are a live quorum of themselves.
func (s *Set) awaitLiveQuorum(ctx context.Context, rb Rebuilder, g replication.GroupID, self replication.NodeID) error {
	wait := leaveRetryMin
	logged := false
	for {
		v, ok := rb.Status(g)
		if !ok || !slices.Contains(v.Voters, self) {
			return nil
		}
		peers, err := rb.Peers(ctx)
		if err != nil {
			return err
		}
		live, rest := 0, len(v.Voters)-1
		for _, n := range v.Voters {
			if n != self && peers[n].Alive {
				live++
			}
		}
		if rest > 0 && live >= rest/2+1 {
			return nil
		}
		if !logged {
			s.log.Warn("damaged partition replica keeps taking part in its group until enough other replicas are live", "group", uint64(g), "live", live, "others", rest)
			logged = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a live quorum of group %d without this node: %w", g, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, leaveRetryMax)
	}
}

// flushOps waits until the lifecycle operations queued so far (a group
// removal) have run.
func (s *Set) flushOps(ctx context.Context) error {
	done := make(chan struct{})
	s.ops.push(func(context.Context) { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the group's removal: %w", ctx.Err())
	}
}

// ServeLeave answers a leave call from node from (leave_codec.go) on the
// leader of the group it names: from is removed from the group's
// configuration unless that would leave the voters without a quorum of
// live members. It answers leaveDone once from is no member in the
// configuration this leader applied.
func (s *Set) ServeLeave(ctx context.Context, from replication.NodeID, payload []byte) ([]byte, error) {
	rb, ok := s.rebuilder()
	if !ok {
		return nil, ErrNoRebuild
	}
	g, err := decodeLeaveRequest(payload)
	if err != nil {
		return nil, err
	}
	v, ok := rb.Status(g)
	if !ok || v.Role != replication.RoleLeader {
		l, has := rb.LeaderOf(g)
		return encodeLeaveReply(leaveReply{outcome: leaveNotLeader, leader: l, hasLeader: has}), nil
	}
	if from == s.r.Self() {
		return nil, fmt.Errorf("group %d: the leader cannot remove itself", g)
	}
	voter, learner := slices.Contains(v.Voters, from), slices.Contains(v.Learners, from)
	if !voter && !learner && !v.Joint {
		return encodeLeaveReply(leaveReply{outcome: leaveDone, index: v.Applied}), nil
	}
	if voter {
		// Removing a member that does not run the group needs a quorum
		// of the others: never true of 2 voters or fewer.
		if len(v.Voters)-1 < len(v.Voters)/2+1 {
			return nil, fmt.Errorf("group %d: removing replica %d would leave %d of %d voters, below a quorum", g, from, len(v.Voters)-1, len(v.Voters))
		}
		peers, err := rb.Peers(ctx)
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		live := 0
		for _, n := range v.Voters {
			if n != from && (n == s.r.Self() || peers[n].Alive) {
				live++
			}
		}
		if rest := len(v.Voters) - 1; live < rest/2+1 {
			return nil, fmt.Errorf("group %d: without replica %d only %d of its %d other voters are live, below a quorum: it stays until more are", g, from, live, rest)
		}
	}
	if err := rb.RemoveMember(ctx, g, from); err != nil {
		var nl *replication.NotLeaderError
		if errors.As(err, &nl) {
			return encodeLeaveReply(leaveReply{outcome: leaveNotLeader, leader: nl.Leader, hasLeader: nl.HasLeader}), nil
		}
		return nil, fmt.Errorf("group %d: %w", g, err)
	}
	v, _ = rb.Status(g)
	s.log.Info("partition replica removed from its group to be rebuilt", "group", uint64(g), "replica", uint64(from), "index", v.Applied)
	return encodeLeaveReply(leaveReply{outcome: leaveDone, index: v.Applied}), nil
}
