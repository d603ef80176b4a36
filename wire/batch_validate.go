package wire

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// ValidateBatch runs the server's admission checks (messages.md, "Server
// admission") on a batch that must span b exactly, in place and without
// allocating, and returns a view of it. Checks and errors, in this order:
//
//   - b holds a 256-byte header, batch_length ≥ 256, reserved bytes 52..256
//     zero: ErrInvalidCommand;
//   - b holds at least batch_length bytes: ErrInvalidCommand;
//   - per frame, in order: the frame header fits, its reserved u64 is zero
//     and payload/user headers stay within the batch (ErrInvalidCommand),
//     then its checksum matches (ErrInvalidMessageChecksum, 4027);
//   - the frames tile the batch and their number equals message_count:
//     ErrInvalidCommand;
//   - the batch checksum over the header as sent matches
//     (ErrInvalidBatchChecksum, 4039);
//   - message_count ≥ 1: ErrInvalidCommand;
//   - batch_length == len(b): ErrInvalidCommand.
//
// User headers are not validated: the reference server treats them as
// opaque bytes on this path. Size limits beyond these lengths are the
// transport's frame limit.
func ValidateBatch(b []byte) (Batch, error) {
	v, err := admitBatch(b)
	if err != nil {
		return Batch{}, err
	}
	if v.MessageCount() == 0 || v.Len() != len(b) {
		return Batch{}, ErrInvalidCommand
	}
	return v, nil
}

// admitBatch runs the admission checks up to and including the batch
// checksum on the batch at the start of b (b may be longer) and returns a
// view of batch_length bytes. The caller checks message_count ≥ 1 (and any
// expected count) and that nothing follows the batch.
func admitBatch(b []byte) (Batch, error) {
	if len(b) < BatchHeaderSize || !batchReservedZero(b) {
		return Batch{}, ErrInvalidCommand
	}
	l := binary.LittleEndian.Uint64(b[BatchOffLength:])
	if l < BatchHeaderSize || l > uint64(len(b)) {
		return Batch{}, ErrInvalidCommand
	}
	batch := b[:l:l]
	blob := batch[BatchHeaderSize:]
	var h batchHasher
	h.start(batch)
	count := uint64(0)
	for off := 0; off < len(blob); count++ {
		n, ok := frameLenAt(blob, off)
		if !ok || binary.LittleEndian.Uint64(blob[off+MessageOffReserved:]) != 0 {
			return Batch{}, ErrInvalidCommand
		}
		f := blob[off : off+n]
		if xxh3.Hash(f[8:]) != binary.LittleEndian.Uint64(f) {
			return Batch{}, ErrInvalidMessageChecksum
		}
		h.write8(f)
		off += n
	}
	if count != uint64(binary.LittleEndian.Uint32(batch[BatchOffMessageCount:])) {
		return Batch{}, ErrInvalidCommand
	}
	if h.sum() != binary.LittleEndian.Uint64(batch[BatchOffChecksum:]) {
		return Batch{}, ErrInvalidBatchChecksum
	}
	return Batch{b: batch}, nil
}
