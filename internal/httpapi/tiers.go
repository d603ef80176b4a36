package httpapi

import "github.com/iggo-dev/iggo/wire"

// GET /streams/{stream_id}/topics/{topic_id} with tiered storage on
// (Options.PartitionTiers): the topic document's partitions also carry
// how their bytes are split between local disk and the bucket, from the
// binary PARTITION_TIERS run on this node after GET_TOPIC.

// addPartitionTiers runs PARTITION_TIERS for the topic and sets the tier
// fields of d's partitions. It never fails the request: when the topic
// went away meanwhile or the command is refused, the document is answered
// without them.
func (c *call) addPartitionTiers(stream, topic wire.Identifier, d *TopicDetails) {
	if !c.s.opts.PartitionTiers {
		return
	}
	out, err := c.read(wire.CmdPartitionTiers, &wire.GetPartitionTiers{StreamID: stream, TopicID: topic})
	if err != nil {
		return
	}
	var r wire.PartitionTiersReply
	if err := decodeReply(out.payload, &r); err != nil {
		return
	}
	withTiers(d, r.Partitions)
}

// withTiers sets the tier fields of the partitions of d that ts lists.
func withTiers(d *TopicDetails, ts []wire.PartitionTiers) {
	byID := make(map[uint32]*wire.PartitionTiers, len(ts))
	for i := range ts {
		byID[ts[i].PartitionID] = &ts[i]
	}
	for i := range d.Partitions {
		p := &d.Partitions[i]
		t, ok := byID[p.ID]
		if !ok {
			continue
		}
		local, remote, remoteOnly, pending := t.LocalBytes, t.RemoteBytes, t.RemoteOnlyBytes, t.PendingBytes
		remoteSegs, pendingSegs := t.RemoteSegments, t.PendingSegments
		p.LocalSizeBytes, p.RemoteSizeBytes, p.RemoteOnlySizeBytes, p.PendingSizeBytes = &local, &remote, &remoteOnly, &pending
		p.RemoteSegmentsCount, p.PendingSegmentsCount = &remoteSegs, &pendingSegs
	}
}
