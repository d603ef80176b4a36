package broker

import (
	"context"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// Consumer routing (cluster mode; wire/consumer_routing.go). The 0.11.0
// SDKs send a poll with auto-commit and a consumer-offset write of a
// cluster to the partition's primary themselves: they ask their
// coordinator node for the route (GET_POLL_ROUTING,
// GET_CONSUMER_OFFSET_ROUTING), open a data connection to the node it
// names, attach it to their coordinator session (ATTACH_CONSUMER_SESSION)
// and send the request there (POLL_MESSAGES_ON_PRIMARY, or the offset
// write). The route names the partition group's leader; the partition
// plane answers those requests 58 on any other node (partition/forward.go,
// primaryOnly), and the SDK then asks for the route again. A single node
// answers the four commands FeatureUnavailable: the SDKs route only when
// GET_CLUSTER_METADATA lists more than one node.

// metadataWait bounds how long ATTACH_CONSUMER_SESSION waits for this
// node to apply the metadata the client saw committed; past it the attach
// is answered 58 and the SDK retries.
const metadataWait = 3 * time.Second

// metadataPoll is the pause between looks at the applied metadata index.
const metadataPoll = 5 * time.Millisecond

func (b *Broker) registerConsumerRouting() {
	b.disp.Handle(wire.CmdGetPollRouting, b.pollRouting)
	b.disp.Handle(wire.CmdGetConsumerOffsetRouting, b.offsetRouting)
	b.disp.Handle(wire.CmdAttachConsumerSession, b.attachConsumerSession)
}

// pollRouting answers GET_POLL_ROUTING: the body is the poll's.
func (b *Broker) pollRouting(x *dispatch.Exchange) {
	var req wire.PollMessages
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	b.route(x, req.StreamID, req.TopicID, req.Partition)
}

// offsetRouting answers GET_CONSUMER_OFFSET_ROUTING: the body is a
// GET_CONSUMER_OFFSET's (the head of the STORE/DELETE_CONSUMER_OFFSET
// the client is about to send).
func (b *Broker) offsetRouting(x *dispatch.Exchange) {
	var req wire.GetConsumerOffset
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	b.route(x, req.StreamID, req.TopicID, req.Partition)
}

// route answers a routing request for partition opt (0 when absent, as
// the partition plane reads it) of stream/topic: the caller's session and
// this node's applied metadata index, and the partition group's leader as
// a GET_CLUSTER_METADATA node chosen for the caller. Resolution failures
// get the poll's codes (1009, 2010, 3007, 41); no leader known within
// replicated.LeaderWait: 58.
func (b *Broker) route(x *dispatch.Exchange, stream, topic wire.Identifier, opt wire.OptPartition) {
	bd, ok := x.Conn.Binding()
	if !ok {
		x.Deny(wire.ErrUnauthenticated.Code)
		return
	}
	ref, ids, err := b.meta.ResolveTopic(stream, topic)
	if err != nil {
		x.Deny(wire.CodeOf(err))
		return
	}
	if !b.meta.Allowed(uint32(bd.UserID), catalog.ActionPoll, ref.StreamID, ref.TopicID) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	pid := uint32(0)
	if opt.Present {
		pid = opt.ID
	}
	if _, found := slices.BinarySearch(ids, pid); !found {
		x.Deny(wire.ErrPartitionNotFound.Code)
		return
	}
	watermark := b.meta.Op()
	leader, ok := b.partitionLeader(x.Conn.Context(), replicated.GroupID(ref, pid))
	if !ok {
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	md := b.clusterMetadata(x.Conn.Addr)
	roster := b.cl.roster.get()
	for i := range roster {
		if replication.NodeID(roster[i].ReplicaID) != leader || i >= len(md.Nodes) {
			continue
		}
		r := wire.PollRouting{
			Session: wire.AttachConsumerSession{Client: bd.Client, Session: bd.Session, MetadataWatermark: watermark},
			Primary: md.Nodes[i],
		}
		x.Reply(r.AppendTo(x.Scratch()))
		return
	}
	// A leader this node's roster does not list yet: ask again.
	x.Deny(wire.ErrTransientNotAccepted.Code)
}

// partitionLeader returns the leader of partition group g, waiting up to
// replicated.LeaderWait for one to be known.
func (b *Broker) partitionLeader(ctx context.Context, g replication.GroupID) (replication.NodeID, bool) {
	h := b.cl.node.host
	if l, ok := h.LeaderOf(g); ok {
		return l, true
	}
	ctx, cancel := context.WithTimeout(ctx, replicated.LeaderWait)
	defer cancel()
	l, err := h.AwaitLeader(ctx, g)
	return l, err == nil
}

// attachConsumerSession answers ATTACH_CONSUMER_SESSION: once this node
// applied the metadata up to the request's watermark (the client's
// consumer-group memberships), the logged-in connection acts for the named
// coordinator session in consumer groups (session.Manager.AttachConsumer:
// 40 when not logged in, 30 for a session that is not the caller's
// current one). The watermark not reached within metadataWait: 58.
func (b *Broker) attachConsumerSession(x *dispatch.Exchange) {
	var req wire.AttachConsumerSession
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	ctx, cancel := context.WithTimeout(x.Conn.Context(), metadataWait)
	defer cancel()
	if !b.awaitMetadata(ctx, req.MetadataWatermark) {
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	if code := b.sessions.AttachConsumer(x.Conn, req.Client, req.Session); code != 0 {
		x.Deny(code)
		return
	}
	x.Reply(nil)
}

// awaitMetadata waits until this node applied the metadata log up to op;
// false when ctx ended first.
func (b *Broker) awaitMetadata(ctx context.Context, op uint64) bool {
	for b.meta.Op() < op {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(metadataPoll):
		}
	}
	return true
}
