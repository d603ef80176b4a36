//go:build !linux

package bench

import "os"

// syncName names the call the disk baseline makes after each write.
const syncName = "fsync"

// syncData is os.File.Sync where fdatasync is not available.
func syncData(f *os.File) error { return f.Sync() }
