package fileio

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// SyncDir fsyncs directory dir so that creations, renames and removals in
// it are durable. On Windows it does nothing: a directory cannot be
// opened with the write access FlushFileBuffers needs, so os.File.Sync on
// it fails; NTFS journals creates, renames and deletes itself, and that
// such a name change is on disk when the call returns is what Windows
// does not promise (file contents are synced). docs/DESIGN.md,
// "Platforms".
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	serr := d.Sync()
	if cerr := d.Close(); serr == nil {
		serr = cerr
	}
	if serr != nil {
		return fmt.Errorf("sync dir %s: %w", dir, serr)
	}
	return nil
}

// TempSuffix ends the name of the temporary file WriteFileAtomic writes
// before renaming it into place; one a crash left behind can be removed.
const TempSuffix = ".tmp"

// WriteFileAtomic replaces path with data durably: it writes and fsyncs
// path+TempSuffix, renames it over path and fsyncs the directory. A crash
// leaves either the old file or the new one.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + TempSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}
