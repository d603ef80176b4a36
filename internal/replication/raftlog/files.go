package raftlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// File names inside a Log directory.
const (
	hardStateFile = "hardstate"
	commitFile    = "commit"
	firstFile     = "first"
	snapshotFile  = "snapshot"
	tempSuffix    = ".tmp"
	segmentSuffix = ".log"
)

// writeFileAtomic replaces dir/name with one record holding payload:
// written to a temp file, fsynced, renamed over the old file, and the
// directory fsynced, so after a crash the file holds either the old or the
// new record, whole.
func writeFileAtomic(fio fileio.IO, dir, name string, payload []byte) error {
	final := filepath.Join(dir, name)
	tmp := final + tempSuffix
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, werr := fio.Write(f, appendRecord(make([]byte, 0, recordHeaderBytes+len(payload)), payload))
	if werr == nil {
		werr = fio.Sync(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, werr)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return syncDir(dir)
}

// readRecordFile returns the payload of the record at the start of path.
// A missing file is reported with an error matching os.ErrNotExist; a bad
// record is an error naming the file.
func readRecordFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	payload, _, err := decodeRecord(b)
	if err != nil {
		return nil, fmt.Errorf("%s at offset 0: %w", path, err)
	}
	return payload, nil
}

// syncDir fsyncs directory dir (fileio.SyncDir).
func syncDir(dir string) error { return fileio.SyncDir(dir) }

// removeTempFiles deletes the temp files an interrupted atomic write left.
func removeTempFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), tempSuffix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove temp file: %w", err)
		}
	}
	return nil
}
