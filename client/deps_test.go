package client

import (
	"os/exec"
	"path/filepath"
	"runtime"
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
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps",
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
