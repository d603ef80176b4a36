//go:build !windows

package tiertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// iggoBin is the iggo binary built by TestMain.
var iggoBin string

// TestMain builds the iggo binary once for every test of the package.
// A failed build fails the package (it is never a skip).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "iggo-tiertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tiertest: temporary directory:", err)
		os.Exit(1)
	}
	iggoBin = filepath.Join(dir, "iggo")
	build := exec.Command("go", "build", "-o", iggoBin, "github.com/iggo-dev/iggo/cmd/iggo")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tiertest: go build ./cmd/iggo:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireBinary fails a test that runs without TestMain's binary.
func requireBinary(t testing.TB) {
	t.Helper()
	if iggoBin == "" {
		t.Fatal("the iggo binary was not built")
	}
}
