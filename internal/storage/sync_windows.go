package storage

import "os"

// syncData makes the written data of f durable. On Windows os.File.Sync is
// FlushFileBuffers, which writes the file's data and metadata through the
// system cache and asks the device to flush its cache; there is no
// data-only variant.
func syncData(f *os.File) error {
	return f.Sync()
}
