package metadata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// fuzzDir returns an empty directory, on tmpfs when the machine has one.
func fuzzDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "metadata-fuzz-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// FuzzReadJournals: reading two journal files of arbitrary bytes (the
// older one starting at op 1, the newer at op split) after a snapshot at
// op after never panics; it either fails with a *CorruptError (or an I/O
// error) or returns consecutive entries after the snapshot, and a second
// read of what the first left (a torn tail cut off) returns the same.
func FuzzReadJournals(f *testing.F) {
	var j1, j2 []byte
	for op := uint64(1); op <= 3; op++ {
		j1 = AppendRecord(j1, &Entry{Op: op, Kind: KindCommand, Code: wire.CmdCreateStream, Body: []byte{1, 'a'}})
	}
	for op := uint64(4); op <= 5; op++ {
		j2 = AppendRecord(j2, &Entry{Op: op, Kind: KindMarker})
	}
	f.Add(j1, j2, uint64(4), uint64(0))
	f.Add(j1, j2, uint64(4), uint64(3))
	f.Add(j1, j2[:len(j2)-3], uint64(4), uint64(2))
	f.Add(j1, []byte{}, uint64(4), uint64(5))
	f.Fuzz(func(t *testing.T, older, newer []byte, split, after uint64) {
		split = 2 + split%16
		after %= 24
		dir := fuzzDir(t)
		if err := os.WriteFile(filepath.Join(dir, journalName(1)), older, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, journalName(split)), newer, 0o640); err != nil {
			t.Fatal(err)
		}
		rec, err := readJournals(dir, after)
		if err != nil {
			if _, ok := errors.AsType[*CorruptError](err); !ok && !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("error is not a CorruptError: %v", err)
			}
			return
		}
		for i, e := range rec.entries {
			if e.Op != after+1+uint64(i) {
				t.Fatalf("entry %d has op %d after snapshot op %d", i, e.Op, after)
			}
		}
		again, err := readJournals(dir, after)
		if err != nil || again.truncated || len(again.entries) != len(rec.entries) {
			t.Fatalf("second read: %d entries, truncated %v, %v; first read %d entries", len(again.entries), again.truncated, err, len(rec.entries))
		}
	})
}
