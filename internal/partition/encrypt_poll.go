package partition

import (
	"errors"
	"fmt"
	"math"

	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// errUnreadable is a stored record of an encrypted partition that does
// not decrypt (modified on disk) or does not parse; the poll is answered
// with status 4011 (CannotReadMessage) instead of an empty reply, so a
// consumer sees that it is stuck rather than that there is nothing.
var errUnreadable = errors.New("partition: a stored record cannot be decrypted")

// fillDecrypted is fill for an encrypted partition, the single decrypt
// point: the stored records of the read are copied into memory, and each
// selected record (or slice of one, re-headed with wire.Batch.AppendSlice
// before decrypting) is appended to r.head in plaintext form, with
// plaintext lengths, message checksums and batch checksum, exactly as the
// record was before encryption (after stamping). Records stored before
// encryption was enabled (below the partition's plainBefore offset) are
// copied as stored. Nothing goes through the file-extent Tail, so the
// reply holds no sendfile part.
func (p *Plane) fillDecrypted(r *pollReply, part *partition, exts []storage.Extent, start, target uint64) (last, n uint64, err error) {
	c := part.crypt
	plainBefore := c.plainBefore.Load()
	scratch := c.cipher.GetBuffer()
	defer c.cipher.PutBuffer(scratch)
	for i := range exts {
		buf, err := r.readExtent(&exts[i])
		if err != nil {
			return 0, 0, err
		}
		for len(buf) > 0 {
			v, rest, err := wire.ParseBatch(buf)
			if err != nil {
				p.log.Error("poll: a stored record does not parse", "dir", part.dir, "err", err)
				return 0, 0, fmt.Errorf("%w: %w", errUnreadable, err)
			}
			buf = rest
			base := v.BaseOffset()
			if base >= target {
				break
			}
			from := max(start, base)
			first, k := v.Select(from, uint32(min(target-from, math.MaxUint32)))
			if k == 0 {
				continue
			}
			switch {
			case base < plainBefore:
				r.head = v.AppendSlice(r.head, first, k)
			case first == 0 && k == int(v.MessageCount()):
				r.head, err = c.cipher.DecryptBatch(r.head, v.Bytes())
			default:
				*scratch = v.AppendSlice((*scratch)[:0], first, k)
				r.head, err = c.cipher.DecryptBatch(r.head, *scratch)
			}
			if err != nil {
				p.log.Error("poll: a stored record does not decrypt with the configured key (modified on disk?)",
					"dir", part.dir, "base_offset", base, "err", err)
				return 0, 0, fmt.Errorf("%w at base offset %d: %w", errUnreadable, base, err)
			}
			n += uint64(k)
		}
	}
	end := min(exts[len(exts)-1].EndOffset, target)
	if n == 0 || end == 0 {
		return 0, 0, nil
	}
	return end - 1, n, nil
}
