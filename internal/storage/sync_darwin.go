package storage

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncData makes the written data of f durable. On macOS fsync(2) only hands
// the data to the drive, whose cache may still lose it on power failure, so
// this asks for fcntl(F_FULLFSYNC), which also flushes the drive cache, and
// falls back to fsync where the file system refuses F_FULLFSYNC (network and
// some FUSE file systems).
func syncData(f *os.File) error {
	return syncWithFallback(int(f.Fd()), fullFsync)
}

// fullFsync issues fcntl(fd, F_FULLFSYNC), retrying on EINTR.
func fullFsync(fd int) error {
	for {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
