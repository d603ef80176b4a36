package partition

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/wire"
)

// seal returns the record a send commits: rec itself, or, when the
// partition is encrypted, rec sealed into a pooled buffer (the single
// encrypt point of both modes: the storage Format, or the leader's
// stamping, then stamps the sealed record and recomputes its batch
// checksum, and every replica stores the leader's ciphertext). buf, when
// not nil, goes back with part.crypt.cipher.PutBuffer once the commit has
// returned (neither path retains it). A non-zero code is the answer when
// sealing failed.
func (p *Plane) seal(part *partition, rec []byte) (sealed []byte, buf *[]byte, code uint32) {
	c := part.crypt
	if c == nil {
		return rec, nil, 0
	}
	buf = c.cipher.GetBuffer()
	sealed, err := c.cipher.EncryptBatch((*buf)[:0], rec)
	*buf = sealed
	if err != nil {
		c.cipher.PutBuffer(buf)
		if errors.Is(err, encryption.ErrLayout) {
			// Admission validated the layout: only a length that no
			// longer fits its field once sealed gets here.
			return nil, nil, wire.ErrInvalidCommand.Code
		}
		p.log.Warn("encrypt batch", "dir", part.dir, "err", err)
		return nil, nil, wire.ErrCannotAppendMessage.Code
	}
	return sealed, buf, 0
}

// fitsRecord reports whether a batch of len n with count messages can be
// stored once sealed (if encrypted): storage refuses a larger record, and
// in cluster mode every replica would refuse it alike after the leader
// already advanced the stamping tail past it.
func (p *Plane) fitsRecord(part *partition, n int, count uint32) bool {
	size := int64(n)
	if part.crypt != nil {
		size += 2 * int64(count) * encryption.Overhead
	}
	return size <= p.opts.MaxFrameBytes
}
