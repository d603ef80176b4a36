//go:build !windows

package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartSharesCPUs: a node started without GOMAXPROCS gets its share of
// the machine's CPUs; an explicit value (argument or environment) is kept.
func TestStartSharesCPUs(t *testing.T) {
	if got := nodeProcs(2, 3); got != 1 {
		t.Fatalf("nodeProcs(2, 3) = %d, want 1", got)
	}
	if got := nodeProcs(8, 3); got != 2 {
		t.Fatalf("nodeProcs(8, 3) = %d, want 2", got)
	}
	l, err := NewLayout(t.TempDir(), 3, 8090, false)
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for iggo that records its environment in the node's log.
	bin := filepath.Join(t.TempDir(), "fake-iggo")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nenv\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(i int, env []string) string {
		t.Helper()
		p, err := l.Start(bin, i, env)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the stand-in did not exit")
		}
		out, err := os.ReadFile(l.LogPath(i))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	if out := run(0, nil); !strings.Contains(out, "GOMAXPROCS=") {
		t.Fatalf("no GOMAXPROCS for a node:\n%s", out)
	}
	if out := run(1, []string{"GOMAXPROCS=7"}); !strings.Contains(out, "GOMAXPROCS=7") || strings.Count(out, "GOMAXPROCS=") != 1 {
		t.Fatalf("an explicit GOMAXPROCS was not kept alone:\n%s", out)
	}
}
