package fileio

import (
	"errors"
	"os"

	"github.com/iggo-dev/iggo/internal/rawio"
)

// IO performs the file operations that change what a log holds on disk.
// Implementations must be safe for concurrent use and must not retain the
// buffers they are given.
type IO interface {
	// WriteAt writes b at off (pwrite); as os.File.WriteAt, a short
	// write comes with a non-nil error.
	WriteAt(f *os.File, b []byte, off int64) (int, error)
	// Write writes b at the file offset (write, O_APPEND files).
	Write(f *os.File, b []byte) (int, error)
	// Sync makes what was written to f durable (fdatasync or fsync, as
	// the implementation defines).
	Sync(f *os.File) error
	// Truncate sets the size of f (ftruncate).
	Truncate(f *os.File, size int64) error
	// Allocate reserves n bytes of disk for f from offset 0 without
	// changing its size (fallocate with FALLOC_FL_KEEP_SIZE). An
	// implementation that cannot returns an error wrapping
	// errors.ErrUnsupported.
	Allocate(f *os.File, n int64) error
}

// OS is the operating system: os.File's methods, with Sync as fsync(2)
// (os.File.Sync), and WriteAt a pwrite(2) that does not hand the calling
// goroutine's processor to another thread while it copies
// (internal/rawio). It cannot Allocate.
type OS struct{}

var _ IO = OS{}

// WriteAt implements IO.
func (OS) WriteAt(f *os.File, b []byte, off int64) (int, error) { return rawio.WriteAt(f, b, off) }

// Write implements IO.
func (OS) Write(f *os.File, b []byte) (int, error) { return f.Write(b) }

// Sync implements IO.
func (OS) Sync(f *os.File) error { return f.Sync() }

// Truncate implements IO.
func (OS) Truncate(f *os.File, size int64) error { return f.Truncate(size) }

// Allocate implements IO: not supported.
func (OS) Allocate(*os.File, int64) error { return errors.ErrUnsupported }
