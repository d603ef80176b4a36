package storage

import "github.com/iggo-dev/iggo/internal/fileio"

// syncDir fsyncs a directory so created, renamed or removed entries
// persist (fileio.SyncDir; nothing on Windows, see docs/DESIGN.md,
// "Platforms").
func syncDir(dir string) error { return fileio.SyncDir(dir) }
