package encryption

import "testing"

// The figures in bench/README.md ("Encryption at rest") come from these:
// one batch of 1000 messages of 1 KB (half with a small user-headers
// block), into a reused buffer.

func BenchmarkEncryptBatch1000x1KB(b *testing.B) {
	c := testCipher(b, 1)
	plain := testBatch(b, 1000, 1000)
	buf := c.GetBuffer()
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if *buf, err = c.EncryptBatch((*buf)[:0], plain); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptBatch1000x1KB(b *testing.B) {
	c := testCipher(b, 1)
	plain := testBatch(b, 1000, 1000)
	enc, err := c.EncryptBatch(nil, plain)
	if err != nil {
		b.Fatal(err)
	}
	buf := c.GetBuffer()
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	for b.Loop() {
		if *buf, err = c.DecryptBatch((*buf)[:0], enc); err != nil {
			b.Fatal(err)
		}
	}
}
