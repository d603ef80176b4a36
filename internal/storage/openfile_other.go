//go:build !windows

package storage

import "os"

// openFile opens a segment file. On Unix os.OpenFile already allows the
// name to be removed while the file is open, which retention and purge rely
// on (readers keep their descriptors until they release the segment).
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
