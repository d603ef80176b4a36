package xhash

import (
	"strings"
	"testing"
)

// Golden values from the xxHash reference implementation (XXH32, seed 0
// unless stated).
func TestXXH32Golden(t *testing.T) {
	tests := []struct {
		name string
		in   string
		seed uint32
		want uint32
	}{
		{"empty", "", 0, 0x02CC5D05},
		{"a", "a", 0, 0x550D7456},
		{"abc", "abc", 0, 0x32D153FF},
		{"long sentence", "Nobody inspects the spammish repetition", 0, 0xE2293B2F},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := XXH32([]byte(tt.in), tt.seed); got != tt.want {
				t.Errorf("XXH32(%q, %d) = %#08x, want %#08x", tt.in, tt.seed, got, tt.want)
			}
			if tt.seed == 0 {
				if got := XXH32String(tt.in); got != tt.want {
					t.Errorf("XXH32String(%q) = %#08x, want %#08x", tt.in, got, tt.want)
				}
			}
		})
	}
}

// TestXXH32Lengths checks every tail path (stripes, 4-byte lanes, single
// bytes) is taken and that each input length changes the hash.
func TestXXH32Lengths(t *testing.T) {
	src := []byte(strings.Repeat("0123456789abcdef", 8))
	seen := map[uint32]int{}
	for n := 0; n <= len(src); n++ {
		h := XXH32(src[:n], 0)
		if prev, dup := seen[h]; dup {
			t.Fatalf("lengths %d and %d hash to %#08x", prev, n, h)
		}
		seen[h] = n
		if XXH32(src[:n], 1) == h {
			t.Fatalf("length %d: seed does not change the hash", n)
		}
	}
}

func TestXXH32NoAlloc(t *testing.T) {
	b := []byte("some message key")
	if n := testing.AllocsPerRun(100, func() { _ = XXH32(b, 0); _ = XXH32String("key") }); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func FuzzXXH32(f *testing.F) {
	f.Add([]byte("a"), uint32(0))
	f.Add([]byte(strings.Repeat("x", 33)), uint32(7))
	f.Fuzz(func(t *testing.T, b []byte, seed uint32) {
		// Determinism and string/bytes agreement.
		if XXH32(b, seed) != XXH32(append([]byte(nil), b...), seed) {
			t.Fatal("not deterministic")
		}
		if XXH32(b, 0) != XXH32String(string(b)) {
			t.Fatal("string and bytes differ")
		}
	})
}
