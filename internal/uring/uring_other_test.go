//go:build !linux || !(amd64 || arm64)

package uring

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFdatasyncUnsupported: elsewhere every call says so, and the caller
// syncs itself.
func TestFdatasyncUnsupported(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Fdatasync(f); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Fdatasync: %v, want errors.ErrUnsupported", err)
	}
}
