package tcp

import (
	"math/bits"
	"sync"

	"github.com/iggo-dev/iggo/internal/dispatch"
)

// Body buffers come from size classes of powers of two between
// minPooledBody and maxLargeBody. Up to maxPooledBody a buffer of the
// class is taken (or made) at once. Above it, a pooled buffer is used when
// one is free; otherwise the body is read in chunks into a buffer that
// doubles from readChunk up to the class size, so memory follows the bytes
// actually received, and the final buffer joins the class pool. Message
// batches of a few MiB (1000 x 1 KB messages is just over 1 MiB) are then
// read without allocating once the pool is warm.
const (
	minPooledShift = 9  // 512 B
	maxPooledShift = 20 // 1 MiB
	maxPooledBody  = 1 << maxPooledShift
	maxLargeShift  = 26 // 64 MiB, the default frame limit
	maxLargeBody   = 1 << maxLargeShift
	// readChunk is the first chunk (and buffer) for bodies above
	// maxPooledBody.
	readChunk = 1 << 20
)

var bodyPools [maxLargeShift - minPooledShift + 1]sync.Pool

func classOf(n int) int {
	if n <= 1<<minPooledShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// getBody returns a buffer of length n when n <= maxPooledBody. Above it,
// it returns a pooled buffer of length n when one is free, or else an
// empty buffer of capacity readChunk that readBody grows.
func getBody(n int) *[]byte {
	if n > maxPooledBody {
		if n <= maxLargeBody {
			if p, ok := bodyPools[classOf(n)].Get().(*[]byte); ok {
				*p = (*p)[:n]
				return p
			}
		}
		b := make([]byte, 0, readChunk)
		return &b
	}
	c := classOf(n)
	if p, ok := bodyPools[c].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<(c+minPooledShift))
	return &b
}

// putBody returns a pooled buffer.
func putBody(p *[]byte) {
	c := cap(*p)
	if c > maxLargeBody || c < 1<<minPooledShift || c&(c-1) != 0 {
		return
	}
	*p = (*p)[:0]
	bodyPools[classOf(c)].Put(p)
}

var exchanges = sync.Pool{New: func() any { return new(dispatch.Exchange) }}

func getExchange() *dispatch.Exchange { return exchanges.Get().(*dispatch.Exchange) }

func putExchange(x *dispatch.Exchange) {
	x.Reset()
	exchanges.Put(x)
}

var coalesce = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}
