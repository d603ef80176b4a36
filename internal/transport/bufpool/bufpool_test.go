package bufpool

import "testing"

func TestBodySizes(t *testing.T) {
	var p Pools
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 1<<20 + 1, MaxPooledBody, MaxPooledBody + 1} {
		b := p.Body(n)
		if len(*b) != n {
			t.Fatalf("Body(%d): len %d", n, len(*b))
		}
		if n <= MaxPooledBody && (cap(*b) < n || cap(*b)&(cap(*b)-1) != 0) {
			t.Fatalf("Body(%d): cap %d is not a size class", n, cap(*b))
		}
		p.PutBody(b)
	}
	grown := make([]byte, 0, 1000) // not a size class: dropped
	p.PutBody(&grown)
}

func TestScratchRetain(t *testing.T) {
	var p Pools
	b := p.Scratch()
	if len(*b) != 0 {
		t.Fatalf("scratch len %d", len(*b))
	}
	*b = append(*b, make([]byte, 10000)...)
	p.PutScratch(b, 1<<20)
	if got := p.Scratch(); len(*got) != 0 {
		t.Fatalf("reused scratch not emptied: len %d", len(*got))
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector; measured without -race")
	}
	var p Pools
	// Warm the pools first: sync.Pool may drop items at a GC, so measure
	// the average over many rounds.
	allocs := testing.AllocsPerRun(1000, func() {
		b := p.Body(3000)
		x := p.Exchange()
		s := p.Scratch()
		p.PutScratch(s, 1<<20)
		p.PutExchange(x)
		p.PutBody(b)
	})
	if allocs > 0.1 {
		t.Fatalf("%.2f allocations per round", allocs)
	}
}
