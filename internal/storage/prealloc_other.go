//go:build !linux

package storage

import "errors"

// preallocate does nothing off Linux and answers errors.ErrUnsupported, so segments are
// written without a reservation and are not trimmed when sealed. Chosen
// behaviour: FreeBSD's posix_fallocate extends the file size, which
// recovery would read as written data; macOS (F_PREALLOCATE) and Windows
// (FileAllocationInfo) can reserve space without changing the size, but
// whether the trim at seal time gives the unused part back is not
// documented for their file systems, and a leak of up to one segment size
// per sealed segment is a worse outcome than no reservation. Preallocation
// is only an optimisation, so the plain path is the safe one.
func preallocate(fd int, n int64) error { return errors.ErrUnsupported }
