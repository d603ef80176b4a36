//go:build unix

package storage

import (
	"errors"

	"golang.org/x/sys/unix"
)

// syncWithFallback runs the stronger sync full on fd and, when the file
// system refuses that operation, falls back to fsync(2) so durability is
// never weaker than fsync. Real failures of full (EIO, ENOSPC, ...) are
// returned as they are: they must not be hidden behind a second call that
// might succeed. Used by the macOS F_FULLFSYNC path; it is portable so its
// logic is tested on every Unix.
func syncWithFallback(fd int, full func(fd int) error) error {
	err := full(fd)
	if err == nil || !syncRefused(err) {
		return err
	}
	for {
		err = unix.Fsync(fd)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// syncRefused reports whether err says the operation is not supported for
// this file (rather than that it failed). Which errno a file system without
// F_FULLFSYNC returns is not documented; ENOTSUP is what SMB mounts return,
// the others are the usual "not for this file" answers, and all of them are
// safe to retry with fsync.
func syncRefused(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)
}
