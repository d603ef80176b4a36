package quic

import (
	"math/bits"
	"sync"

	"github.com/iggo-dev/iggo/internal/dispatch"
)

// Request bodies up to maxPooledBody come from power-of-two size classes
// starting at minPooledBody; larger ones are allocated per request (they
// are rare and their cost is dominated by the copy).
const (
	minPooledShift = 9  // 512 B
	maxPooledShift = 22 // 4 MiB
	maxPooledBody  = 1 << maxPooledShift
	// coalesceLimit is the largest reply body copied behind its header so
	// the reply goes out in one stream write.
	coalesceLimit = 64 << 10
)

// pools holds the per-server buffer and Exchange pools.
type pools struct {
	bodies    [maxPooledShift - minPooledShift + 1]sync.Pool
	exchanges sync.Pool
	coalesce  sync.Pool
}

func classOf(n int) int {
	if n <= 1<<minPooledShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// body returns a buffer of length n.
func (p *pools) body(n int) *[]byte {
	if n > maxPooledBody {
		b := make([]byte, n)
		return &b
	}
	c := classOf(n)
	if b, ok := p.bodies[c].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<(c+minPooledShift))
	return &b
}

// putBody returns a buffer taken with body.
func (p *pools) putBody(b *[]byte) {
	c := cap(*b)
	if c > maxPooledBody || c < 1<<minPooledShift || c&(c-1) != 0 {
		return
	}
	*b = (*b)[:0]
	p.bodies[classOf(c)].Put(b)
}

func (p *pools) exchange() *dispatch.Exchange {
	if x, ok := p.exchanges.Get().(*dispatch.Exchange); ok {
		return x
	}
	return new(dispatch.Exchange)
}

func (p *pools) putExchange(x *dispatch.Exchange) {
	x.Reset()
	p.exchanges.Put(x)
}

// scratch returns an empty buffer for coalescing one reply.
func (p *pools) scratch() *[]byte {
	if b, ok := p.coalesce.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

func (p *pools) putScratch(b *[]byte) {
	if cap(*b) > 2*coalesceLimit {
		return
	}
	*b = (*b)[:0]
	p.coalesce.Put(b)
}
