//go:build !windows

package faultsuite

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileKind is a kind of file the corruption faults damage.
type FileKind string

// Damaged file kinds.
const (
	FileSegment  FileKind = "segment"  // a partition's .log segment
	FileIndex    FileKind = "index"    // a partition's .index file
	FileRaftLog  FileKind = "raft-log" // a raft log segment (.log under a raft directory)
	FileSnapshot FileKind = "snapshot" // a raft snapshot or a metadata snapshot (.bin)
)

// allFileKinds lists the kinds in a fixed order (schedules index into
// it).
func allFileKinds() []FileKind { return []FileKind{FileSegment, FileIndex, FileRaftLog, FileSnapshot} }

// classifyFile says which kind path is, if any: partition segments and
// indexes live under a "partitions" directory, raft logs under a "raft"
// directory (partition groups) or the cluster's "metadata" directory;
// the server's own log file (logs/*.log) is none of them.
func classifyFile(path string) (FileKind, bool) {
	base := filepath.Base(path)
	dirs := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")
	inRaft := slices.Contains(dirs, "raft") || slices.Contains(dirs, "metadata")
	inPartition := slices.Contains(dirs, "partitions")
	switch {
	case strings.HasSuffix(base, ".tmp"):
		return "", false
	case base == "snapshot" || strings.HasSuffix(base, ".bin"):
		return FileSnapshot, true
	case strings.HasSuffix(base, ".log") && inRaft:
		return FileRaftLog, true
	case strings.HasSuffix(base, ".log") && inPartition:
		return FileSegment, true
	case strings.HasSuffix(base, ".index") && inPartition:
		return FileIndex, true
	}
	return "", false
}

// filesOf lists the non-empty files of kind under dir, sorted.
func filesOf(dir string, kind FileKind) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed meanwhile
		}
		if d.IsDir() {
			return nil
		}
		if k, ok := classifyFile(p); ok && k == kind {
			if info, err := d.Info(); err == nil && info.Size() > 0 {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s files under %s: %w", kind, dir, err)
	}
	slices.Sort(out)
	return out, nil
}

// damage flips one bit of, or truncates, one file of kind under dir,
// choosing the file and the position with rng; it returns what it did
// ("" when no file of that kind exists).
func damage(dir string, kind FileKind, truncate bool, rng *rand.Rand) (string, error) {
	files, err := filesOf(dir, kind)
	if err != nil || len(files) == 0 {
		return "", err
	}
	path := files[rng.IntN(len(files))]
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("damage: %w", err)
	}
	size := info.Size()
	rel, _ := filepath.Rel(dir, path)
	if truncate {
		at := rng.Int64N(size)
		if err := os.Truncate(path, at); err != nil {
			return "", fmt.Errorf("truncate %s: %w", path, err)
		}
		return fmt.Sprintf("truncated %s from %d to %d bytes", rel, size, at), nil
	}
	pos := rng.Int64N(size)
	bit := byte(1) << rng.IntN(8)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("flip a bit of %s: %w", path, err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		return "", fmt.Errorf("read %s at %d: %w", path, pos, err)
	}
	b[0] ^= bit
	if _, err := f.WriteAt(b[:], pos); err != nil {
		return "", fmt.Errorf("write %s at %d: %w", path, pos, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("sync %s: %w", path, err)
	}
	return fmt.Sprintf("flipped bit %#02x at byte %d of %s (%d bytes)", bit, pos, rel, size), nil
}
