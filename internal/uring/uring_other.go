//go:build !linux || !(amd64 || arm64)

package uring

import (
	"errors"
	"os"
)

// Fdatasync is not available on this platform: it returns an error
// wrapping errors.ErrUnsupported.
func Fdatasync(*os.File) error { return errors.ErrUnsupported }
