//go:build !linux && !darwin && !freebsd

package storage

import "syscall"

// sendfile is not implemented on this OS, so WriteTo always takes the
// portable pread copy (copyTo). Chosen behaviour for Windows: TransmitFile
// would be the counterpart, but it is not wired up; the copy is correct on
// every OS and costs one extra pass through a pooled buffer.
func (e *Extent) sendfile(syscall.Conn) (written int64, handled bool, err error) {
	return 0, false, nil
}
