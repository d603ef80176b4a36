package metadata

import (
	"sync"
	"time"
)

// probe computes CPU usage as deltas between GET_STATS calls
// (semantics.md §7: the first probe reports 0). processCPU and systemCPU
// come from the sysinfo file of the OS; where a figure is unknown they
// return 0 and the usage stays 0.
type probe struct {
	mu        sync.Mutex
	last      time.Time
	lastProc  time.Duration
	lastBusy  uint64
	lastTotal uint64
}

// cpu returns the process and whole-machine CPU usage in percent since
// the previous call.
func (p *probe) cpu(now time.Time) (proc, total float32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pc := processCPU()
	busy, all := systemCPU()
	if !p.last.IsZero() {
		if wall := now.Sub(p.last); wall > 0 {
			proc = float32(float64(pc-p.lastProc) / float64(wall) * 100)
		}
		if all > p.lastTotal {
			total = float32(float64(busy-p.lastBusy) / float64(all-p.lastTotal) * 100)
		}
	}
	p.last, p.lastProc, p.lastBusy, p.lastTotal = now, pc, busy, all
	return proc, total
}
