package wire

import "encoding/binary"

// Batch is a zero-copy view of one batch (256-byte header + frames) inside
// a caller's buffer. It is obtained from ValidateBatch (full admission
// checks, checksums included) or ParseBatch (layout only), so its frames
// tile it exactly. Its methods never allocate and never panic, even if the
// underlying bytes are modified after the check; they then report what
// the bytes say.
type Batch struct {
	b []byte
}

// Bytes returns the batch bytes (a view, batch_length long).
func (v Batch) Bytes() []byte { return v.b }

// Len is the batch length in bytes (0 for the zero Batch).
func (v Batch) Len() int { return len(v.b) }

func (v Batch) u64(off int) uint64 {
	if len(v.b) < BatchHeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint64(v.b[off:])
}

// PartitionID returns the header's partition_id.
func (v Batch) PartitionID() uint64 { return v.u64(BatchOffPartitionID) }

// BaseOffset returns the header's base_offset.
func (v Batch) BaseOffset() uint64 { return v.u64(BatchOffBaseOffset) }

// BaseTimestamp returns the header's base_timestamp (µs).
func (v Batch) BaseTimestamp() uint64 { return v.u64(BatchOffBaseTimestamp) }

// OriginTimestamp returns the header's origin_timestamp (µs).
func (v Batch) OriginTimestamp() uint64 { return v.u64(BatchOffOriginTimestamp) }

// Checksum returns the stored batch checksum.
func (v Batch) Checksum() uint64 { return v.u64(BatchOffChecksum) }

// MessageCount returns the header's message_count.
func (v Batch) MessageCount() uint32 {
	if len(v.b) < BatchHeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint32(v.b[BatchOffMessageCount:])
}

// Header decodes the header fields.
func (v Batch) Header() BatchHeader {
	if len(v.b) < BatchHeaderSize {
		return BatchHeader{}
	}
	return readBatchHeader(v.b)
}

// Frames returns the frame bytes after the header (a view).
func (v Batch) Frames() []byte {
	if len(v.b) < BatchHeaderSize {
		return nil
	}
	return v.b[BatchHeaderSize:]
}

// ComputeChecksum recomputes the batch checksum over the current header
// fields and frame checksums (BatchChecksum).
func (v Batch) ComputeChecksum() uint64 { return BatchChecksum(v.b) }

// Messages returns an iterator over the frames.
func (v Batch) Messages() MessageIter { return MessageIter{blob: v.Frames()} }

// MessageIter walks the frames of a batch without allocating.
type MessageIter struct {
	blob []byte
	off  int
	idx  int
}

// Next returns the next frame, or ok == false at the end (or where the
// frames stop tiling, which a checked Batch rules out).
func (it *MessageIter) Next() (m MessageView, ok bool) {
	n, ok := frameLenAt(it.blob, it.off)
	if !ok {
		return MessageView{}, false
	}
	m = MessageView{b: it.blob[it.off : it.off+n : it.off+n], index: it.idx, start: it.off}
	it.off += n
	it.idx++
	return m, true
}

// MessageView is a zero-copy view of one frame: [48-byte header][payload]
// [user headers]. Only MessageIter makes non-zero views; the methods of
// the zero MessageView must not be called.
type MessageView struct {
	b     []byte
	index int
	start int
}

// Bytes returns the whole frame.
func (m MessageView) Bytes() []byte { return m.b }

// Index is the frame's position in its batch (0-based).
func (m MessageView) Index() int { return m.index }

// Position is the frame's byte offset from the start of the batch's frames.
func (m MessageView) Position() int { return m.start }

// Header decodes the 48-byte header.
func (m MessageView) Header() MessageHeader { return readMessageHeader(m.b) }

// Checksum returns the stored frame checksum.
func (m MessageView) Checksum() uint64 { return binary.LittleEndian.Uint64(m.b[MessageOffChecksum:]) }

// ID returns the message id.
func (m MessageView) ID() Uint128 { return GetUint128(m.b[MessageOffID:]) }

// OffsetDelta returns offset_delta.
func (m MessageView) OffsetDelta() uint32 {
	return binary.LittleEndian.Uint32(m.b[MessageOffOffsetDelta:])
}

// TimestampDelta returns timestamp_delta (µs).
func (m MessageView) TimestampDelta() uint32 {
	return binary.LittleEndian.Uint32(m.b[MessageOffTimestampDelta:])
}

// Payload returns the payload (a view).
func (m MessageView) Payload() []byte {
	p := MessageHeaderSize + int(binary.LittleEndian.Uint32(m.b[MessageOffPayloadLength:]))
	return m.b[MessageHeaderSize:p:p]
}

// UserHeaders returns the encoded user-headers block (a view; empty when
// the message has none). Decode it with UserHeaders.Decode or
// IterUserHeaders.
func (m MessageView) UserHeaders() []byte {
	p := MessageHeaderSize + int(binary.LittleEndian.Uint32(m.b[MessageOffPayloadLength:]))
	return m.b[p:len(m.b):len(m.b)]
}

// ComputeChecksum recomputes the frame checksum.
func (m MessageView) ComputeChecksum() uint64 { return MessageChecksum(m.b) }

// ParseBatch checks the layout of the batch at the start of b and returns
// a view of it and the bytes after it. It is what a client does with poll
// records (messages.md, "Poll reply": checksums are passed through, only
// layout is decoded): header present, batch_length in 256..len(b),
// reserved bytes zero, every frame header within the batch with a zero
// reserved field, frames tiling the batch exactly, and their number equal
// to message_count and at least 1. Any failure is ErrInvalidCommand.
func ParseBatch(b []byte) (v Batch, rest []byte, err error) {
	if len(b) < BatchHeaderSize || !batchReservedZero(b) {
		return Batch{}, nil, ErrInvalidCommand
	}
	l := binary.LittleEndian.Uint64(b[BatchOffLength:])
	if l < BatchHeaderSize || l > uint64(len(b)) {
		return Batch{}, nil, ErrInvalidCommand
	}
	batch := b[:l:l]
	blob := batch[BatchHeaderSize:]
	count := uint64(0)
	for off := 0; off < len(blob); count++ {
		n, ok := frameLenAt(blob, off)
		if !ok || binary.LittleEndian.Uint64(blob[off+MessageOffReserved:]) != 0 {
			return Batch{}, nil, ErrInvalidCommand
		}
		off += n
	}
	if mc := binary.LittleEndian.Uint32(b[BatchOffMessageCount:]); mc == 0 || uint64(mc) != count {
		return Batch{}, nil, ErrInvalidCommand
	}
	return Batch{b: batch}, b[l:], nil
}
