package wire

// OffsetAck is the ack byte of STORE/DELETE_CONSUMER_OFFSET (commands.md
// §121, §122): how the partition plane commits the write.
type OffsetAck uint8

// Ack modes. Other values are a decode error (a choice: the spec defines
// only these two).
const (
	// AckNone applies the write locally on the partition primary and
	// answers at once (NoAck).
	AckNone OffsetAck = 0
	// AckQuorum replicates the write and answers after commit (the default).
	AckQuorum OffsetAck = 1
)

// String returns the mode's name.
func (a OffsetAck) String() string {
	switch a {
	case AckNone:
		return "NoAck"
	case AckQuorum:
		return "Quorum"
	}
	return "OffsetAck(" + itoa(uint64(a)) + ")"
}

func (r *reader) offsetAck() OffsetAck {
	a := OffsetAck(r.u8())
	if r.err == nil && a != AckNone && a != AckQuorum {
		r.fail(ErrInvalidCommand)
	}
	return a
}

// appendConsumerTarget appends the common prefix of the consumer-offset requests:
// [consumer][stream_id][topic_id][partition OptPartition].
func appendConsumerTarget(dst []byte, c Consumer, stream, topic Identifier, p OptPartition) []byte {
	dst = c.AppendTo(dst)
	dst = stream.AppendTo(dst)
	dst = topic.AppendTo(dst)
	return p.AppendTo(dst)
}

// GetConsumerOffset is the body of GET_CONSUMER_OFFSET (code 120,
// operation 2): [consumer][stream_id][topic_id][partition OptPartition].
// An absent partition means partition 0 for a plain consumer.
type GetConsumerOffset struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptPartition
}

// AppendTo appends the body.
func (g *GetConsumerOffset) AppendTo(dst []byte) []byte {
	return appendConsumerTarget(dst, g.Consumer, g.StreamID, g.TopicID, g.Partition)
}

// Decode decodes the fields and ignores trailing bytes.
func (g *GetConsumerOffset) Decode(src []byte) error {
	r := newReader(src)
	g.Consumer = r.consumer()
	g.StreamID = r.identifier()
	g.TopicID = r.identifier()
	g.Partition = r.optPartition()
	return r.done()
}

// StoreConsumerOffset is the body of STORE_CONSUMER_OFFSET (code 121,
// operation 161, result-framed reply):
// [consumer][stream_id][topic_id][partition OptPartition][offset u64][ack u8].
// The ack byte is mandatory.
type StoreConsumerOffset struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptPartition
	Offset    uint64
	Ack       OffsetAck
}

// AppendTo appends the body.
func (s *StoreConsumerOffset) AppendTo(dst []byte) []byte {
	dst = appendConsumerTarget(dst, s.Consumer, s.StreamID, s.TopicID, s.Partition)
	dst = appendU64(dst, s.Offset)
	return append(dst, byte(s.Ack))
}

// Decode decodes the fields and ignores trailing bytes after the ack
// byte; a missing or unknown ack byte is ErrInvalidCommand.
func (s *StoreConsumerOffset) Decode(src []byte) error {
	r := newReader(src)
	s.Consumer = r.consumer()
	s.StreamID = r.identifier()
	s.TopicID = r.identifier()
	s.Partition = r.optPartition()
	s.Offset = r.u64()
	s.Ack = r.offsetAck()
	return r.done()
}

// DeleteConsumerOffset is the body of DELETE_CONSUMER_OFFSET (code 122,
// operation 162, result-framed reply):
// [consumer][stream_id][topic_id][partition OptPartition][ack u8].
type DeleteConsumerOffset struct {
	Consumer  Consumer
	StreamID  Identifier
	TopicID   Identifier
	Partition OptPartition
	Ack       OffsetAck
}

// AppendTo appends the body.
func (d *DeleteConsumerOffset) AppendTo(dst []byte) []byte {
	dst = appendConsumerTarget(dst, d.Consumer, d.StreamID, d.TopicID, d.Partition)
	return append(dst, byte(d.Ack))
}

// Decode decodes the fields and ignores trailing bytes after the ack
// byte; a missing or unknown ack byte is ErrInvalidCommand.
func (d *DeleteConsumerOffset) Decode(src []byte) error {
	r := newReader(src)
	d.Consumer = r.consumer()
	d.StreamID = r.identifier()
	d.TopicID = r.identifier()
	d.Partition = r.optPartition()
	d.Ack = r.offsetAck()
	return r.done()
}

// ConsumerOffsetSize is the length of a ConsumerOffset reply.
const ConsumerOffsetSize = 20

// ConsumerOffset is the GET_CONSUMER_OFFSET reply payload, plain:
// [partition_id u32][current_offset u64][stored_offset u64]. The server
// sends an empty body instead when no offset is stored; see
// DecodeConsumerOffsetReply.
type ConsumerOffset struct {
	PartitionID uint32
	// CurrentOffset is the partition's newest offset.
	CurrentOffset uint64
	// StoredOffset is the consumer's stored offset.
	StoredOffset uint64
}

// AppendTo appends the 20-byte payload.
func (c *ConsumerOffset) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, c.PartitionID)
	dst = appendU64(dst, c.CurrentOffset)
	return appendU64(dst, c.StoredOffset)
}

// Decode decodes exactly 20 bytes.
func (c *ConsumerOffset) Decode(src []byte) error {
	r := newReader(src)
	c.PartitionID = r.u32()
	c.CurrentOffset = r.u64()
	c.StoredOffset = r.u64()
	return r.finish()
}

// DecodeConsumerOffsetReply decodes a GET_CONSUMER_OFFSET reply body: an
// empty body is "no stored offset" (found == false, as the Go SDK returns
// none), otherwise exactly 20 bytes.
func DecodeConsumerOffsetReply(body []byte) (off ConsumerOffset, found bool, err error) {
	if len(body) == 0 {
		return ConsumerOffset{}, false, nil
	}
	if err := off.Decode(body); err != nil {
		return ConsumerOffset{}, false, err
	}
	return off, true, nil
}
