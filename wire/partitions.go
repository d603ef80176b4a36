package wire

// Partition and segment request bodies (commands.md, "Partitions and
// segments") and the PartitionInfo reply structure.

// CreatePartitions is the body of CREATE_PARTITIONS (code 402, operation
// 136, reply operation 65): [stream_id][topic_id][partitions_count u32].
// New partitions take the ids after the highest existing one. Reply: empty
// payload.
type CreatePartitions struct {
	StreamID        Identifier
	TopicID         Identifier
	PartitionsCount uint32
}

// AppendTo appends the body.
func (c *CreatePartitions) AppendTo(dst []byte) []byte {
	return appendPartitionsCount(dst, c.StreamID, c.TopicID, c.PartitionsCount)
}

// Decode decodes the fields and ignores trailing bytes.
func (c *CreatePartitions) Decode(src []byte) error {
	return decodePartitionsCount(src, &c.StreamID, &c.TopicID, &c.PartitionsCount)
}

// Validate checks the identifiers and partitions_count in 1..1000; 0 or
// more than 1000 is ErrTooManyPartitions (semantics.md §3.5).
func (c *CreatePartitions) Validate() error {
	return validatePartitionsCount(c.StreamID, c.TopicID, c.PartitionsCount)
}

// DeletePartitions is the body of DELETE_PARTITIONS (code 403, operation
// 137): [stream_id][topic_id][partitions_count u32]. It removes the
// partitions_count highest partitions. Reply: empty payload.
type DeletePartitions struct {
	StreamID        Identifier
	TopicID         Identifier
	PartitionsCount uint32
}

// AppendTo appends the body.
func (d *DeletePartitions) AppendTo(dst []byte) []byte {
	return appendPartitionsCount(dst, d.StreamID, d.TopicID, d.PartitionsCount)
}

// Decode decodes the fields and ignores trailing bytes.
func (d *DeletePartitions) Decode(src []byte) error {
	return decodePartitionsCount(src, &d.StreamID, &d.TopicID, &d.PartitionsCount)
}

// Validate checks the identifiers and partitions_count in 1..1000. The
// docs give 1..=1000 but name no code for 0; like CreatePartitions, 0 and
// more than 1000 are ErrTooManyPartitions. Deleting more partitions than
// exist (2019) is the server's check.
func (d *DeletePartitions) Validate() error {
	return validatePartitionsCount(d.StreamID, d.TopicID, d.PartitionsCount)
}

func appendPartitionsCount(dst []byte, stream, topic Identifier, n uint32) []byte {
	dst = stream.AppendTo(dst)
	dst = topic.AppendTo(dst)
	return appendU32(dst, n)
}

func decodePartitionsCount(src []byte, stream, topic *Identifier, n *uint32) error {
	r := newReader(src)
	*stream = r.identifier()
	*topic = r.identifier()
	*n = r.u32()
	return r.done()
}

func validatePartitionsCount(stream, topic Identifier, n uint32) error {
	if err := validateIdentifiers(stream, topic); err != nil {
		return err
	}
	if n == 0 || n > MaxPartitionsPerRequest {
		return ErrTooManyPartitions
	}
	return nil
}

// DeleteSegments is the body of DELETE_SEGMENTS (code 503, operation 138,
// reply operation 68): [stream_id][topic_id][partition_id u32]
// [segments_count u32]. It deletes the segments_count oldest sealed
// segments; the active segment is never deleted. Reply: result section,
// empty payload. A server denies an undecodable body with status 3 (the
// reference server's status-0 reply is an oddity the docs advise against).
type DeleteSegments struct {
	StreamID      Identifier
	TopicID       Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

// AppendTo appends the body.
func (d *DeleteSegments) AppendTo(dst []byte) []byte {
	dst = d.StreamID.AppendTo(dst)
	dst = d.TopicID.AppendTo(dst)
	dst = appendU32(dst, d.PartitionID)
	return appendU32(dst, d.SegmentsCount)
}

// Decode decodes the fields and ignores trailing bytes.
func (d *DeleteSegments) Decode(src []byte) error {
	r := newReader(src)
	d.StreamID = r.identifier()
	d.TopicID = r.identifier()
	d.PartitionID = r.u32()
	d.SegmentsCount = r.u32()
	return r.done()
}

// Validate checks the identifiers can be encoded.
func (d *DeleteSegments) Validate() error { return validateIdentifiers(d.StreamID, d.TopicID) }

// PartitionInfoLen is the size of a PartitionInfo on the wire.
const PartitionInfoLen = 40

// PartitionInfo is the 40-byte partition entry of TopicDetails:
// [id u32][created_at u64][segments_count u32][current_offset u64]
// [size_bytes u64][messages_count u64]. Partitions are numbered from 0;
// current_offset is the offset of the last committed message (0 when
// empty).
type PartitionInfo struct {
	ID            uint32
	CreatedAt     uint64 // microseconds since the Unix epoch
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// AppendTo appends the structure.
func (p *PartitionInfo) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, p.ID)
	dst = appendU64(dst, p.CreatedAt)
	dst = appendU32(dst, p.SegmentsCount)
	dst = appendU64(dst, p.CurrentOffset)
	dst = appendU64(dst, p.SizeBytes)
	return appendU64(dst, p.MessagesCount)
}

// Decode decodes exactly one PartitionInfo.
func (p *PartitionInfo) Decode(src []byte) error {
	r := newReader(src)
	p.read(&r)
	return r.finish()
}

func (p *PartitionInfo) read(r *reader) {
	p.ID = r.u32()
	p.CreatedAt = r.u64()
	p.SegmentsCount = r.u32()
	p.CurrentOffset = r.u64()
	p.SizeBytes = r.u64()
	p.MessagesCount = r.u64()
}

// readPartitions reads count entries, checking count against the bytes
// left before allocating.
func readPartitions(r *reader, count uint32) []PartitionInfo {
	if r.err != nil || count == 0 {
		return nil
	}
	if uint64(count)*PartitionInfoLen > uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
		return nil
	}
	out := make([]PartitionInfo, count)
	for i := range out {
		out[i].read(r)
	}
	return out
}
