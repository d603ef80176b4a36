package encryption

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/iggo-dev/iggo/wire"
)

// sections counts the sections EncryptBatch seals in the batch v (the
// payload of every message, the user headers when non-empty) and checks
// that every sealed length still fits its u32 field.
func sections(v wire.Batch) (int, error) {
	n := 0
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		b := m.Bytes()
		pl := binary.LittleEndian.Uint32(b[wire.MessageOffPayloadLength:])
		uh := binary.LittleEndian.Uint32(b[wire.MessageOffUserHeadersLength:])
		if pl > math.MaxUint32-Overhead || uh > math.MaxUint32-Overhead {
			return 0, ErrLayout
		}
		n++
		if uh > 0 {
			n++
		}
	}
	return n, nil
}

// EncryptBatch appends to dst the stored form of batch (one whole batch,
// messages.md layout, as ValidateBatch or ParseBatch accepts it): the
// batch header and every message header are kept, each message's payload
// and non-empty user headers are replaced by their sealed form, the two
// lengths become the sealed lengths, and every message checksum, the
// batch length and the batch checksum are recomputed over the result.
// An empty user-headers block stays empty. dst must not overlap batch.
// Apart from growing dst, it does not allocate.
func (c *Cipher) EncryptBatch(dst, batch []byte) ([]byte, error) {
	v, rest, err := wire.ParseBatch(batch)
	if err != nil || len(rest) != 0 {
		return dst, ErrLayout
	}
	k, err := sections(v)
	if err != nil {
		return dst, err
	}
	size := len(batch) + k*Overhead
	if uint64(size) > math.MaxUint32 {
		return dst, ErrLayout
	}
	nb := c.getNonces(k * NonceSize)
	defer c.putNonces(nb)
	nonces := *nb
	if _, err := rand.Read(nonces); err != nil {
		return dst, fmt.Errorf("encryption: nonces: %w", err)
	}
	out := slices.Grow(dst, size)
	at := len(out)
	out = append(out, batch[:wire.BatchHeaderSize]...)
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		f := m.Bytes()
		pay, hdrs := m.Payload(), m.UserHeaders()
		h := len(out)
		out = append(out, f[:wire.MessageHeaderSize]...)
		out = c.seal(out, nonces[:NonceSize], pay)
		nonces = nonces[NonceSize:]
		if len(hdrs) > 0 {
			out = c.seal(out, nonces[:NonceSize], hdrs)
			nonces = nonces[NonceSize:]
			binary.LittleEndian.PutUint32(out[h+wire.MessageOffUserHeadersLength:], uint32(len(hdrs)+Overhead))
		}
		binary.LittleEndian.PutUint32(out[h+wire.MessageOffPayloadLength:], uint32(len(pay)+Overhead))
		binary.LittleEndian.PutUint64(out[h+wire.MessageOffChecksum:], wire.MessageChecksum(out[h:]))
	}
	stored := out[at:]
	binary.LittleEndian.PutUint64(stored[wire.BatchOffLength:], uint64(len(stored)))
	binary.LittleEndian.PutUint64(stored[wire.BatchOffChecksum:], wire.BatchChecksum(stored))
	return out, nil
}

// DecryptBatch appends to dst the plaintext form of one stored batch rec
// (the inverse of EncryptBatch, also for a slice of a stored batch
// re-headed with wire.Batch.AppendSlice): every payload and non-empty
// user-headers section is opened, the lengths are the plaintext lengths,
// and the message checksums (over the plaintext, as the producer computed
// them), the batch length and the batch checksum are recomputed. The
// stamped header fields are kept. A layout that is not a stored batch, or
// a sealed section shorter than Overhead, is ErrLayout; a section that
// does not authenticate is ErrAuth. On error dst is returned with its
// length unchanged. dst must not overlap rec. Apart from growing dst, it
// does not allocate.
func (c *Cipher) DecryptBatch(dst, rec []byte) ([]byte, error) {
	v, rest, err := wire.ParseBatch(rec)
	if err != nil || len(rest) != 0 {
		return dst, ErrLayout
	}
	// The plaintext is shorter than the stored form.
	out := slices.Grow(dst, len(rec))
	at := len(out)
	out = append(out, rec[:wire.BatchHeaderSize]...)
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		f := m.Bytes()
		pay, hdrs := m.Payload(), m.UserHeaders()
		if len(pay) < Overhead || (len(hdrs) > 0 && len(hdrs) < Overhead) {
			return dst, ErrLayout
		}
		h := len(out)
		out = append(out, f[:wire.MessageHeaderSize]...)
		if out, err = c.Open(out, pay); err != nil {
			return dst, err
		}
		plain := uint32(len(pay) - Overhead)
		if len(hdrs) > 0 {
			if out, err = c.Open(out, hdrs); err != nil {
				return dst, err
			}
			binary.LittleEndian.PutUint32(out[h+wire.MessageOffUserHeadersLength:], uint32(len(hdrs)-Overhead))
		}
		binary.LittleEndian.PutUint32(out[h+wire.MessageOffPayloadLength:], plain)
		binary.LittleEndian.PutUint64(out[h+wire.MessageOffChecksum:], wire.MessageChecksum(out[h:]))
	}
	plain := out[at:]
	binary.LittleEndian.PutUint64(plain[wire.BatchOffLength:], uint64(len(plain)))
	binary.LittleEndian.PutUint64(plain[wire.BatchOffChecksum:], wire.BatchChecksum(plain))
	return out, nil
}

// VerifyBatch reports whether rec, a stored batch as EncryptBatch makes
// it, was sealed with this key: it opens the first message's payload
// (its plaintext is discarded). ErrAuth means another key; ErrLayout a
// record that is not a sealed batch. One AEAD open per batch, whatever
// its size: a cluster node checks this way that the leader's key is its
// own before it stores the leader's ciphertext.
func (c *Cipher) VerifyBatch(rec []byte) error {
	v, rest, err := wire.ParseBatch(rec)
	if err != nil || len(rest) != 0 {
		return ErrLayout
	}
	it := v.Messages()
	m, ok := it.Next()
	if !ok {
		return ErrLayout
	}
	buf := c.GetBuffer()
	defer c.PutBuffer(buf)
	out, err := c.Open((*buf)[:0], m.Payload())
	*buf = out[:0]
	return err
}
