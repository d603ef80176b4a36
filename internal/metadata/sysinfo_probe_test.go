package metadata

import (
	"testing"
	"time"
)

// TestProbeFirstReportsZero pins semantics.md §7: CPU figures are deltas
// since the previous probe, so the first probe reports 0; later ones are
// percentages in a sane range on every OS.
func TestProbeFirstReportsZero(t *testing.T) {
	var p probe
	start := time.Now()
	if proc, total := p.cpu(start); proc != 0 || total != 0 {
		t.Fatalf("first probe reported %v, %v", proc, total)
	}
	for x := 0; time.Since(start) < 20*time.Millisecond; x++ {
		_ = x * x // spend a little CPU
	}
	proc, total := p.cpu(time.Now())
	if proc < 0 || total < 0 || total > 100 {
		t.Fatalf("second probe reported %v, %v", proc, total)
	}
}
