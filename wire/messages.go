package wire

import "encoding/binary"

// SendMessages is the body of SEND_MESSAGES (code 101, operation 160;
// messages.md, "SendMessages body"):
//
//	[metadata_length u32]
//	[stream_id Identifier][topic_id Identifier][partitioning Partitioning][messages_count u32]
//	[batch]
//
// metadata_length counts the four metadata fields (not itself); the batch
// must end exactly at the end of the body.
type SendMessages struct {
	StreamID     Identifier
	TopicID      Identifier
	Partitioning Partitioning
	// MessagesCount is the metadata messages_count, written as is.
	// SetBatch fills it from the batch header.
	MessagesCount uint32
	// Batch is the encoded batch (BatchBuilder, AppendBatch). A decoded
	// batch aliases the body (no copy).
	Batch []byte
}

// SetBatch sets the batch and copies its message_count into
// MessagesCount (0 when the batch is shorter than its header).
func (s *SendMessages) SetBatch(batch []byte) {
	s.Batch = batch
	s.MessagesCount = 0
	if len(batch) >= BatchHeaderSize {
		s.MessagesCount = binary.LittleEndian.Uint32(batch[BatchOffMessageCount:])
	}
}

// Validate checks the metadata can be encoded.
func (s *SendMessages) Validate() error {
	if err := s.StreamID.Validate(); err != nil {
		return err
	}
	if err := s.TopicID.Validate(); err != nil {
		return err
	}
	return s.Partitioning.Validate()
}

// MetadataLen is the metadata_length the body carries.
func (s *SendMessages) MetadataLen() int {
	return s.StreamID.EncodedLen() + s.TopicID.EncodedLen() + s.Partitioning.EncodedLen() + 4
}

// AppendTo appends the body: metadata section then the batch bytes.
func (s *SendMessages) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(s.MetadataLen()))
	dst = s.StreamID.AppendTo(dst)
	dst = s.TopicID.AppendTo(dst)
	dst = s.Partitioning.AppendTo(dst)
	dst = appendU32(dst, s.MessagesCount)
	return append(dst, s.Batch...)
}

// DecodeMetadata decodes only the metadata section (what the server needs
// before dispatch to resolve stream, topic and partition) and sets Batch
// to the unchecked bytes after it. Errors are ErrInvalidCommand: body
// shorter than 4, 4 + metadata_length past the body, or metadata that does
// not decode to exactly metadata_length bytes.
func (s *SendMessages) DecodeMetadata(src []byte) error {
	if len(src) < 4 {
		return ErrInvalidCommand
	}
	ml := binary.LittleEndian.Uint32(src)
	if uint64(ml) > uint64(len(src)-4) {
		return ErrInvalidCommand
	}
	r := newReader(src[4 : 4+ml])
	s.StreamID = r.identifier()
	s.TopicID = r.identifier()
	s.Partitioning = r.partitioning()
	s.MessagesCount = r.u32()
	if err := r.finish(); err != nil {
		return err
	}
	s.Batch = src[4+ml:]
	return nil
}

// Decode decodes a whole body and checks the batch layout (ParseBatch
// rules, metadata messages_count equal to message_count, nothing after
// the batch) but not checksums: clients and tests use it; a server uses
// Admit. Any failure is ErrInvalidCommand. Batch aliases src.
func (s *SendMessages) Decode(src []byte) error {
	if err := s.DecodeMetadata(src); err != nil {
		return err
	}
	v, rest, err := ParseBatch(s.Batch)
	if err != nil {
		return err
	}
	if v.MessageCount() != s.MessagesCount || len(rest) != 0 {
		return ErrInvalidCommand
	}
	s.Batch = v.Bytes()
	return nil
}

// Admit decodes a body with every check of the server's admission, in the
// documented order (messages.md, "Server admission", partition stage),
// and returns the batch as a view into src, ready for Stamp:
//
//   - metadata (DecodeMetadata): ErrInvalidCommand;
//   - batch header, lengths, frames, checksums (ValidateBatch order):
//     ErrInvalidCommand, ErrInvalidMessageChecksum (4027),
//     ErrInvalidBatchChecksum (4039);
//   - message_count ≥ 1 and equal to the metadata messages_count:
//     ErrInvalidCommand;
//   - batch_length equal to the rest of the body: ErrInvalidCommand.
//
// It never allocates except for string identifiers.
func (s *SendMessages) Admit(src []byte) (Batch, error) {
	if err := s.DecodeMetadata(src); err != nil {
		return Batch{}, err
	}
	v, err := admitBatch(s.Batch)
	if err != nil {
		return Batch{}, err
	}
	if mc := v.MessageCount(); mc == 0 || mc != s.MessagesCount || v.Len() != len(s.Batch) {
		return Batch{}, ErrInvalidCommand
	}
	return v, nil
}

// SendConfirmationSize is the frozen stride of one confirmation.
const SendConfirmationSize = 20

// SendConfirmation reports one partition a SendMessages wrote:
// [stream_id u32][topic_id u32][partition_id u32][base_offset u64], where
// base_offset is the offset of the batch's first message.
type SendConfirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// SendMessagesReply is the success payload of SEND_MESSAGES, not
// result-framed (commands.md §101): [confirmations_count u32] then 20-byte
// confirmations. The reference server sends one. An empty body is
// invalid; trailing bytes are invalid. A count of 0 (a 4-byte body) is
// accepted: the spec does not forbid it, and a partition-plane duplicate
// is answered without offset confirmations (upstream-framing.md).
type SendMessagesReply struct {
	Confirmations []SendConfirmation
}

// AppendTo appends the reply body.
func (s *SendMessagesReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(s.Confirmations)))
	for _, c := range s.Confirmations {
		dst = appendU32(dst, c.StreamID)
		dst = appendU32(dst, c.TopicID)
		dst = appendU32(dst, c.PartitionID)
		dst = appendU64(dst, c.BaseOffset)
	}
	return dst
}

// Decode decodes the reply, reusing the Confirmations backing array. The
// count must match the body length exactly (ErrInvalidCommand otherwise,
// including for an empty body).
func (s *SendMessagesReply) Decode(src []byte) error {
	r := newReader(src)
	n := r.u32()
	if r.err != nil || uint64(n)*SendConfirmationSize != uint64(r.remaining()) {
		return ErrInvalidCommand
	}
	out := s.Confirmations[:0]
	if cap(out) < int(n) {
		out = make([]SendConfirmation, 0, n)
	}
	for range n {
		out = append(out, SendConfirmation{StreamID: r.u32(), TopicID: r.u32(), PartitionID: r.u32(), BaseOffset: r.u64()})
	}
	s.Confirmations = out
	return r.finish()
}

// FlushUnsavedBuffer is the body of FLUSH_UNSAVED_BUFFER (code 102,
// operation 2): [stream_id][topic_id][partition_id u32][fsync u8]. The
// reference server always denies it with FeatureUnavailable (5). A
// non-zero fsync byte decodes as true (a choice; encoders write 0/1).
type FlushUnsavedBuffer struct {
	StreamID    Identifier
	TopicID     Identifier
	PartitionID uint32
	Fsync       bool
}

// AppendTo appends the body.
func (f *FlushUnsavedBuffer) AppendTo(dst []byte) []byte {
	dst = f.StreamID.AppendTo(dst)
	dst = f.TopicID.AppendTo(dst)
	dst = appendU32(dst, f.PartitionID)
	return appendBool(dst, f.Fsync)
}

// Decode decodes the fields and ignores trailing bytes.
func (f *FlushUnsavedBuffer) Decode(src []byte) error {
	r := newReader(src)
	f.StreamID = r.identifier()
	f.TopicID = r.identifier()
	f.PartitionID = r.u32()
	f.Fsync = r.u8() != 0
	return r.done()
}
