package encryption

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// testKey returns a deterministic key whose bytes are seed, seed+1, ...
func testKey(seed byte) []byte {
	k := make([]byte, KeySize)
	for i := range k {
		k[i] = seed + byte(i)
	}
	return k
}

func testCipher(t testing.TB, seed byte) *Cipher {
	t.Helper()
	c, err := New(testKey(seed))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func b64(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// testBatch builds a stamped batch of n messages: payload "payload-i…"
// of size bytes (at least the prefix), user headers on every odd message.
func testBatch(t testing.TB, n, size int) []byte {
	t.Helper()
	msgs := make([]wire.Message, n)
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("trace"), Value: wire.StringHeader("secret-header-value")}}.AppendTo(nil)
	for i := range msgs {
		p := fmt.Appendf(nil, "payload-%d-", i)
		p = append(p, bytes.Repeat([]byte{'x'}, max(0, size-len(p)))...)
		msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(i + 1)}, OriginTimestamp: 1_000 + uint64(i), Payload: p}
		if i%2 == 1 {
			msgs[i].UserHeaders = hdrs
		}
	}
	b, err := wire.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := wire.ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	v.Stamp(3, 100, 1_700_000_000_000_000)
	return b
}
