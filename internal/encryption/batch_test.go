package encryption

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// frameLens returns (payload, user headers) lengths of every frame.
func frameLens(t testing.TB, b []byte) [][2]uint32 {
	t.Helper()
	v, _, err := wire.ParseBatch(b)
	if err != nil {
		t.Fatalf("ParseBatch: %v", err)
	}
	var out [][2]uint32
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		h := m.Header()
		out = append(out, [2]uint32{h.PayloadLength, h.UserHeadersLength})
	}
	return out
}

func TestBatchRoundTrip(t *testing.T) {
	c := testCipher(t, 1)
	for _, n := range []int{1, 2, 7, 200} {
		plain := testBatch(t, n, 64)
		enc, err := c.EncryptBatch([]byte("keep"), plain)
		if err != nil {
			t.Fatal(err)
		}
		if string(enc[:4]) != "keep" {
			t.Fatal("EncryptBatch overwrote dst")
		}
		enc = enc[4:]
		// The stored batch is a valid batch: checksums cover the ciphertext.
		sv, err := wire.ValidateBatch(enc)
		if err != nil {
			t.Fatalf("stored batch does not validate: %v", err)
		}
		pv, _ := wire.ValidateBatch(plain)
		ph, sh := pv.Header(), sv.Header()
		if sh.PartitionID != ph.PartitionID || sh.BaseOffset != ph.BaseOffset || sh.BaseTimestamp != ph.BaseTimestamp ||
			sh.OriginTimestamp != ph.OriginTimestamp || sh.MessageCount != ph.MessageCount {
			t.Fatalf("header changed: %+v -> %+v", ph, sh)
		}
		sealedSections := 0
		pl, sl := frameLens(t, plain), frameLens(t, enc)
		for i := range pl {
			if sl[i][0] != pl[i][0]+Overhead {
				t.Fatalf("frame %d payload length %d, want %d", i, sl[i][0], pl[i][0]+Overhead)
			}
			sealedSections++
			switch {
			case pl[i][1] == 0 && sl[i][1] != 0:
				t.Fatalf("frame %d: empty user headers were sealed (%d bytes)", i, sl[i][1])
			case pl[i][1] > 0 && sl[i][1] != pl[i][1]+Overhead:
				t.Fatalf("frame %d user headers length %d, want %d", i, sl[i][1], pl[i][1]+Overhead)
			case pl[i][1] > 0:
				sealedSections++
			}
		}
		if len(enc) != len(plain)+sealedSections*Overhead || sh.BatchLength != uint64(len(enc)) {
			t.Fatalf("stored length %d (header %d), want %d", len(enc), sh.BatchLength, len(plain)+sealedSections*Overhead)
		}
		for _, secret := range []string{"payload-0-", "secret-header-value"} {
			if bytes.Contains(enc, []byte(secret)) {
				t.Fatalf("stored batch contains %q", secret)
			}
		}
		dec, err := c.DecryptBatch([]byte("pre"), enc)
		if err != nil {
			t.Fatal(err)
		}
		if string(dec[:3]) != "pre" || !bytes.Equal(dec[3:], plain) {
			t.Fatalf("decrypted batch differs from the original (n=%d)", n)
		}
		if _, err := wire.ValidateBatch(dec[3:]); err != nil {
			t.Fatalf("decrypted batch does not validate: %v", err)
		}
	}
}

func TestBatchSliceDecrypts(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 10, 32)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	ev, _, _ := wire.ParseBatch(enc)
	pv, _, _ := wire.ParseBatch(plain)
	for _, s := range [][2]int{{0, 1}, {3, 4}, {9, 1}, {0, 10}} {
		slice := ev.AppendSlice(nil, s[0], s[1])
		got, err := c.DecryptBatch(nil, slice)
		if err != nil {
			t.Fatal(err)
		}
		if want := pv.AppendSlice(nil, s[0], s[1]); !bytes.Equal(got, want) {
			t.Fatalf("slice %v: decrypted slice differs from the plaintext slice", s)
		}
	}
}

func TestBatchTamperAndWrongKey(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 4, 32)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testCipher(t, 9).DecryptBatch(nil, enc); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong key: %v, want ErrAuth", err)
	}
	// Flip one byte in each sealed section of the second frame (payload
	// then user headers), keeping the layout valid.
	v, _, _ := wire.ParseBatch(enc)
	it := v.Messages()
	it.Next()
	m, _ := it.Next()
	base := wire.BatchHeaderSize + m.Position()
	h := m.Header()
	for _, at := range []int{
		base + wire.MessageHeaderSize,                                    // payload nonce
		base + wire.MessageHeaderSize + int(h.PayloadLength) - 1,         // payload tag
		base + wire.MessageHeaderSize + int(h.PayloadLength) + NonceSize, // headers ciphertext
	} {
		bad := bytes.Clone(enc)
		bad[at] ^= 0x80
		out, err := c.DecryptBatch([]byte("x"), bad)
		if !errors.Is(err, ErrAuth) || len(out) != 1 {
			t.Fatalf("byte %d flipped: %v (len %d), want ErrAuth and dst unchanged", at, err, len(out))
		}
	}
}

func TestBatchLayoutErrors(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 3, 40)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	// A plaintext batch whose payloads are shorter than nonce + tag is
	// not a stored batch.
	short := testBatch(t, 2, 5)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"header":    enc[:wire.BatchHeaderSize],
		"truncated": enc[:len(enc)-1],
		"trailing":  append(bytes.Clone(enc), 0),
		"plaintext": short,
	} {
		if _, err := c.DecryptBatch(nil, b); !errors.Is(err, ErrLayout) {
			t.Errorf("%s: DecryptBatch = %v, want ErrLayout", name, err)
		}
		if name != "plaintext" {
			if _, err := c.EncryptBatch(nil, b); !errors.Is(err, ErrLayout) {
				t.Errorf("%s: EncryptBatch = %v, want ErrLayout", name, err)
			}
		}
	}
	// Sealed user headers shorter than nonce + tag.
	bad := bytes.Clone(enc)
	v, _, _ := wire.ParseBatch(bad)
	it := v.Messages()
	it.Next()
	m, _ := it.Next()
	f := bad[wire.BatchHeaderSize+m.Position():]
	pl := binary.LittleEndian.Uint32(f[wire.MessageOffPayloadLength:])
	uh := binary.LittleEndian.Uint32(f[wire.MessageOffUserHeadersLength:])
	binary.LittleEndian.PutUint32(f[wire.MessageOffPayloadLength:], pl+uh-5)
	binary.LittleEndian.PutUint32(f[wire.MessageOffUserHeadersLength:], 5)
	if _, err := c.DecryptBatch(nil, bad); !errors.Is(err, ErrLayout) {
		t.Fatalf("5-byte sealed headers: %v, want ErrLayout", err)
	}
}

func TestBatchNoncesUnique(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 50, 16)
	seen := map[string]bool{}
	for range 20 {
		enc, err := c.EncryptBatch(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		v, _, _ := wire.ParseBatch(enc)
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			for _, s := range [][]byte{m.Payload(), m.UserHeaders()} {
				if len(s) == 0 {
					continue
				}
				n := string(s[:NonceSize])
				if seen[n] {
					t.Fatal("nonce reused")
				}
				seen[n] = true
			}
		}
	}
	if len(seen) != 20*75 {
		t.Fatalf("%d nonces, want %d", len(seen), 20*75)
	}
}

func TestBatchAllocations(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 100, 1000)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	bufp := c.GetBuffer()
	// Warm the pools.
	*bufp, _ = c.EncryptBatch((*bufp)[:0], plain)
	if n := testing.AllocsPerRun(50, func() {
		*bufp, err = c.EncryptBatch((*bufp)[:0], plain)
	}); n != 0 || err != nil {
		t.Fatalf("EncryptBatch into a reused buffer: %.1f allocations, err %v", n, err)
	}
	if n := testing.AllocsPerRun(50, func() {
		*bufp, err = c.DecryptBatch((*bufp)[:0], enc)
	}); n != 0 || err != nil {
		t.Fatalf("DecryptBatch into a reused buffer: %.1f allocations, err %v", n, err)
	}
	c.PutBuffer(bufp)
}

// TestVerifyBatch: a batch sealed with this key verifies; one sealed with
// another key is ErrAuth; a plaintext batch does not verify; a record
// that is no batch is ErrLayout.
func TestVerifyBatch(t *testing.T) {
	c := testCipher(t, 1)
	plain := testBatch(t, 3, 40)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyBatch(enc); err != nil {
		t.Fatalf("own key: %v", err)
	}
	if err := testCipher(t, 9).VerifyBatch(enc); !errors.Is(err, ErrAuth) {
		t.Fatalf("other key: %v, want ErrAuth", err)
	}
	if err := c.VerifyBatch(plain); err == nil {
		t.Fatal("a plaintext batch verified")
	}
	if err := c.VerifyBatch(enc[:10]); !errors.Is(err, ErrLayout) {
		t.Fatalf("truncated record: %v, want ErrLayout", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = c.VerifyBatch(enc) }); n != 0 {
		t.Fatalf("VerifyBatch allocates %.1f times per call", n)
	}
}
