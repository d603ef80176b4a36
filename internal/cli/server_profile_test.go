package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestStartProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, tr := filepath.Join(dir, "cpu"), filepath.Join(dir, "trace")
	stop, err := startProfiles([]string{envCPUProfile + "=" + cpu, envTrace + "=" + tr})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	for _, p := range []string{cpu, tr} {
		st, err := os.Stat(fmt.Sprintf("%s.%d", p, os.Getpid()))
		if err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v (size %d)", p, err, st.Size())
		}
	}
	stop, err = startProfiles(nil)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := startProfiles([]string{envCPUProfile + "=" + filepath.Join(dir, "missing", "cpu")}); err == nil {
		t.Fatal("a profile in a missing directory started")
	}
}
