package tcp

import (
	"math/bits"
	"sync"

	"github.com/iggo-dev/iggo/internal/dispatch"
)

// Body buffers come from size classes of powers of two between
// minPooledBody and maxPooledBody; larger bodies are read in chunks into a
// growing buffer so memory follows the bytes actually received.
const (
	minPooledShift = 9  // 512 B
	maxPooledShift = 20 // 1 MiB
	maxPooledBody  = 1 << maxPooledShift
	// readChunk is the growth step for bodies above maxPooledBody.
	readChunk = 1 << 20
)

var bodyPools [maxPooledShift - minPooledShift + 1]sync.Pool

func classOf(n int) int {
	if n <= 1<<minPooledShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// getBody returns a buffer of length n; pooled when n <= maxPooledBody.
func getBody(n int) *[]byte {
	if n > maxPooledBody {
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
	if c > maxPooledBody || c < 1<<minPooledShift || c&(c-1) != 0 {
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
