package client

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencies keeps the SDK light (style.md, "Dependencies"): besides
// the standard library it may import only wire, internal/xhash and xxh3
// (with xxh3's CPU-feature detection).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	allowed := []string{
		"github.com/iggo-dev/iggo/client",
		"github.com/iggo-dev/iggo/wire",
		"github.com/iggo-dev/iggo/internal/xhash",
		"github.com/zeebo/xxh3",
		"github.com/klauspost/cpuid/v2",
	}
	out, err := exec.Command(goTool(t), "list", "-deps",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if !slices.Contains(allowed, dep) {
			t.Errorf("client depends on %s", dep)
		}
	}
}

// goTool finds the go command the tests run under.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not on PATH: %v", err)
	}
	return p
}
