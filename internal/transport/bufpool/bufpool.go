// Package bufpool holds the request-body, Exchange and reply-scratch pools
// of the message-oriented transports (QUIC streams, WebSocket messages),
// so that serving a frame allocates nothing in steady state.
package bufpool

import (
	"math/bits"
	"sync"

	"github.com/iggo-dev/iggo/internal/dispatch"
)

// Request bodies up to MaxPooledBody come from power-of-two size classes
// starting at 512 B; larger ones are allocated per request (they are rare
// and their cost is dominated by the copy).
const (
	minPooledShift = 9  // 512 B
	maxPooledShift = 22 // 4 MiB
	// MaxPooledBody is the largest body served from a size class.
	MaxPooledBody = 1 << maxPooledShift
)

// Pools is one server's set of pools; its zero value is ready to use and
// it is safe for concurrent use.
type Pools struct {
	bodies    [maxPooledShift - minPooledShift + 1]sync.Pool
	exchanges sync.Pool
	scratch   sync.Pool
}

func classOf(n int) int {
	if n <= 1<<minPooledShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// Body returns a buffer of length n.
func (p *Pools) Body(n int) *[]byte {
	if n > MaxPooledBody {
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

// PutBody returns a buffer taken with Body; buffers of no size class
// (oversized or grown elsewhere) are dropped.
func (p *Pools) PutBody(b *[]byte) {
	c := cap(*b)
	if c > MaxPooledBody || c < 1<<minPooledShift || c&(c-1) != 0 {
		return
	}
	*b = (*b)[:0]
	p.bodies[classOf(c)].Put(b)
}

// Exchange returns an empty Exchange.
func (p *Pools) Exchange() *dispatch.Exchange {
	if x, ok := p.exchanges.Get().(*dispatch.Exchange); ok {
		return x
	}
	return new(dispatch.Exchange)
}

// PutExchange resets x and returns it.
func (p *Pools) PutExchange(x *dispatch.Exchange) {
	x.Reset()
	p.exchanges.Put(x)
}

// Scratch returns an empty buffer for coalescing one reply.
func (p *Pools) Scratch() *[]byte {
	if b, ok := p.scratch.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

// PutScratch returns a buffer taken with Scratch unless it grew past
// retain bytes (so one huge reply does not pin its memory).
func (p *Pools) PutScratch(b *[]byte, retain int) {
	if cap(*b) > retain {
		return
	}
	*b = (*b)[:0]
	p.scratch.Put(b)
}
