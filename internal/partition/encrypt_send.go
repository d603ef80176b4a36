package partition

import (
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/storage"
)

// appendRecord appends one admitted batch of count messages to the
// partition: as received, or, when the partition is encrypted, sealed
// first into a pooled buffer (the single encrypt point; the storage Format
// then stamps the sealed record and recomputes its batch checksum). The
// buffer is reused as soon as Append returns, which does not retain it.
func (p *Plane) appendRecord(part *partition, rec []byte, count uint32) (storage.AppendResult, error) {
	c := part.crypt
	if c == nil {
		return part.log.Append(rec, count)
	}
	buf := c.cipher.GetBuffer()
	defer c.cipher.PutBuffer(buf)
	sealed, err := c.cipher.EncryptBatch((*buf)[:0], rec)
	*buf = sealed
	if err != nil {
		if errors.Is(err, encryption.ErrLayout) {
			// Admission validated the layout: only a length that no
			// longer fits its field once sealed gets here.
			return storage.AppendResult{}, fmt.Errorf("%w: %w", storage.ErrRecordTooLarge, err)
		}
		return storage.AppendResult{}, err
	}
	return part.log.Append(sealed, count)
}
