package storage

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/iggo-dev/iggo/internal/uring"
)

// syncData makes the written data of f durable with fdatasync(2): file
// contents plus the metadata needed to read them back (the size), without
// the timestamps an fsync would also write. The sync runs on an io_uring
// where the kernel allows one (internal/uring: the caller waits in the
// network poller, not in a blocking system call), else directly.
func syncData(f *os.File) error {
	if err := uring.Fdatasync(f); !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
