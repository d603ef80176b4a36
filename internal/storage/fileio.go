package storage

import (
	"fmt"
	"os"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// osIO is the default Options.FileIO: the operating system, with the
// platform's data sync (syncData: fdatasync, F_FULLFSYNC, ...) and
// fallocate(FALLOC_FL_KEEP_SIZE) where the platform has it
// (prealloc_*.go). It is a zero-size value, so storing it in an
// interface allocates nothing.
type osIO struct{ fileio.OS }

var _ fileio.IO = osIO{}

// Sync implements fileio.IO with the platform data sync.
func (osIO) Sync(f *os.File) error { return syncData(f) }

// Allocate implements fileio.IO with fallocate where available.
func (osIO) Allocate(f *os.File, n int64) error {
	if err := preallocate(int(f.Fd()), n); err != nil {
		return fmt.Errorf("preallocate %s: %w", f.Name(), err)
	}
	return nil
}
