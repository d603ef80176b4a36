package encryption

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// FuzzDecryptBatch feeds arbitrary bytes to the poll-side decrypt path
// (layout parse, section bounds, GCM open). It must never panic, never
// change dst on error, and anything it accepts must be a valid batch that
// encrypts and decrypts back to itself. Inputs that are valid plaintext
// batches must round-trip through EncryptBatch byte for byte.
func FuzzDecryptBatch(f *testing.F) {
	c := testCipher(f, 1)
	for _, n := range []int{1, 2, 5} {
		plain := testBatch(f, n, 30)
		f.Add(plain)
		enc, err := c.EncryptBatch(nil, plain)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
		v, _, _ := wire.ParseBatch(enc)
		f.Add(v.AppendSlice(nil, 1, 1))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dst := []byte("dst")
		out, err := c.DecryptBatch(dst, data)
		if err != nil {
			if !errors.Is(err, ErrAuth) && !errors.Is(err, ErrLayout) {
				t.Fatalf("DecryptBatch error %v is neither ErrAuth nor ErrLayout", err)
			}
			if len(out) != len(dst) || string(out) != "dst" {
				t.Fatalf("DecryptBatch changed dst on error")
			}
		} else {
			plain := out[len(dst):]
			if _, err := wire.ValidateBatch(plain); err != nil {
				t.Fatalf("decrypted batch does not validate: %v", err)
			}
			again, err := c.EncryptBatch(nil, plain)
			if err != nil {
				t.Fatalf("re-encrypt: %v", err)
			}
			back, err := c.DecryptBatch(nil, again)
			if err != nil || !bytes.Equal(back, plain) {
				t.Fatalf("re-encrypted batch does not decrypt to itself: %v", err)
			}
		}
		if _, err := wire.ValidateBatch(data); err == nil {
			enc, err := c.EncryptBatch(nil, data)
			if err != nil {
				t.Fatalf("EncryptBatch of a valid batch: %v", err)
			}
			if _, err := wire.ValidateBatch(enc); err != nil {
				t.Fatalf("stored batch does not validate: %v", err)
			}
			back, err := c.DecryptBatch(nil, enc)
			if err != nil || !bytes.Equal(back, data) {
				t.Fatalf("round trip of a valid batch failed: %v", err)
			}
		}
	})
}
