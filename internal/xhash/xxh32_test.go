package xhash

import (
	"fmt"
	"testing"
)

// sanityBuffer is the input of the reference xxHash self-test
// (xxhsum's sanity check): byte i is the top byte of a generator that
// starts at the 32-bit prime and is multiplied by the 64-bit prime
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

func TestXXH32KnownVectors(t *testing.T) {
	const seedPrime = 2654435761
	for _, tc := range []struct {
		name  string
		input []byte
		seed  uint32
		want  uint32
	}{
		{"empty", nil, 0, 0x02CC5D05},
		{"a", []byte("a"), 0, 0x550D7456},
		{"abc", []byte("abc"), 0, 0x32D153FF},
		{"spammish", []byte("Nobody inspects the spammish repetition"), 0, 0xE2293B2F},
		{"sanity 0 seed 0", sanityBuffer(0), 0, 0x02CC5D05},
		{"sanity 0 seed prime", sanityBuffer(0), seedPrime, 0x36B78AE7},
		{"sanity 1 seed 0", sanityBuffer(1), 0, 0xCF65B03E},
		{"sanity 1 seed prime", sanityBuffer(1), seedPrime, 0xB4545AA4},
		{"sanity 14 seed 0", sanityBuffer(14), 0, 0x1208E7E2},
		{"sanity 14 seed prime", sanityBuffer(14), seedPrime, 0x6AF1D1FE},
		{"sanity 222 seed 0", sanityBuffer(222), 0, 0x5BD11DBD},
		{"sanity 222 seed prime", sanityBuffer(222), seedPrime, 0x58803C5F},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := XXH32(tc.input, tc.seed); got != tc.want {
				t.Fatalf("XXH32(%q, %d) = %#08x, want %#08x", tc.input, tc.seed, got, tc.want)
			}
		})
	}
}

func TestStringMatchesBytes(t *testing.T) {
	for _, s := range []string{"", "k", "order-42", "a somewhat longer key that spans stripes"} {
		if String(s) != XXH32([]byte(s), 0) {
			t.Fatalf("String(%q) differs from XXH32", s)
		}
	}
}

// TestKeyPartitionGolden pins the key -> partition mapping the SDKs use
// (semantics.md §4.1: XXH32(key, 0) % partitions_count) for a few keys, so
// a change of the hash shows up as a changed partition.
func TestKeyPartitionGolden(t *testing.T) {
	for _, tc := range []struct {
		key        string
		partitions uint32
		want       uint32
	}{
		{"a", 3, 0x550D7456 % 3},
		{"abc", 10, 0x32D153FF % 10},
		{"Nobody inspects the spammish repetition", 7, 0xE2293B2F % 7},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.key, tc.partitions), func(t *testing.T) {
			if got := XXH32([]byte(tc.key), 0) % tc.partitions; got != tc.want {
				t.Fatalf("partition = %d, want %d", got, tc.want)
			}
		})
	}
}

func BenchmarkXXH32Key(b *testing.B) {
	key := []byte("order-000000000042")
	b.SetBytes(int64(len(key)))
	for b.Loop() {
		_ = XXH32(key, 0)
	}
}

func FuzzXXH32(f *testing.F) {
	f.Add([]byte("abc"), uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, seed uint32) {
		// Splitting the input must not matter for String and XXH32 to agree.
		if seed == 0 && XXH32(b, 0) != String(string(b)) {
			t.Fatal("String and XXH32 disagree")
		}
		_ = XXH32(b, seed)
	})
}
