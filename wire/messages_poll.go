package wire

import (
	"encoding/binary"
	"math"
)

// PollMessages is the body of POLL_MESSAGES (code 100, operation 2;
// commands.md §100):
//
//	[consumer Consumer][stream_id Identifier][topic_id Identifier]
//	[partition OptPartition][strategy PollingStrategy][count u32][auto_commit u8]
//
// Count is the maximum number of messages returned. A non-zero
// auto_commit byte decodes as true (a choice matching the reference
// server's boolean decoding; encoders write 0/1).
type PollMessages struct {
	Consumer   Consumer
	StreamID   Identifier
	TopicID    Identifier
	Partition  OptPartition
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// AppendTo appends the body.
func (p *PollMessages) AppendTo(dst []byte) []byte {
	dst = p.Consumer.AppendTo(dst)
	dst = p.StreamID.AppendTo(dst)
	dst = p.TopicID.AppendTo(dst)
	dst = p.Partition.AppendTo(dst)
	dst = p.Strategy.AppendTo(dst)
	dst = appendU32(dst, p.Count)
	return appendBool(dst, p.AutoCommit)
}

// Decode decodes the fields and ignores trailing bytes (the reference
// decodes a prefix); any failure is ErrInvalidCommand.
func (p *PollMessages) Decode(src []byte) error {
	r := newReader(src)
	p.Consumer = r.consumer()
	p.StreamID = r.identifier()
	p.TopicID = r.identifier()
	p.Partition = r.optPartition()
	p.Strategy = r.pollingStrategy()
	p.Count = r.u32()
	p.AutoCommit = r.u8() != 0
	return r.done()
}

// Poll reply constants (messages.md, "Poll reply"; semantics.md §4.2).
const (
	// PollReplyHeadSize is the [partition_id u32][current_offset u64]
	// [messages_count u32] prefix of a poll reply.
	PollReplyHeadSize = 16
	// PollResyncPartition is the partition_id of an empty poll that tells a
	// consumer-group member to re-sync its assignment.
	PollResyncPartition = math.MaxUint32
)

// AppendPollReplyHead appends the 16-byte poll reply prefix; the server
// appends the batch records (whole stored batches or Batch.AppendSlice
// output) after it. count is the total number of frames in the records.
func AppendPollReplyHead(dst []byte, partitionID uint32, currentOffset uint64, count uint32) []byte {
	dst = appendU32(dst, partitionID)
	dst = appendU64(dst, currentOffset)
	return appendU32(dst, count)
}

// PolledMessages is the POLL_MESSAGES reply body, plain (messages.md,
// "Poll reply"): [partition_id u32][current_offset u64][messages_count u32]
// then batch records to the end of the body.
type PolledMessages struct {
	PartitionID uint32
	// CurrentOffset is the partition's newest offset at poll time.
	CurrentOffset uint64
	// Count is the total number of frames across Records.
	Count uint32
	// Records are the batch records back to back (stamped headers,
	// original frames). A decoded value aliases the body.
	Records []byte
}

// AppendTo appends the body.
func (p *PolledMessages) AppendTo(dst []byte) []byte {
	dst = AppendPollReplyHead(dst, p.PartitionID, p.CurrentOffset, p.Count)
	return append(dst, p.Records...)
}

// Decode decodes a reply body without copying or allocating: each record
// must pass ParseBatch (layout only; checksums are passed through, as the
// SDKs do) and the frames of all records must add up to messages_count.
// An entirely empty body is accepted as "no messages" (the Go SDK does)
// and decodes to the zero value. Failures are ErrInvalidCommand.
func (p *PolledMessages) Decode(src []byte) error {
	if len(src) == 0 {
		*p = PolledMessages{}
		return nil
	}
	if len(src) < PollReplyHeadSize {
		return ErrInvalidCommand
	}
	head := PolledMessages{
		PartitionID:   binary.LittleEndian.Uint32(src[0:]),
		CurrentOffset: binary.LittleEndian.Uint64(src[4:]),
		Count:         binary.LittleEndian.Uint32(src[12:]),
		Records:       src[PollReplyHeadSize:],
	}
	frames := uint64(0)
	for rest := head.Records; len(rest) > 0; {
		v, next, err := ParseBatch(rest)
		if err != nil {
			return err
		}
		frames += uint64(v.MessageCount())
		rest = next
	}
	if frames != uint64(head.Count) {
		return ErrInvalidCommand
	}
	*p = head
	return nil
}

// Batches returns an iterator over the records.
func (p *PolledMessages) Batches() BatchIter { return BatchIter{rest: p.Records} }

// Messages returns an iterator over every message of every record.
func (p *PolledMessages) Messages() PolledMessageIter {
	return PolledMessageIter{batches: p.Batches()}
}

// BatchIter walks batch records laid back to back, each by its
// batch_length, without allocating. It stops at the first record whose
// header or length does not fit (Decode rules that out).
type BatchIter struct {
	rest []byte
}

// Next returns the next record.
func (it *BatchIter) Next() (Batch, bool) {
	b := it.rest
	if len(b) < BatchHeaderSize {
		return Batch{}, false
	}
	l := binary.LittleEndian.Uint64(b[BatchOffLength:])
	if l < BatchHeaderSize || l > uint64(len(b)) {
		it.rest = nil
		return Batch{}, false
	}
	it.rest = b[l:]
	return Batch{b: b[:l:l]}, true
}

// PolledMessage is one message of a poll reply as a client sees it
// (messages.md, "Message timestamps after a poll"). Payload and
// UserHeaders alias the reply body.
type PolledMessage struct {
	// Offset is base_offset + offset_delta.
	Offset uint64
	// Timestamp is the broker time: the batch's base_timestamp.
	Timestamp uint64
	// OriginTimestamp is origin_timestamp + timestamp_delta.
	OriginTimestamp uint64
	ID              Uint128
	// Checksum is the frame checksum as stored (passed through unverified).
	Checksum    uint64
	Payload     []byte
	UserHeaders []byte
}

// PolledMessageIter walks every message of a poll reply without
// allocating.
type PolledMessageIter struct {
	batches BatchIter
	cur     Batch
	msgs    MessageIter
}

// Next returns the next message.
func (it *PolledMessageIter) Next() (PolledMessage, bool) {
	for {
		m, ok := it.msgs.Next()
		if ok {
			return PolledMessage{
				Offset:          it.cur.BaseOffset() + uint64(m.OffsetDelta()),
				Timestamp:       it.cur.BaseTimestamp(),
				OriginTimestamp: it.cur.OriginTimestamp() + uint64(m.TimestampDelta()),
				ID:              m.ID(),
				Checksum:        m.Checksum(),
				Payload:         m.Payload(),
				UserHeaders:     m.UserHeaders(),
			}, true
		}
		b, ok := it.batches.Next()
		if !ok {
			return PolledMessage{}, false
		}
		it.cur, it.msgs = b, b.Messages()
	}
}
