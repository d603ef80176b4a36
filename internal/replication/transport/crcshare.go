package transport

import (
	"hash/crc32"
	"sync"
)

// crcCacheLen is how many recent entries a crcCache remembers: the
// writers of one flush run within microseconds of each other, and every
// remembered entry stays in memory until it is displaced (with 1 MB
// batches a longer list made the collector's heap target, and the fresh
// memory written per batch, grow).
const crcCacheLen = 8

// crcCache remembers the CRC-32C of the large raft entries written
// recently, so that the leader's writers (one per follower) checksum an
// entry once, not once per follower, and combine that sum into each
// frame's (crcCombine). It holds only entry data: raft hands out its own
// copy of a proposal, and no replica modifies an entry it holds, so the
// bytes behind a remembered slice never change; and the cache keeps the
// slices it remembers, so their memory is not reused while they are in it.
// Other data written from where it lies (a forwarded poll reply) may live
// in a recycled buffer and is never remembered.
type crcCache struct {
	mu   sync.Mutex
	ents [crcCacheLen]crcEntry
	next int
}

type crcEntry struct {
	data []byte
	crc  uint32
}

// sum returns the CRC-32C of data (not empty), computing it only if data
// is not one of the slices remembered.
func (c *crcCache) sum(data []byte) uint32 {
	c.mu.Lock()
	for i := range c.ents {
		e := &c.ents[i]
		if len(e.data) == len(data) && &e.data[0] == &data[0] {
			crc := e.crc
			c.mu.Unlock()
			return crc
		}
	}
	c.mu.Unlock()
	crc := crc32.Checksum(data, crcTable)
	c.mu.Lock()
	c.ents[c.next] = crcEntry{data: data, crc: crc}
	c.next = (c.next + 1) % crcCacheLen
	c.mu.Unlock()
	return crc
}

// crcCombine returns the CRC-32C of a‖b from crcA (of a), crcB (of b) and
// the length of b. The register after a, followed by len(b) zero bytes,
// is crcA·x^(8·len(b)) mod P; the pre- and post-inversions of the two
// sums cancel, leaving that product plus crcB.
func crcCombine(crcA, crcB uint32, lenB int) uint32 {
	return mulModP(crcA, xPow8n(uint64(lenB))) ^ crcB
}

// castagnoliReversed is the CRC-32C polynomial with its bits reversed, as
// the checksum registers hold polynomials (bit 31 is x^0, bit 0 is x^31).
const castagnoliReversed = 0x82f63b78

// mulModP returns a·b mod P in the reversed representation.
func mulModP(a, b uint32) uint32 {
	var p uint32
	for bit := uint32(1) << 31; bit != 0; bit >>= 1 {
		if a&bit != 0 {
			p ^= b
		}
		// b ← b·x mod P
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n returns x^(8n) mod P in the reversed representation, by
// squaring.
func xPow8n(n uint64) uint32 {
	result := uint32(1) << 31     // x^0
	base := uint32(1) << (31 - 8) // x^8
	for ; n != 0; n >>= 1 {
		if n&1 != 0 {
			result = mulModP(result, base)
		}
		base = mulModP(base, base)
	}
	return result
}
