package encryption

// maxPooledBuffer bounds the capacity of a buffer PutBuffer keeps, so one
// huge batch does not pin its memory in the pool.
const maxPooledBuffer = 8 << 20

// GetBuffer returns an empty buffer from the Cipher's pool, for the
// destination of EncryptBatch or DecryptBatch. Return it with PutBuffer
// (storing the grown slice back through the pointer) once the bytes are
// no longer used.
func (c *Cipher) GetBuffer() *[]byte {
	if b, ok := c.bufs.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	return new([]byte)
}

// PutBuffer returns a buffer obtained from GetBuffer to the pool.
func (c *Cipher) PutBuffer(b *[]byte) {
	if b == nil || cap(*b) > maxPooledBuffer {
		return
	}
	c.bufs.Put(b)
}

// getNonces returns n bytes of fresh nonce scratch (not yet random).
func (c *Cipher) getNonces(n int) *[]byte {
	b, ok := c.nonces.Get().(*[]byte)
	if !ok {
		b = new([]byte)
	}
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	*b = (*b)[:n]
	return b
}

// putNonces recycles nonce scratch; the used nonces are wiped so nothing
// hands the same bytes out twice even by mistake.
func (c *Cipher) putNonces(b *[]byte) {
	clear(*b)
	if cap(*b) > maxPooledBuffer {
		return
	}
	c.nonces.Put(b)
}
