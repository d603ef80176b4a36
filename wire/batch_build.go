package wire

import (
	"encoding/binary"
	"math"

	"github.com/zeebo/xxh3"
)

// Message is one producer message to put in a batch.
type Message struct {
	// ID is written verbatim; the builder never mints ids (SDKs put a
	// random UUIDv4 here when the user gave none).
	ID Uint128
	// OriginTimestamp is the producer time in µs.
	OriginTimestamp uint64
	// Payload is the message body. An empty payload is allowed by the wire
	// format (the spec leaves its acceptance UNKNOWN; SDKs may refuse it).
	Payload []byte
	// UserHeaders is an encoded user-headers block (UserHeaders.AppendTo),
	// empty for none.
	UserHeaders []byte
}

// AppendBatch appends a producer batch holding msgs to dst (messages.md,
// "Producer encoding algorithm"), reusing dst's capacity, and returns the
// extended slice. See BatchBuilder for the rules and errors; on error dst
// is returned unchanged in length.
func AppendBatch(dst []byte, msgs []Message) ([]byte, error) {
	var b BatchBuilder
	b.Reset(dst)
	for i := range msgs {
		m := &msgs[i]
		if err := b.Add(m.ID, m.OriginTimestamp, m.Payload, m.UserHeaders); err != nil {
			return dst, err
		}
	}
	return b.Finish()
}

// BatchBuilder appends a producer batch message by message into a
// caller-owned buffer without allocating beyond that buffer's growth. The
// producer header fields are written the way the SDKs do: partition_id,
// base_offset and base_timestamp 0, origin_timestamp = the minimum message
// timestamp, offset_delta = frame index, timestamp_delta relative to the
// minimum, frame checksums and the batch checksum computed at Finish.
//
// The zero value is ready after Reset. A BatchBuilder is not safe for
// concurrent use.
type BatchBuilder struct {
	buf          []byte
	start        int
	count        uint32
	minTS, maxTS uint64
	started      bool
}

// Reset starts a new batch appended to dst (its 256-byte header is
// reserved now and filled by Finish).
func (b *BatchBuilder) Reset(dst []byte) {
	*b = BatchBuilder{buf: grow(dst, BatchHeaderSize), start: len(dst), minTS: math.MaxUint64, started: true}
}

// Count is the number of messages added since Reset.
func (b *BatchBuilder) Count() int { return int(b.count) }

// Add appends one message. It refuses, leaving the batch as it was:
//   - a payload over MaxPayloadSize: ErrTooBigMessagePayload;
//   - user headers over MaxUserHeadersSize: ErrTooBigUserHeaders;
//   - user headers breaking the TLV structure: ErrInvalidCommand
//     (ValidateUserHeaders);
//   - a timestamp more than MaxTimestampDelta µs from another message of
//     the batch: ErrInvalidMessageTimestampDelta;
//   - a message past u32::MAX frames: ErrTooManyMessages.
//
// Payload and headers are copied into the buffer.
func (b *BatchBuilder) Add(id Uint128, originTimestamp uint64, payload, userHeaders []byte) error {
	if !b.started {
		b.Reset(nil)
	}
	switch {
	case len(payload) > MaxPayloadSize:
		return ErrTooBigMessagePayload
	case len(userHeaders) > MaxUserHeadersSize:
		return ErrTooBigUserHeaders
	case b.count == math.MaxUint32:
		return ErrTooManyMessages
	}
	if len(userHeaders) > 0 {
		if _, err := ValidateUserHeaders(userHeaders); err != nil {
			return err
		}
	}
	lo, hi := min(b.minTS, originTimestamp), max(b.maxTS, originTimestamp)
	if hi-lo > MaxTimestampDelta {
		return ErrInvalidMessageTimestampDelta
	}
	b.minTS, b.maxTS = lo, hi
	at := len(b.buf)
	b.buf = grow(b.buf, MessageHeaderSize)
	h := b.buf[at:]
	binary.LittleEndian.PutUint64(h[MessageOffChecksum:], 0)
	PutUint128(h[MessageOffID:], id)
	binary.LittleEndian.PutUint32(h[MessageOffOffsetDelta:], b.count)
	binary.LittleEndian.PutUint32(h[MessageOffTimestampDelta:], 0)
	binary.LittleEndian.PutUint32(h[MessageOffUserHeadersLength:], uint32(len(userHeaders)))
	binary.LittleEndian.PutUint32(h[MessageOffPayloadLength:], uint32(len(payload)))
	// The absolute timestamp waits in the reserved field until Finish
	// knows the batch minimum; Finish zeroes it before hashing.
	binary.LittleEndian.PutUint64(h[MessageOffReserved:], originTimestamp)
	b.buf = append(b.buf, payload...)
	b.buf = append(b.buf, userHeaders...)
	b.count++
	return nil
}

// Finish completes the batch: timestamp deltas, frame checksums and the
// header, and returns the buffer given to Reset with the batch appended.
// An empty batch is refused with ErrInvalidMessagesCount (and the buffer
// is returned without the reserved header). The builder must be Reset
// before reuse.
func (b *BatchBuilder) Finish() ([]byte, error) {
	if b.count == 0 {
		out := b.buf[:b.start]
		*b = BatchBuilder{}
		return out, ErrInvalidMessagesCount
	}
	batch := b.buf[b.start:]
	hdr := BatchHeader{
		OriginTimestamp: b.minTS,
		BatchLength:     uint64(len(batch)),
		MessageCount:    b.count,
	}
	hdr.Put(batch)
	var h batchHasher
	h.start(batch)
	blob := batch[BatchHeaderSize:]
	for off := 0; off < len(blob); {
		n, ok := frameLenAt(blob, off)
		if !ok {
			break // only if the caller rewrote the buffer since Add
		}
		f := blob[off : off+n]
		ts := binary.LittleEndian.Uint64(f[MessageOffReserved:])
		binary.LittleEndian.PutUint32(f[MessageOffTimestampDelta:], uint32(ts-b.minTS))
		binary.LittleEndian.PutUint64(f[MessageOffReserved:], 0)
		binary.LittleEndian.PutUint64(f[MessageOffChecksum:], xxh3.Hash(f[8:]))
		h.write8(f)
		off += n
	}
	binary.LittleEndian.PutUint64(batch[BatchOffChecksum:], h.sum())
	out := b.buf
	*b = BatchBuilder{}
	return out, nil
}
