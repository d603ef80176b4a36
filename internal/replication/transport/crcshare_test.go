package transport

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 2, 7, 64, 1000, 4096, 1 << 20} {
		b := make([]byte, n+300)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		for _, split := range []int{0, 1, 150, 300} {
			a, c := b[:split], b[split:]
			want := crc32.Checksum(b, crcTable)
			got := crcCombine(crc32.Checksum(a, crcTable), crc32.Checksum(c, crcTable), len(c))
			if got != want {
				t.Fatalf("len %d split %d: combined %08x, want %08x", len(b), split, got, want)
			}
		}
	}
}

func TestCRCCacheRemembersSlices(t *testing.T) {
	var c crcCache
	a := []byte("entry data of some length")
	b := append([]byte(nil), a...)
	if c.sum(a) != crc32.Checksum(a, crcTable) || c.sum(a) != c.sum(b) {
		t.Fatal("wrong sums")
	}
	// Same address, other length: not the remembered slice.
	if got, want := c.sum(a[:5]), crc32.Checksum(a[:5], crcTable); got != want {
		t.Fatalf("prefix: %08x, want %08x", got, want)
	}
	for i := range 2 * crcCacheLen {
		d := []byte{byte(i), 1, 2}
		if c.sum(d) != crc32.Checksum(d, crcTable) {
			t.Fatal("wrong sum")
		}
	}
}
