package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildIggo builds the iggo binary (cmd/iggo) into dir and returns its
// path.
func BuildIggo(dir string) (string, error) {
	bin := filepath.Join(dir, "iggo")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/iggo-dev/iggo/cmd/iggo").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/iggo: %w\n%s", err, out)
	}
	return bin, nil
}

// RunWithIggo is the TestMain of a package whose tests run real iggo
// processes: it builds the binary once into a temporary directory, sets
// *bin to its path, runs the tests and removes the directory. A failed
// build fails the package (it is never a skip). It returns the exit code.
func RunWithIggo(m *testing.M, pkg string, bin *string) int {
	dir, err := os.MkdirTemp("", "iggo-"+pkg+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: temporary directory: %v\n", pkg, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildIggo(dir); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", pkg, err)
		return 1
	}
	return m.Run()
}
