package commit

import (
	"runtime"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func newTestWindow() *Window {
	return NewWindow(0)
}

// TestWindowRetryWaitsForInFlight: a retry arriving while the original is
// appending waits for it, then is a duplicate if it committed and is
// executed if it failed.
func TestWindowRetryWaitsForInFlight(t *testing.T) {
	for _, committed := range []bool{true, false} {
		p := newTestWindow()
		key := Key{Client: wire.Uint128{Lo: 9}, Request: 4, Hash: 77}
		if !p.Begin(key) {
			t.Fatal("first request treated as a duplicate")
		}
		got := make(chan bool)
		go func() { got <- p.Begin(key) }()
		// Until end, the retry cannot have an answer: it waits on the
		// in-flight entry (checked by ending only after it waits).
		for {
			p.mu.Lock()
			w := p.waiters
			p.mu.Unlock()
			if w == 1 {
				break
			}
			runtime.Gosched()
		}
		p.End(key, committed)
		if execute := <-got; execute == committed {
			t.Fatalf("committed=%v: retry execute=%v", committed, execute)
		}
		if !committed {
			p.End(key, true)
		}
		// Another body under the same number is a new request.
		other := key
		other.Hash++
		if !p.Begin(other) {
			t.Fatal("same number with another body treated as a duplicate")
		}
		p.End(other, true)
	}
}
