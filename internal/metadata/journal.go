package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// File names in the metadata directory: journal files are named after
// their first op, snapshots after the op they include.
const (
	journalPrefix  = "journal-"
	journalSuffix  = ".log"
	snapshotPrefix = "snapshot-"
	snapshotSuffix = ".bin"
	tmpSuffix      = ".tmp"
)

func journalName(first uint64) string {
	return fmt.Sprintf("%s%020d%s", journalPrefix, first, journalSuffix)
}

func snapshotName(op uint64) string {
	return fmt.Sprintf("%s%020d%s", snapshotPrefix, op, snapshotSuffix)
}

// listOps returns the ops encoded in the names of dir's files with prefix
// and suffix, ascending.
func listOps(dir, prefix, suffix string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, suffix) {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(n, prefix), suffix), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// journal is the open journal file entries are appended to.
type journal struct {
	dir   string
	path  string
	f     *os.File
	io    fileio.IO
	first uint64 // first op of the file
	size  int64  // bytes of whole records in the file
	buf   []byte
}

// openJournal opens (creating when missing) the journal file starting at
// first for appending at its end.
func openJournal(fio fileio.IO, dir string, first uint64) (*journal, error) {
	path := filepath.Join(dir, journalName(first))
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if err := syncDir(dir); err != nil {
			f.Close()
			return nil, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	return &journal{dir: dir, path: path, f: f, io: fio, first: first, size: fi.Size()}, nil
}

// append writes e as one record and fsyncs it: the entry is durable when
// append returns nil. A write refused for lack of space is cut back to the
// last whole record and returned as ErrDiskFull: nothing of e is on disk
// and the journal stays usable. Any other failure (a failed fsync above
// all, which is never retried) leaves the file in an unknown state.
func (j *journal) append(e *Entry) error {
	j.buf = AppendRecord(j.buf[:0], e)
	if _, err := j.io.Write(j.f, j.buf); err != nil {
		err = fmt.Errorf("write metadata journal %s: %w", j.path, err)
		if !fileio.NoSpace(err) {
			return err
		}
		if terr := j.io.Truncate(j.f, j.size); terr != nil {
			return fmt.Errorf("%w; cut back to %d: %w", err, j.size, terr)
		}
		return fmt.Errorf("%w: the file system holding %s is full: %w", ErrDiskFull, j.dir, err)
	}
	if err := j.io.Sync(j.f); err != nil {
		return fmt.Errorf("sync metadata journal %s: %w", j.path, err)
	}
	j.size += int64(len(j.buf))
	if cap(j.buf) > 1<<20 {
		j.buf = nil
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// recovered is what reading the journal files found.
type recovered struct {
	entries []Entry
	// lastFirst is the first op of the newest journal file (0: none).
	lastFirst uint64
	// truncated reports a torn tail that was cut off.
	truncated bool
}

// readJournals reads every journal file in dir and returns the entries
// with op > after, checking that ops are consecutive. A torn record at the
// end of the newest file is cut off (the file is truncated); a bad record
// anywhere else is an error naming the file and offset.
func readJournals(dir string, after uint64) (recovered, error) {
	var rec recovered
	firsts, err := listOps(dir, journalPrefix, journalSuffix)
	if err != nil {
		return rec, err
	}
	var prev uint64
	for i, first := range firsts {
		last := i == len(firsts)-1
		if !last && firsts[i+1] <= after+1 {
			// Every op of this file (firsts[i]..firsts[i+1]-1) is in the
			// snapshot: prune removes such files, and until then they
			// are not read (damage there costs nothing).
			continue
		}
		path := filepath.Join(dir, journalName(first))
		data, err := os.ReadFile(path)
		if err != nil {
			return rec, fmt.Errorf("read %s: %w", path, err)
		}
		off := 0
		for off < len(data) {
			e, n, err := DecodeRecord(data[off:])
			if err != nil {
				if last && tornTail(data[off:], err) {
					if err := truncateFile(path, int64(off)); err != nil {
						return rec, err
					}
					rec.truncated = true
					break
				}
				return rec, &CorruptError{File: path, Detail: fmt.Sprintf("bad record at offset %d (after op %d): %v", off, prev, err)}
			}
			if prev != 0 && e.Op != prev+1 {
				return rec, &CorruptError{File: path, Detail: fmt.Sprintf("op %d at offset %d follows op %d", e.Op, off, prev)}
			}
			prev = e.Op
			if e.Op > after {
				rec.entries = append(rec.entries, e)
			}
			off += n
		}
		rec.lastFirst = first
	}
	if len(rec.entries) > 0 && rec.entries[0].Op != after+1 {
		return rec, &CorruptError{File: dir, Detail: fmt.Sprintf("the first journal entry after the snapshot (op %d) is op %d: ops %d..%d are missing", after, rec.entries[0].Op, after+1, rec.entries[0].Op-1)}
	}
	if prev != 0 && prev < after {
		return rec, &CorruptError{File: dir, Detail: fmt.Sprintf("the journal ends at op %d, before the snapshot's op %d", prev, after)}
	}
	return rec, nil
}

// tornTail reports whether the bad record at the start of rest is a write
// cut short by a crash rather than damage: too short to hold its length,
// a checksum mismatch on a record that ends exactly at the end of the
// file, or a zero-filled remainder.
func tornTail(rest []byte, err error) bool {
	if errors.Is(err, ErrTorn) {
		return true
	}
	allZero := true
	for _, b := range rest {
		if b != 0 {
			allZero = false
			break
		}
	}
	if allZero {
		return true
	}
	if len(rest) >= recordHeaderLen {
		n := uint64(rest[0]) | uint64(rest[1])<<8 | uint64(rest[2])<<16 | uint64(rest[3])<<24
		return n+recordHeaderLen == uint64(len(rest))
	}
	return false
}

func truncateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("truncate torn tail of %s: %w", path, err)
	}
	return f.Sync()
}

// writeSnapshotFile writes data as the snapshot of op: temporary file,
// fsync, rename, directory fsync.
func writeSnapshotFile(fio fileio.IO, dir string, op uint64, data []byte) error {
	final := filepath.Join(dir, snapshotName(op))
	tmp := final + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	if _, err := fio.Write(f, data); err != nil {
		// Give the space of a half-written snapshot back at once.
		f.Close()
		_ = os.Remove(tmp)
		return err // names the file
	}
	if err := fio.Sync(f); err != nil {
		f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("sync metadata snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return syncDir(dir)
}

// removeTemps deletes leftovers of interrupted snapshot writes.
func removeTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), tmpSuffix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// prune keeps the two newest snapshots and the journal files that hold
// entries after the older of them, and deletes the rest.
func prune(dir string) error {
	snaps, err := listOps(dir, snapshotPrefix, snapshotSuffix)
	if err != nil || len(snaps) < 2 {
		return err
	}
	keepFrom := snaps[len(snaps)-2]
	for _, op := range snaps[:len(snaps)-2] {
		_ = os.Remove(filepath.Join(dir, snapshotName(op)))
	}
	firsts, err := listOps(dir, journalPrefix, journalSuffix)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(firsts); i++ {
		// File i holds ops firsts[i]..firsts[i+1]-1.
		if firsts[i+1] <= keepFrom+1 {
			_ = os.Remove(filepath.Join(dir, journalName(firsts[i])))
		}
	}
	return syncDir(dir)
}
