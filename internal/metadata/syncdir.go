package metadata

import "github.com/iggo-dev/iggo/internal/fileio"

// syncDir fsyncs a directory so a created, renamed or removed name is
// durable (fileio.SyncDir; nothing on Windows).
func syncDir(dir string) error { return fileio.SyncDir(dir) }
