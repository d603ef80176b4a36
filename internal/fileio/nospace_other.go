//go:build !unix && !windows

package fileio

import (
	"errors"
	"syscall"
)

// NoSpace reports whether err says the file system is out of space.
func NoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }
