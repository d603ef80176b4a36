package wire

import "slices"

// PARTITION_TIERS: an Iggo extension command (see cluster_admin.go for
// the extension range) that reports, for every partition of a topic held
// by the node that receives it, how the partition's bytes are split
// between local disk and the remote tier of tiered storage (`iggo topic
// get`, the HTTP API's topic document).

// CmdPartitionTiers reports the local and remote bytes of a topic's
// partitions on the answering node (GetPartitionTiers body,
// PartitionTiersReply reply; read_topic on the topic, as GET_TOPIC). With
// tiered storage off the reply lists no partition.
const CmdPartitionTiers Command = 1007

// MaxTierPartitions bounds the partitions of a PartitionTiersReply: a
// topic's partition ids go up to 1,000,000.
const MaxTierPartitions = 1_000_000

// partitionTiersSize is the encoded size of one PartitionTiers.
const partitionTiersSize = 4 + 4*8 + 2*4

// GetPartitionTiers is the body of PARTITION_TIERS: [stream_id
// Identifier][topic_id Identifier].
type GetPartitionTiers struct {
	StreamID Identifier
	TopicID  Identifier
}

// AppendTo appends the body.
func (g *GetPartitionTiers) AppendTo(dst []byte) []byte {
	return g.TopicID.AppendTo(g.StreamID.AppendTo(dst))
}

// Decode decodes the identifiers and ignores trailing bytes, as every
// request body.
func (g *GetPartitionTiers) Decode(src []byte) error {
	return decodeIdentifiers(src, &g.StreamID, &g.TopicID)
}

// PartitionTiers is one partition of a PartitionTiersReply, 44 bytes:
// [partition_id u32][local_bytes u64][remote_bytes u64][remote_only_bytes
// u64][pending_bytes u64][remote_segments u32][pending_segments u32].
type PartitionTiers struct {
	PartitionID uint32
	// LocalBytes is the size of the partition's segments on local disk,
	// the active one included.
	LocalBytes uint64
	// RemoteBytes is the size of the segments in the bucket (some may
	// still have a local copy); RemoteOnlyBytes of those no longer on
	// local disk.
	RemoteBytes, RemoteOnlyBytes uint64
	// PendingBytes is the size of the sealed local segments not uploaded
	// yet.
	PendingBytes uint64
	// RemoteSegments counts the segments in the bucket, PendingSegments
	// the sealed local segments not uploaded yet.
	RemoteSegments, PendingSegments uint32
}

// TotalBytes is the size of the partition's whole log: what is on local
// disk and what is only in the bucket.
func (p *PartitionTiers) TotalBytes() uint64 { return p.LocalBytes + p.RemoteOnlyBytes }

// PartitionTiersReply is the reply of PARTITION_TIERS: [count u32]
// [PartitionTiers × count], partitions in ascending id order, count at
// most MaxTierPartitions.
type PartitionTiersReply struct {
	Partitions []PartitionTiers
}

// AppendTo appends the payload; at most MaxTierPartitions partitions are
// written, so the output always decodes.
func (r *PartitionTiersReply) AppendTo(dst []byte) []byte {
	ps := r.Partitions[:min(len(r.Partitions), MaxTierPartitions)]
	dst = slices.Grow(dst, 4+len(ps)*partitionTiersSize)
	dst = appendU32(dst, uint32(len(ps)))
	for i := range ps {
		p := &ps[i]
		dst = appendU32(dst, p.PartitionID)
		dst = appendU64(dst, p.LocalBytes)
		dst = appendU64(dst, p.RemoteBytes)
		dst = appendU64(dst, p.RemoteOnlyBytes)
		dst = appendU64(dst, p.PendingBytes)
		dst = appendU32(dst, p.RemoteSegments)
		dst = appendU32(dst, p.PendingSegments)
	}
	return dst
}

// Decode decodes the payload, rejecting trailing bytes, a count above
// MaxTierPartitions and a count the bytes left cannot hold.
func (r *PartitionTiersReply) Decode(src []byte) error {
	rd := newReader(src)
	*r = PartitionTiersReply{}
	n := rd.u32()
	if rd.err != nil {
		return rd.err
	}
	if n > MaxTierPartitions || uint64(n)*partitionTiersSize != uint64(rd.remaining()) {
		return ErrInvalidCommand
	}
	if n > 0 {
		r.Partitions = make([]PartitionTiers, n)
	}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		p.PartitionID = rd.u32()
		p.LocalBytes = rd.u64()
		p.RemoteBytes = rd.u64()
		p.RemoteOnlyBytes = rd.u64()
		p.PendingBytes = rd.u64()
		p.RemoteSegments = rd.u32()
		p.PendingSegments = rd.u32()
	}
	return rd.finish()
}
