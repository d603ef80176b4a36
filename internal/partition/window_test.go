package partition

import (
	"runtime"
	"testing"

	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

func newTestPartition() *partition {
	p := &partition{window: session.NewPartitionWindow(0), inflight: map[windowKey]struct{}{}}
	p.winCond.L = &p.winMu
	return p
}

// TestWindowRetryWaitsForInFlight: a retry arriving while the original is
// appending waits for it, then is a duplicate if it committed and is
// executed if it failed.
func TestWindowRetryWaitsForInFlight(t *testing.T) {
	for _, committed := range []bool{true, false} {
		p := newTestPartition()
		key := windowKey{client: wire.Uint128{Lo: 9}, request: 4, hash: 77}
		if !p.begin(key) {
			t.Fatal("first request treated as a duplicate")
		}
		got := make(chan bool)
		go func() { got <- p.begin(key) }()
		// Until end, the retry cannot have an answer: it waits on the
		// in-flight entry (checked by ending only after it waits).
		for {
			p.winMu.Lock()
			w := p.waiters
			p.winMu.Unlock()
			if w == 1 {
				break
			}
			runtime.Gosched()
		}
		p.end(key, committed)
		if execute := <-got; execute == committed {
			t.Fatalf("committed=%v: retry execute=%v", committed, execute)
		}
		if !committed {
			p.end(key, true)
		}
		// Another body under the same number is a new request.
		other := key
		other.hash++
		if !p.begin(other) {
			t.Fatal("same number with another body treated as a duplicate")
		}
		p.end(other, true)
	}
}
