package replicated

import (
	"slices"
	"sync"
)

// missedWindowMax bounds the indices a missedWindow holds.
const missedWindowMax = 4096

// missedWindow records the indices of windowed entries whose apply did not
// put them into the duplicate window, in apply (increasing index) order.
// Apply adds on the host's loop; compaction reads and trims from the
// plane's worker.
type missedWindow struct {
	mu  sync.Mutex
	idx []uint64 // guarded by mu, increasing
}

// add records index.
func (m *missedWindow) add(index uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := len(m.idx); n > 0 && m.idx[n-1] >= index {
		// Not after the last recorded one (apply runs in log order, and
		// a restore drops what it covers): start again, keeping the order.
		m.idx = m.idx[:0]
	}
	if len(m.idx) == missedWindowMax {
		m.idx = slices.Delete(m.idx, 0, 1)
	}
	m.idx = append(m.idx, index)
}

// dropTo forgets the indices at or below index.
func (m *missedWindow) dropTo(index uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := slices.BinarySearch(m.idx, index+1)
	m.idx = slices.Delete(m.idx, 0, k)
}

// in returns the recorded indices in [lo, hi].
func (m *missedWindow) in(lo, hi uint64) map[uint64]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, _ := slices.BinarySearch(m.idx, lo)
	out := map[uint64]bool{}
	for _, i := range m.idx[k:] {
		if i > hi {
			break
		}
		out[i] = true
	}
	return out
}
