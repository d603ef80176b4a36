package commit

import (
	"encoding/binary"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// BatchFormat is the storage.Format a partition's batches rest in, in
// both modes: the wire batch (messages.md), one record per stamped batch.
// Each partition has its own value because Stamp also writes the
// partition id (admission stamping) so that stamping and the checksum
// recomputation happen once, under the append lock.
type BatchFormat struct {
	PartitionID uint64
}

var _ storage.Format = BatchFormat{}

// HeaderLen is the batch header length.
func (BatchFormat) HeaderLen() int { return wire.BatchHeaderSize }

// RecordLen returns batch_length; values below a header are corrupt.
func (BatchFormat) RecordLen(header []byte) (int64, error) {
	if len(header) < wire.BatchHeaderSize {
		return 0, wire.ErrInvalidCommand
	}
	l := binary.LittleEndian.Uint64(header[wire.BatchOffLength:])
	if l < wire.BatchHeaderSize || l > 1<<62 {
		return 0, wire.ErrInvalidCommand
	}
	return int64(l), nil
}

// Verify runs the admission checks on a stored record (every frame
// checksum and the batch checksum over the stamped header).
func (BatchFormat) Verify(rec []byte) (storage.RecordInfo, error) {
	v, err := wire.ValidateBatch(rec)
	if err != nil {
		return storage.RecordInfo{}, err
	}
	return storage.RecordInfo{BaseOffset: v.BaseOffset(), Count: v.MessageCount(), Timestamp: v.BaseTimestamp()}, nil
}

// Stamp writes partition_id, base_offset and base_timestamp and
// recomputes the batch checksum (wire.Batch.Stamp).
func (f BatchFormat) Stamp(rec []byte, baseOffset, timestamp uint64) {
	b, _, err := wire.ParseBatch(rec)
	if err != nil {
		return // never happens: records are admitted before Append
	}
	b.Stamp(f.PartitionID, baseOffset, timestamp)
}
