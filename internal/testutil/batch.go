package testutil

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/wire"
)

// Batch returns an admitted batch record of n messages (ids 1..n, payload
// "payload"), as a producer would send it.
func Batch(t testing.TB, n int) []byte {
	t.Helper()
	var b wire.BatchBuilder
	b.Reset(nil)
	for i := range n {
		if err := b.Add(wire.Uint128{Lo: uint64(i + 1)}, 10, []byte("payload"), nil); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Cipher returns a cipher whose key is derived from seed (equal seeds give
// equal keys).
func Cipher(t testing.TB, seed byte) *encryption.Cipher {
	t.Helper()
	key := make([]byte, encryption.KeySize)
	for i := range key {
		key[i] = seed + byte(i)
	}
	c, err := encryption.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
