package storage

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncData makes the written data of f durable with fdatasync(2): file
// contents plus the metadata needed to read them back (the size), without
// the timestamps an fsync would also write.
func syncData(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
