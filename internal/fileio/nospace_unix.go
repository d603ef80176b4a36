//go:build unix

package fileio

import (
	"errors"
	"syscall"
)

// NoSpace reports whether err says the file system is out of space:
// ENOSPC, or EDQUOT (the user's quota is used up, which a log can do as
// little about).
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
