// Package xhash holds the non-cryptographic hashes the SDK needs that are not
// in the standard library: XXH32, the 32-bit xxHash used to map message keys
// to partitions (semantics.md §4.1: index = XXH32(key, seed 0) % partitions)
// and string consumer names to offset keys (§4.2).
//
// The implementation follows the xxHash specification (XXH32, version
// 0.8): 16-byte stripes through four accumulators, then 4-byte words,
// then single bytes, then the avalanche. It allocates nothing.
package xhash

import (
	"encoding/binary"
	"math/bits"
)

// The five XXH32 primes of the specification.
const (
	prime32x1 uint32 = 0x9E3779B1
	prime32x2 uint32 = 0x85EBCA77
	prime32x3 uint32 = 0xC2B2AE3D
	prime32x4 uint32 = 0x27D4EB2F
	prime32x5 uint32 = 0x165667B1
)

// stripeLen is the input consumed per round of the four accumulators.
const stripeLen = 16

// XXH32 returns the 32-bit xxHash of b with the given seed.
func XXH32(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= stripeLen {
		v1 := seed + prime32x1 + prime32x2
		v2 := seed + prime32x2
		v3 := seed
		v4 := seed - prime32x1
		for len(b) >= stripeLen {
			v1 = round32(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round32(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round32(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round32(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[stripeLen:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + prime32x5
	}
	h += uint32(n) // the specification adds the length modulo 2^32
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * prime32x3
		h = bits.RotateLeft32(h, 17) * prime32x4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * prime32x5
		h = bits.RotateLeft32(h, 11) * prime32x1
	}
	h ^= h >> 15
	h *= prime32x2
	h ^= h >> 13
	h *= prime32x3
	h ^= h >> 16
	return h
}

func round32(acc, lane uint32) uint32 {
	acc += lane * prime32x2
	return bits.RotateLeft32(acc, 13) * prime32x1
}

// String returns XXH32 of s with seed 0 without copying s.
func String(s string) uint32 {
	return XXH32(unsafeBytes(s), 0)
}
