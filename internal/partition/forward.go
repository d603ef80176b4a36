package partition

import (
	"context"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// Forwarding (cluster mode). A partition request (SEND_MESSAGES,
// POLL_MESSAGES, GET/STORE/DELETE_CONSUMER_OFFSET) runs on the node
// whose replica leads the partition's group; any other node, whether it
// holds a follower replica or none at all, forwards it to that leader
// (Forwarder.Forward, a call over the replica transport) with what the
// leader needs to run it as if the client had sent it there: the
// caller's user id, client id and session epoch, the partition it was
// routed to, and the request frame. The leader runs the same handler
// (ServeForwarded) and returns the reply frame, which the forwarding
// node sends to its client byte for byte.
//
//   - Leader unknown: wait up to replicated.LeaderWait, then 58.
//   - The callee no longer leads (it answers so before running
//     anything), or the call certainly did not reach a handler
//     (replication.CallNotRun): one more try once another leader is
//     known (within replicated.LeaderWait), else 58.
//   - Anything else that fails the call (the connection lost, the
//     deadline): the request may have run, 57. A retry of the same
//     client id and request number meets the leader's duplicate window
//     as a retry sent there directly would.

// forwardTimeout bounds one forwarded request: the leader's own waits
// (its proposal's, replicated's proposeTimeout) and the two hops.
const forwardTimeout = 10 * time.Second

// remoteRequest is a request another node forwarded here (ServeForwarded).
type remoteRequest struct {
	// partition is the partition the forwarding node routed it to.
	partition uint32
	// notLeader is set when this node does not lead that partition:
	// the request did not run, and leader (hasLeader) is the leader this
	// node knows of.
	notLeader bool
	leader    replication.NodeID
	hasLeader bool
}

// routeRead routes a poll or consumer-offset request for partition opt
// (0 when absent) of stream/topic: false means it runs here; true means
// it was answered (forwarded, or refused as forwarded to the wrong node).
// A topic or partition this node cannot resolve runs here, where the
// handler answers the resolution error.
func (p *Plane) routeRead(x *dispatch.Exchange, fwd *remoteRequest, stream, topic wire.Identifier, opt wire.OptPartition) bool {
	cat := p.catalog()
	if p.opts.Forwarder == nil || cat == nil {
		return false
	}
	ref, ids, err := cat.ResolveTopic(stream, topic)
	if err != nil {
		return false
	}
	pid := uint32(0)
	if opt.Present {
		pid = opt.ID
	}
	if !has(ids, pid) {
		return false
	}
	if p.elsewhere(x, fwd, ref, pid) {
		return true
	}
	// It runs here, on the leader: not before the leader has applied
	// everything committed before its term (a node that has just been
	// elected holds those entries but may not have applied them yet).
	if err := p.opts.Forwarder.AwaitReadable(x.Conn.Context(), replicated.GroupID(ref, pid), readableWait); err != nil {
		x.Deny(wire.ErrTransientNotCommitted.Code)
		return true
	}
	return false
}

// readableWait bounds how long a read on a new leader waits for the
// entries of earlier terms to apply before it is answered 57 (retry).
const readableWait = 2 * time.Second

// elsewhere routes a request for partition pid of ref: false when this
// node holds the replica that leads it (the request runs here); true when
// x was answered, by the leader through a forward, or, for a request
// forwarded here that this node does not lead, by nothing at all
// (fwd.notLeader tells ServeForwarded).
func (p *Plane) elsewhere(x *dispatch.Exchange, fwd *remoteRequest, ref catalog.TopicRef, pid uint32) bool {
	f := p.opts.Forwarder
	if f == nil {
		return false
	}
	g := replicated.GroupID(ref, pid)
	if p.leadsHere(ref, pid, g) {
		return false
	}
	if fwd != nil {
		fwd.notLeader = true
		fwd.leader, fwd.hasLeader = f.LeaderOf(g)
		return true
	}
	if primaryOnly(x) {
		// The client routes this request to the leader itself: a
		// refusal that ran nothing makes it ask for the route again.
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return true
	}
	return p.forward(x, ref, pid, g)
}

// primaryOnly reports whether x must run on the partition's leader and
// is answered 58 elsewhere instead of forwarded: POLL_MESSAGES_ON_PRIMARY,
// and every partition request of a data connection an official SDK
// attached to its coordinator session (wire/consumer_routing.go). Such a
// client asked the cluster for the leader (GET_POLL_ROUTING,
// GET_CONSUMER_OFFSET_ROUTING) and asks again after a 58.
func primaryOnly(x *dispatch.Exchange) bool {
	if x.Info.Code == wire.CmdPollMessagesOnPrimary {
		return true
	}
	b, ok := x.Conn.Binding()
	return ok && !b.Consumer.IsZero()
}

// leadsHere reports whether this node holds a working replica of
// partition pid that leads its group g.
func (p *Plane) leadsHere(ref catalog.TopicRef, pid uint32, g replication.GroupID) bool {
	f := p.opts.Forwarder
	l, ok := f.LeaderOf(g)
	if !ok || l != f.Self() {
		return false
	}
	part := p.lookup(ref.Incarnation, pid)
	return part != nil && part.commit != nil
}

// forward sends x to the leader of group g and answers x with its reply
// (or 57/58, see the comment at the top of this file); false when the
// leader it waited for turned out to be this node's replica (the request
// then runs here).
func (p *Plane) forward(x *dispatch.Exchange, ref catalog.TopicRef, pid uint32, g replication.GroupID) bool {
	f := p.opts.Forwarder
	ctx, cancel := context.WithTimeout(x.Conn.Context(), forwardTimeout)
	defer cancel()
	payload, ok := encodeForward(x, pid)
	if !ok {
		x.Deny(wire.ErrResourceNotFound.Code) // unbound: the handlers answer so too
		return true
	}
	var failed, hint replication.NodeID
	hinted := false
	for attempt := 0; attempt < 2; attempt++ {
		to, ok := hint, hinted
		if !ok {
			to, ok = p.leaderFor(ctx, g, attempt > 0, failed)
		}
		if ok && to == f.Self() && p.leadsHere(ref, pid, g) {
			return false // a first leader elected meanwhile: this node
		}
		if !ok || to == f.Self() {
			// No leader, or this node's directory names itself while its
			// replica does not lead (it just lost the leadership).
			x.Deny(wire.ErrTransientNotAccepted.Code)
			return true
		}
		reply, err := f.Forward(ctx, to, payload)
		if err != nil {
			if !replication.CallNotRun(err) {
				p.log.Debug("forwarded partition request lost", "to", uint64(to), "stream", ref.StreamID, "topic", ref.TopicID, "partition", pid, "err", err)
				x.Deny(wire.ErrTransientNotCommitted.Code)
				return true
			}
			failed = to
			continue
		}
		r, err := decodeForwardReply(reply)
		switch {
		case err != nil:
			p.log.Warn("malformed forwarded reply", "from", uint64(to), "err", err)
			x.Deny(wire.ErrTransientNotCommitted.Code)
			return true
		case r.notLeader:
			// It ran nothing; the leader it knows, if another, is the
			// best guess.
			failed = to
			hint, hinted = r.leader, r.hasLeader && r.leader != to
			continue
		}
		x.Relay(r.frame)
		return true
	}
	x.Deny(wire.ErrTransientNotAccepted.Code)
	return true
}

// leaderFor returns the node to forward group g's request to: the known
// leader, waiting up to replicated.LeaderWait for one; on a retry
// (again) one other than failed.
func (p *Plane) leaderFor(ctx context.Context, g replication.GroupID, again bool, failed replication.NodeID) (replication.NodeID, bool) {
	f := p.opts.Forwarder
	if l, ok := f.LeaderOf(g); ok && (!again || l != failed) {
		return l, true
	}
	ctx, cancel := context.WithTimeout(ctx, replicated.LeaderWait)
	defer cancel()
	for {
		l, err := f.AwaitLeader(ctx, g)
		if err != nil {
			return 0, false
		}
		if !again || l != failed {
			return l, true
		}
		// The failed node is still named: give the directory a moment.
		select {
		case <-ctx.Done():
			return 0, false
		case <-time.After(leaderRecheck):
		}
	}
}

// leaderRecheck is the pause between looks at the leader while a retry
// waits for another one to be named.
const leaderRecheck = 20 * time.Millisecond
