package wire

import (
	"encoding/binary"
	"math"

	"github.com/zeebo/xxh3"
)

// Batch geometry (messages.md): batch = [256-byte batch header][frame*],
// frame = [48-byte message header][payload][user headers].
const (
	// BatchHeaderSize is the fixed length of a batch header.
	BatchHeaderSize = 256
	// MessageHeaderSize is the fixed length of a frame (message) header.
	MessageHeaderSize = 48
	// MaxTimestampDelta is the largest timestamp_delta: a batch spans at
	// most u32::MAX µs (~71.6 min) of producer clock.
	MaxTimestampDelta = math.MaxUint32
	// MaxPayloadSize is the SDK-side cap on one message payload (Go SDK
	// MaxPayloadSize). The reference server does not enforce it on the
	// binary path; BatchBuilder does.
	MaxPayloadSize = 64_000_000
	// batchChecksumFields is the hashed header prefix of the batch
	// checksum: partition_id, base_offset, base_timestamp,
	// origin_timestamp, batch_length (40 bytes) and message_count (4).
	batchChecksumFields = 44
)

// Byte offsets of the batch header fields (messages.md, "Batch header").
const (
	BatchOffPartitionID     = 0
	BatchOffBaseOffset      = 8
	BatchOffBaseTimestamp   = 16
	BatchOffOriginTimestamp = 24
	BatchOffLength          = 32
	BatchOffChecksum        = 40
	BatchOffMessageCount    = 48
	// BatchOffReserved starts the 204 reserved bytes, which must be zero.
	BatchOffReserved = 52
)

// Byte offsets of the frame header fields (messages.md, "Frame header").
const (
	MessageOffChecksum          = 0
	MessageOffID                = 8
	MessageOffOffsetDelta       = 24
	MessageOffTimestampDelta    = 28
	MessageOffUserHeadersLength = 32
	MessageOffPayloadLength     = 36
	// MessageOffReserved is a u64 that must be zero.
	MessageOffReserved = 40
)

// BatchHeader is the decoded 256-byte batch header. The 204 reserved bytes
// are not represented: encoders write zeros and decoders require zeros.
type BatchHeader struct {
	// PartitionID is stamped by the server at admission (producers write 0).
	PartitionID uint64
	// BaseOffset is the offset of the frame with offset_delta 0, stamped
	// by the server when appending.
	BaseOffset uint64
	// BaseTimestamp is the append time in µs, stamped by the server; every
	// message of the batch reports it as its broker timestamp.
	BaseTimestamp uint64
	// OriginTimestamp is the minimum producer timestamp of the messages (µs).
	OriginTimestamp uint64
	// BatchLength is 256 + the length of the frames.
	BatchLength uint64
	// Checksum is the batch checksum (see BatchChecksum).
	Checksum uint64
	// MessageCount is the number of frames, at least 1.
	MessageCount uint32
}

// Put writes the header into b[:256], zeroing the reserved bytes.
func (h *BatchHeader) Put(b []byte) {
	_ = b[BatchHeaderSize-1]
	binary.LittleEndian.PutUint64(b[BatchOffPartitionID:], h.PartitionID)
	binary.LittleEndian.PutUint64(b[BatchOffBaseOffset:], h.BaseOffset)
	binary.LittleEndian.PutUint64(b[BatchOffBaseTimestamp:], h.BaseTimestamp)
	binary.LittleEndian.PutUint64(b[BatchOffOriginTimestamp:], h.OriginTimestamp)
	binary.LittleEndian.PutUint64(b[BatchOffLength:], h.BatchLength)
	binary.LittleEndian.PutUint64(b[BatchOffChecksum:], h.Checksum)
	binary.LittleEndian.PutUint32(b[BatchOffMessageCount:], h.MessageCount)
	clear(b[BatchOffReserved:BatchHeaderSize])
}

// AppendTo appends the 256-byte header.
func (h *BatchHeader) AppendTo(dst []byte) []byte {
	dst = grow(dst, BatchHeaderSize)
	h.Put(dst[len(dst)-BatchHeaderSize:])
	return dst
}

// Decode reads exactly 256 bytes; non-zero reserved bytes are
// ErrInvalidCommand (messages.md, "Server admission").
func (h *BatchHeader) Decode(src []byte) error {
	if len(src) != BatchHeaderSize || !batchReservedZero(src) {
		return ErrInvalidCommand
	}
	*h = readBatchHeader(src)
	return nil
}

// readBatchHeader reads the header fields of b[:256] without checks.
func readBatchHeader(b []byte) BatchHeader {
	_ = b[BatchHeaderSize-1]
	return BatchHeader{
		PartitionID:     binary.LittleEndian.Uint64(b[BatchOffPartitionID:]),
		BaseOffset:      binary.LittleEndian.Uint64(b[BatchOffBaseOffset:]),
		BaseTimestamp:   binary.LittleEndian.Uint64(b[BatchOffBaseTimestamp:]),
		OriginTimestamp: binary.LittleEndian.Uint64(b[BatchOffOriginTimestamp:]),
		BatchLength:     binary.LittleEndian.Uint64(b[BatchOffLength:]),
		Checksum:        binary.LittleEndian.Uint64(b[BatchOffChecksum:]),
		MessageCount:    binary.LittleEndian.Uint32(b[BatchOffMessageCount:]),
	}
}

// batchReservedZero reports whether bytes 52..256 of a batch header are zero.
func batchReservedZero(b []byte) bool {
	_ = b[BatchHeaderSize-1]
	if binary.LittleEndian.Uint32(b[BatchOffReserved:]) != 0 {
		return false
	}
	// 56..256 is 200 bytes: 25 words.
	var acc uint64
	for i := BatchOffReserved + 4; i < BatchHeaderSize; i += 8 {
		acc |= binary.LittleEndian.Uint64(b[i:])
	}
	return acc == 0
}

// MessageHeader is the decoded 48-byte frame header. The reserved u64 is
// not represented: encoders write zero and decoders require zero.
type MessageHeader struct {
	// Checksum is XXH3-64 of frame bytes [8, end of frame).
	Checksum uint64
	// ID is the message id (producers must set it; the server never mints).
	ID Uint128
	// OffsetDelta is the frame index the producer wrote; the message offset
	// is base_offset + OffsetDelta.
	OffsetDelta uint32
	// TimestampDelta is the producer time minus the batch origin timestamp (µs).
	TimestampDelta uint32
	// UserHeadersLength is the length of the user-headers block after the payload.
	UserHeadersLength uint32
	// PayloadLength is the length of the payload after the header.
	PayloadLength uint32
}

// FrameLen is the whole frame's length: 48 + payload + user headers.
func (h *MessageHeader) FrameLen() uint64 {
	return MessageHeaderSize + uint64(h.PayloadLength) + uint64(h.UserHeadersLength)
}

// Put writes the header into b[:48] with a zero reserved field.
func (h *MessageHeader) Put(b []byte) {
	_ = b[MessageHeaderSize-1]
	binary.LittleEndian.PutUint64(b[MessageOffChecksum:], h.Checksum)
	PutUint128(b[MessageOffID:], h.ID)
	binary.LittleEndian.PutUint32(b[MessageOffOffsetDelta:], h.OffsetDelta)
	binary.LittleEndian.PutUint32(b[MessageOffTimestampDelta:], h.TimestampDelta)
	binary.LittleEndian.PutUint32(b[MessageOffUserHeadersLength:], h.UserHeadersLength)
	binary.LittleEndian.PutUint32(b[MessageOffPayloadLength:], h.PayloadLength)
	binary.LittleEndian.PutUint64(b[MessageOffReserved:], 0)
}

// AppendTo appends the 48-byte header.
func (h *MessageHeader) AppendTo(dst []byte) []byte {
	dst = grow(dst, MessageHeaderSize)
	h.Put(dst[len(dst)-MessageHeaderSize:])
	return dst
}

// Decode reads exactly 48 bytes; a non-zero reserved field is
// ErrInvalidCommand.
func (h *MessageHeader) Decode(src []byte) error {
	if len(src) != MessageHeaderSize || binary.LittleEndian.Uint64(src[MessageOffReserved:]) != 0 {
		return ErrInvalidCommand
	}
	*h = readMessageHeader(src)
	return nil
}

func readMessageHeader(b []byte) MessageHeader {
	_ = b[MessageHeaderSize-1]
	return MessageHeader{
		Checksum:          binary.LittleEndian.Uint64(b[MessageOffChecksum:]),
		ID:                GetUint128(b[MessageOffID:]),
		OffsetDelta:       binary.LittleEndian.Uint32(b[MessageOffOffsetDelta:]),
		TimestampDelta:    binary.LittleEndian.Uint32(b[MessageOffTimestampDelta:]),
		UserHeadersLength: binary.LittleEndian.Uint32(b[MessageOffUserHeadersLength:]),
		PayloadLength:     binary.LittleEndian.Uint32(b[MessageOffPayloadLength:]),
	}
}

// MessageChecksum computes a frame checksum (messages.md, "Frame
// checksum"): XXH3-64 (seed 0) of frame[8:], i.e. the 40 header bytes after
// the checksum field, the payload and the user headers. frame must be one
// whole frame; a slice shorter than a frame header hashes to 0.
func MessageChecksum(frame []byte) uint64 {
	if len(frame) < MessageHeaderSize {
		return 0
	}
	return xxh3.Hash(frame[MessageOffChecksum+8:])
}

// BatchChecksum computes the batch checksum of a batch whose frames tile
// batch[256:] (messages.md, "Batch checksum"): XXH3-64 of header bytes
// 0..40 and 48..52 followed by each frame's 8 checksum bytes as stored.
// The stored batch checksum and reserved bytes are not hashed. Frames are
// walked with bounds checks; a walk that cannot continue hashes the frames
// seen so far. A slice shorter than a batch header hashes to 0.
func BatchChecksum(batch []byte) uint64 {
	if len(batch) < BatchHeaderSize {
		return 0
	}
	var h batchHasher
	h.start(batch)
	blob := batch[BatchHeaderSize:]
	for off := 0; ; {
		n, ok := frameLenAt(blob, off)
		if !ok {
			break
		}
		h.write8(blob[off:])
		off += n
	}
	return h.sum()
}

// frameLenAt returns the length of the frame starting at blob[off] when
// its header and body fit in blob.
func frameLenAt(blob []byte, off int) (int, bool) {
	rest := len(blob) - off
	if rest < MessageHeaderSize {
		return 0, false
	}
	f := blob[off:]
	n := MessageHeaderSize + uint64(binary.LittleEndian.Uint32(f[MessageOffPayloadLength:])) +
		uint64(binary.LittleEndian.Uint32(f[MessageOffUserHeadersLength:]))
	if n > uint64(rest) {
		return 0, false
	}
	return int(n), true
}

// batchHasherBuf is how much checksum input batchHasher gathers before it
// streams: 44 + 8·n bytes fit one-shot hashing for up to 122 frames.
const batchHasherBuf = 1024

// batchHasher computes the batch checksum without allocating: it gathers
// the input in a fixed buffer and only falls back to the streaming hasher
// (identical result, default seed) for large batches.
type batchHasher struct {
	n         int
	streaming bool
	buf       [batchHasherBuf]byte
	h         xxh3.Hasher
}

// start feeds the 44 hashed header bytes of b.
func (a *batchHasher) start(b []byte) {
	a.n = copy(a.buf[:], b[:BatchOffChecksum])
	a.n += copy(a.buf[a.n:], b[BatchOffMessageCount:BatchOffMessageCount+4])
}

// startFields feeds header fields given as values (used when slicing).
func (a *batchHasher) startFields(partitionID, baseOffset, baseTimestamp, originTimestamp, length uint64, count uint32) {
	b := a.buf[:batchChecksumFields]
	binary.LittleEndian.PutUint64(b[0:], partitionID)
	binary.LittleEndian.PutUint64(b[8:], baseOffset)
	binary.LittleEndian.PutUint64(b[16:], baseTimestamp)
	binary.LittleEndian.PutUint64(b[24:], originTimestamp)
	binary.LittleEndian.PutUint64(b[32:], length)
	binary.LittleEndian.PutUint32(b[40:], count)
	a.n = batchChecksumFields
}

// write8 feeds the 8 bytes at p[0:8] (a frame checksum field).
func (a *batchHasher) write8(p []byte) {
	if a.n+8 > len(a.buf) {
		_, _ = a.h.Write(a.buf[:a.n])
		a.streaming = true
		a.n = 0
	}
	copy(a.buf[a.n:a.n+8], p[:8])
	a.n += 8
}

func (a *batchHasher) sum() uint64 {
	if !a.streaming {
		return xxh3.Hash(a.buf[:a.n])
	}
	_, _ = a.h.Write(a.buf[:a.n])
	return a.h.Sum64()
}
