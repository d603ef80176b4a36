// Package xhash holds the small non-cryptographic hashes the protocol
// needs beyond XXH3 (github.com/zeebo/xxh3): XXH32, which the SDKs and the
// reference server use to map a message key to a partition
// (semantics.md §4.1, `XXH32(key, seed 0) % partitions_count`) and a named
// consumer to its numeric offset key (§5).
package xhash

import (
	"encoding/binary"
	"math/bits"
)

// XXH32 primes (xxHash specification, "XXH32 algorithm description").
const (
	prime1 uint32 = 0x9E3779B1
	prime2 uint32 = 0x85EBCA77
	prime3 uint32 = 0xC2B2AE3D
	prime4 uint32 = 0x27D4EB2F
	prime5 uint32 = 0x165667B1
)

// stripe is the number of input bytes the four accumulators consume per
// round.
const stripe = 16

func round(acc, lane uint32) uint32 {
	return bits.RotateLeft32(acc+lane*prime2, 13) * prime1
}

// XXH32 returns the 32-bit xxHash of b with the given seed. It does not
// allocate.
func XXH32(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= stripe {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(b) >= stripe {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[stripe:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + prime5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * prime3
		h = bits.RotateLeft32(h, 17) * prime4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * prime5
		h = bits.RotateLeft32(h, 11) * prime1
	}
	h ^= h >> 15
	h *= prime2
	h ^= h >> 13
	h *= prime3
	h ^= h >> 16
	return h
}

// XXH32String is XXH32 of the bytes of s with seed 0, without copying s.
func XXH32String(s string) uint32 {
	return XXH32(unsafeBytes(s), 0)
}
