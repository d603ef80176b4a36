package xhash

import (
	"fmt"
	"testing"
)

// sanityBuffer is the input of the xxHash self-test (xxhsum's sanity
// check): byte i is the top byte of a generator that starts at the 32-bit
// prime 2654435761 and is multiplied by the 64-bit prime
// 11400714785074694797 after each byte.
func sanityBuffer(n int) []byte {
	b := make([]byte, n)
	gen := uint64(2654435761)
	for i := range b {
		b[i] = byte(gen >> 56)
		gen *= 11400714785074694797
	}
	return b
}

// TestXXH32Sanity checks the xxHash self-test values, which cover the
// 16-byte stripes, the 4-byte lanes, the tail bytes and a non-zero seed.
func TestXXH32Sanity(t *testing.T) {
	const seedPrime = 2654435761
	for _, tc := range []struct {
		n    int
		seed uint32
		want uint32
	}{
		{0, 0, 0x02CC5D05},
		{0, seedPrime, 0x36B78AE7},
		{1, 0, 0xCF65B03E},
		{1, seedPrime, 0xB4545AA4},
		{14, 0, 0x1208E7E2},
		{14, seedPrime, 0x6AF1D1FE},
		{222, 0, 0x5BD11DBD},
		{222, seedPrime, 0x58803C5F},
	} {
		t.Run(fmt.Sprintf("len%d/seed%d", tc.n, tc.seed), func(t *testing.T) {
			if got := XXH32(sanityBuffer(tc.n), tc.seed); got != tc.want {
				t.Fatalf("XXH32 = %#08x, want %#08x", got, tc.want)
			}
		})
	}
}

// TestKeyPartitionGolden pins the SDK key -> partition mapping
// (semantics.md §4.1: XXH32(key, 0) % partitions_count) on keys whose
// hashes are published xxHash test values.
func TestKeyPartitionGolden(t *testing.T) {
	for _, tc := range []struct {
		key        string
		partitions uint32
		want       uint32
	}{
		{"a", 3, 0},    // 0x550D7456 % 3
		{"abc", 10, 7}, // 0x32D153FF % 10
		{"Nobody inspects the spammish repetition", 7, 3}, // 0xE2293B2F % 7
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.key, tc.partitions), func(t *testing.T) {
			if got := XXH32([]byte(tc.key), 0) % tc.partitions; got != tc.want {
				t.Fatalf("partition = %d, want %d", got, tc.want)
			}
		})
	}
}
