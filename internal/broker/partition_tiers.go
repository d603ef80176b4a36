package broker

import (
	"math"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/tier"
	"github.com/iggo-dev/iggo/wire"
)

// PARTITION_TIERS (`iggo topic get`, the HTTP API's topic document): how
// the bytes of each partition of a topic held here are split between
// local disk and the remote tier, from the partition plane
// (Plane.PartitionTiers). The topic is resolved and the caller's
// read_topic checked with the plane's resolver, as GET_TOPIC does; the
// request is never forwarded (the point is this node's disks). With
// tiered storage off the reply lists no partition.

// registerPartitionTiers installs the PARTITION_TIERS handler; topics is
// the resolver the partition plane was given.
func (b *Broker) registerPartitionTiers(topics catalog.Topics) {
	b.disp.Handle(wire.CmdPartitionTiers, func(x *dispatch.Exchange) { b.partitionTiers(x, topics) })
}

// partitionTiers answers PARTITION_TIERS.
func (b *Broker) partitionTiers(x *dispatch.Exchange, topics catalog.Topics) {
	var req wire.GetPartitionTiers
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	bd, ok := x.Conn.Binding()
	if !ok {
		x.Deny(wire.ErrUnauthenticated.Code)
		return
	}
	ref, ids, err := topics.ResolveTopic(req.StreamID, req.TopicID)
	if err != nil {
		x.Deny(wire.CodeOf(err))
		return
	}
	if !topics.Allowed(uint32(bd.UserID), catalog.ActionReadTopic, ref.StreamID, ref.TopicID) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	var reply wire.PartitionTiersReply
	if b.parts.Tier() != nil {
		for _, id := range ids {
			if t, ok := b.parts.PartitionTiers(ref, id); ok {
				reply.Partitions = append(reply.Partitions, partitionTiersOf(id, t))
			}
		}
	}
	x.Reply(reply.AppendTo(x.Scratch()))
}

// partitionTiersOf is the wire form of partition id's tiers.
func partitionTiersOf(id uint32, t tier.Tiers) wire.PartitionTiers {
	return wire.PartitionTiers{
		PartitionID: id, LocalBytes: t.LocalBytes, RemoteBytes: t.RemoteBytes, RemoteOnlyBytes: t.RemoteOnlyBytes,
		PendingBytes: t.PendingBytes, RemoteSegments: clampU32(t.RemoteSegments), PendingSegments: clampU32(t.PendingSegments),
	}
}

// clampU32 is n within 0..=u32::MAX.
func clampU32(n int) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }
