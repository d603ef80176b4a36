//go:build !windows

package tiertest

import (
	"os"
	"testing"

	"github.com/iggo-dev/iggo/internal/testutil"
)

// iggoBin is the iggo binary built by TestMain.
var iggoBin string

// TestMain builds the iggo binary once for every test of the package.
func TestMain(m *testing.M) { os.Exit(testutil.RunWithIggo(m, "tiertest", &iggoBin)) }

// requireBinary fails a test that runs without TestMain's binary.
func requireBinary(t testing.TB) {
	t.Helper()
	if iggoBin == "" {
		t.Fatal("the iggo binary was not built")
	}
}
