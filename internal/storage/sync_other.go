//go:build !linux && !darwin && !windows

package storage

import "os"

// syncData makes the written data of f durable with plain fsync(2)
// (os.File.Sync), the documented way to do so on FreeBSD and the other
// systems built here. fdatasync is not available on all of them; fsync
// writes a little more metadata than fdatasync would, never less.
func syncData(f *os.File) error {
	return f.Sync()
}
