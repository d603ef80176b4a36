package cli

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	tuneGC([]string{"GOGC=50"})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the server changed the GC percent to %d", got)
	}
	tuneGC([]string{"HOME=/"})
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("GC percent %d, want %d", got, serverGCPercent)
	}
}
