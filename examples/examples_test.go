package examples

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestExamplesBuild compiles and vets every example program.
func TestExamplesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go tool")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command(goTool, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
}
