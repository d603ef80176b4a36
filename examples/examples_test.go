package examples

import (
	"os/exec"
	"testing"
)

// TestExamplesBuild compiles and vets every example program.
func TestExamplesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go tool")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not on PATH: %v", err)
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
		cmd := exec.Command(goTool, args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
}
