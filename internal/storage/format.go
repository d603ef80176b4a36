package storage

import (
	"errors"
	"fmt"
)

// RecordInfo holds the facts about one stored record that the log needs to
// index it and to check continuity.
type RecordInfo struct {
	// BaseOffset is the offset of the record's first message (batch header
	// base_offset).
	BaseOffset uint64
	// Count is the number of messages in the record (batch message_count);
	// the record covers offsets BaseOffset .. BaseOffset+Count-1.
	Count uint32
	// Timestamp is the server time of the append in microseconds since the
	// Unix epoch (batch base_timestamp). Every message of a batch shares it
	// (../shared/protocol/messages.md), so it is the index timestamp and the
	// value retention compares with message_expiry.
	Timestamp uint64
}

// Format adapts a record layout to the log. The broker implements it with the
// wire batch codec; the log itself treats records as opaque bytes.
//
// For the wire batch (../shared/protocol/messages.md) an implementation needs:
// HeaderLen 256; RecordLen from batch_length (u64 at 32, >= 256);
// Verify checks reserved bytes, that frames tile the blob, every frame
// checksum and the batch checksum (u64 at 40), and returns base_offset (u64 at
// 8), message_count (u32 at 48, >= 1) and base_timestamp (u64 at 16); Stamp
// writes base_offset and base_timestamp and recomputes batch_checksum.
//
// Implementations must be safe for concurrent use and must not retain the
// slices they are given.
type Format interface {
	// HeaderLen is the number of leading bytes of a record RecordLen needs.
	HeaderLen() int
	// RecordLen returns the total length of the record whose first
	// HeaderLen bytes are header, or an error if the header is malformed.
	RecordLen(header []byte) (int64, error)
	// Verify checks a complete record (len(rec) == RecordLen) and returns its
	// facts, or an error if it is corrupt.
	Verify(rec []byte) (RecordInfo, error)
	// Stamp writes the base offset and server timestamp the log assigned into
	// rec and recomputes any checksum covering them. It is called under the
	// partition's append lock, just before rec is written.
	Stamp(rec []byte, baseOffset, timestamp uint64)
}

// ErrCorrupt is matched (errors.Is) by every *CorruptError.
var ErrCorrupt = errors.New("storage: corrupt partition data")

// ErrClosed is returned by operations on a closed Partition or Offsets.
var ErrClosed = errors.New("storage: partition closed")

// ErrEmptyRecord is returned by Append for a record without bytes or messages.
var ErrEmptyRecord = errors.New("storage: empty record")

// ErrRecordTooLarge is returned by Append for a record longer than
// Options.MaxRecordBytes.
var ErrRecordTooLarge = errors.New("storage: record too large")

// CorruptError reports data that cannot be served safely. From Open: damage
// recovery cannot locate (a bad record in a sealed segment whose offsets
// nothing tells, an empty sealed segment) or a gap between segments; the
// partition does not open, and the server should log the error and stop
// serving only that partition (../shared/design/architecture.md
// "Storage"). Located damage is quarantined instead (Damaged). From
// ReadRecord: the record is quarantined.
type CorruptError struct {
	// Path is the file where the damage was found.
	Path string
	// Pos is the byte position in that file (-1 if not applicable).
	Pos int64
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any (for example from Format.Verify).
	Err error
}

// Error implements error.
func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("storage: corrupt %s at %d: %s", e.Path, e.Pos, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
