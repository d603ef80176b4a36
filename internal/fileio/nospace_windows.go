package fileio

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// NoSpace reports whether err says the file system is out of space:
// ERROR_DISK_FULL or ERROR_HANDLE_DISK_FULL (and the portable
// syscall.ENOSPC tests inject).
func NoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL) ||
		errors.Is(err, syscall.ENOSPC)
}
