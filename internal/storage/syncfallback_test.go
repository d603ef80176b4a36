//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSyncWithFallback checks the macOS F_FULLFSYNC fallback logic on any
// Unix: refusals fall back to fsync (observed through a bad descriptor,
// where fsync fails with EBADF), real failures are returned untouched.
func TestSyncWithFallback(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	must(t, err)
	defer f.Close()
	good := int(f.Fd())
	const bad = -1
	fail := func(err error) func(int) error { return func(int) error { return err } }
	for _, tc := range []struct {
		name string
		fd   int
		full func(int) error
		want error // nil: success
	}{
		{"full sync works, no fallback", bad, fail(nil), nil},
		{"ENOTSUP falls back", good, fail(unix.ENOTSUP), nil},
		{"fallback really runs fsync", bad, fail(unix.ENOTSUP), unix.EBADF},
		{"EOPNOTSUPP falls back", bad, fail(unix.EOPNOTSUPP), unix.EBADF},
		{"ENOTTY falls back", bad, fail(unix.ENOTTY), unix.EBADF},
		{"EINVAL falls back", bad, fail(unix.EINVAL), unix.EBADF},
		{"wrapped refusal falls back", good, fail(fmt.Errorf("fcntl: %w", unix.ENOTSUP)), nil},
		{"EIO is returned", good, fail(unix.EIO), unix.EIO},
		{"ENOSPC is returned", good, fail(unix.ENOSPC), unix.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := syncWithFallback(tc.fd, tc.full)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
