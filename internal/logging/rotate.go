package logging

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Limits of the rolled-file count (ops.md §4: max_total_size /
// max_file_size, clamped).
const (
	minKeptFiles = 1
	maxKeptFiles = 100_000
)

// rolledTimeFormat stamps a rolled file's name with the UTC time it was
// rolled; names sort in time order.
const rolledTimeFormat = "20060102T150405.000000000Z"

// FileConfig is how a File rolls and what it keeps.
type FileConfig struct {
	// Dir is the log directory, created when missing.
	Dir string
	// Name is the active file's name inside Dir.
	Name string
	// MaxFileSize rolls the file before a write would take it past this
	// many bytes, and at every change of the clock hour; 0 never rolls.
	MaxFileSize int64
	// MaxTotalSize bounds the rolled files together; 0 is unlimited.
	MaxTotalSize int64
	// Retention deletes rolled files modified longer ago; 0 keeps them.
	Retention time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// File is an append-only log file that rolls by size and hourly and
// deletes rolled files by age, count and total size. The active file is
// never deleted. Rolled files are Name + "." + UTC roll time.
type File struct {
	cfg  FileConfig
	keep int

	mu    sync.Mutex
	f     *os.File  // guarded by mu
	size  int64     // guarded by mu
	hour  time.Time // guarded by mu: clock hour the active file belongs to
	close bool      // guarded by mu
}

// OpenFile creates the directory and opens (appending) the active file.
func OpenFile(cfg FileConfig) (*File, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	keep := maxKeptFiles
	if cfg.MaxTotalSize > 0 && cfg.MaxFileSize > 0 {
		keep = int(min(max(cfg.MaxTotalSize/cfg.MaxFileSize, minKeptFiles), maxKeptFiles))
	}
	lf := &File{cfg: cfg, keep: keep}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	if err := lf.open(); err != nil {
		return nil, err
	}
	return lf, nil
}

// Path is the active file's path.
func (lf *File) Path() string { return filepath.Join(lf.cfg.Dir, lf.cfg.Name) }

func (lf *File) open() error {
	f, err := os.OpenFile(lf.Path(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open log file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log file: %w", err)
	}
	lf.f, lf.size = f, st.Size()
	lf.hour = lf.cfg.Now().Truncate(time.Hour)
	if lf.size > 0 {
		lf.hour = st.ModTime().Truncate(time.Hour)
	}
	return nil
}

// Write appends p, rolling the file first when it is due. A failed roll
// keeps writing to the active file and returns the roll error after the
// write.
func (lf *File) Write(p []byte) (int, error) {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.close {
		return 0, os.ErrClosed
	}
	var rollErr error
	if lf.dueLocked(len(p)) {
		rollErr = lf.rollLocked()
	}
	if lf.f == nil {
		if err := lf.open(); err != nil {
			return 0, errors.Join(rollErr, err)
		}
	}
	n, err := lf.f.Write(p)
	lf.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write log file: %w", err)
	}
	return n, rollErr
}

func (lf *File) dueLocked(n int) bool {
	if lf.cfg.MaxFileSize <= 0 || lf.size == 0 || lf.f == nil {
		return false
	}
	return lf.size+int64(n) > lf.cfg.MaxFileSize || !lf.cfg.Now().Truncate(time.Hour).Equal(lf.hour)
}

// rollLocked renames the active file to its rolled name, opens a new one
// and enforces the limits.
func (lf *File) rollLocked() error {
	now := lf.cfg.Now()
	if err := lf.f.Close(); err != nil {
		return fmt.Errorf("close log file: %w", err)
	}
	lf.f = nil
	rolled := lf.Path() + "." + now.UTC().Format(rolledTimeFormat)
	for i := 1; fileExists(rolled); i++ {
		rolled = fmt.Sprintf("%s.%s.%d", lf.Path(), now.UTC().Format(rolledTimeFormat), i)
	}
	if err := os.Rename(lf.Path(), rolled); err != nil {
		return fmt.Errorf("roll log file: %w", err)
	}
	// The rolled file's modification time is its roll time on our clock,
	// which retention compares against.
	_ = os.Chtimes(rolled, now, now)
	if err := lf.open(); err != nil {
		return err
	}
	return lf.sweepLocked()
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Sweep deletes rolled files older than the retention, then the oldest
// until at most the kept count remain and their total size fits
// MaxTotalSize.
func (lf *File) Sweep() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	return lf.sweepLocked()
}

type rolledFile struct {
	path  string
	size  int64
	mtime time.Time
}

func (lf *File) sweepLocked() error {
	files, err := lf.rolled()
	if err != nil {
		return err
	}
	now := lf.cfg.Now()
	var errs []error
	remove := func(f rolledFile) {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("delete rolled log file: %w", err))
		}
	}
	kept := files[:0]
	for _, f := range files {
		if lf.cfg.Retention > 0 && now.Sub(f.mtime) > lf.cfg.Retention {
			remove(f)
			continue
		}
		kept = append(kept, f)
	}
	var total int64
	for _, f := range kept {
		total += f.size
	}
	for len(kept) > 0 && (len(kept) > lf.keep || lf.cfg.MaxTotalSize > 0 && total > lf.cfg.MaxTotalSize) {
		remove(kept[0])
		total -= kept[0].size
		kept = kept[1:]
	}
	return errors.Join(errs...)
}

// rolled lists the rolled files, oldest first.
func (lf *File) rolled() ([]rolledFile, error) {
	entries, err := os.ReadDir(lf.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("list log directory: %w", err)
	}
	prefix := lf.cfg.Name + "."
	var out []rolledFile
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		out = append(out, rolledFile{path: filepath.Join(lf.cfg.Dir, e.Name()), size: info.Size(), mtime: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].mtime.Equal(out[j].mtime) {
			return out[i].mtime.Before(out[j].mtime)
		}
		return out[i].path < out[j].path
	})
	return out, nil
}

// Close closes the active file; later writes fail.
func (lf *File) Close() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	lf.close = true
	if lf.f == nil {
		return nil
	}
	err := lf.f.Close()
	lf.f = nil
	if err != nil {
		return fmt.Errorf("close log file: %w", err)
	}
	return nil
}
