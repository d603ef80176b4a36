package tier

import (
	"fmt"
	"os"
	"sort"

	"github.com/iggo-dev/iggo/internal/storage"
)

// indexFile reads the index of a remote segment (the local copy kept
// beside the manifest) with preads: 24-byte entries, one per record, as
// storage writes them.
type indexFile struct {
	f    *os.File
	path string
	n    int
	seg  *Remote
}

// indexEntry is an index entry with where its record ends: the next
// entry's offset and position, or the segment's end.
type indexEntry struct {
	storage.IndexEntry
	end struct {
		off uint64
		pos int64
	}
}

// openIndexFile opens the index at path of seg, checking its size.
func openIndexFile(path string, seg *Remote) (*indexFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() != int64(seg.Records)*storage.IndexEntryBytes {
		err = fmt.Errorf("%w: index %s holds %d bytes, %d records expected", ErrRemoteRead, path, fi.Size(), seg.Records)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &indexFile{f: f, path: path, n: int(seg.Records), seg: seg}, nil
}

func (ix *indexFile) close() { ix.f.Close() }

// raw reads entry i.
func (ix *indexFile) raw(i int) (storage.IndexEntry, error) {
	var b [storage.IndexEntryBytes]byte
	if _, err := ix.f.ReadAt(b[:], int64(i)*storage.IndexEntryBytes); err != nil {
		return storage.IndexEntry{}, fmt.Errorf("read index %s: %w", ix.path, err)
	}
	return storage.ParseIndexEntry(b[:]), nil
}

// entry reads entry i (0 <= i < n) and where its record ends.
func (ix *indexFile) entry(i int) (indexEntry, error) {
	if i < 0 || i >= ix.n {
		return indexEntry{}, fmt.Errorf("index %s: entry %d of %d", ix.path, i, ix.n)
	}
	var e indexEntry
	var err error
	if e.IndexEntry, err = ix.raw(i); err != nil {
		return e, err
	}
	e.end.off, e.end.pos = ix.seg.End, ix.seg.Bytes
	if i+1 < ix.n {
		nx, err := ix.raw(i + 1)
		if err != nil {
			return e, err
		}
		e.end.off, e.end.pos = nx.Offset, int64(nx.Position)
	}
	if e.end.off <= e.Offset || e.end.pos <= int64(e.Position) {
		return e, fmt.Errorf("%w: index %s: entry %d out of order", ErrRemoteRead, ix.path, i)
	}
	return e, nil
}

// span reads the entries lo..hi-1 with one pread and returns them with
// where the last one's record ends (the next entry's offset and
// position, or the segment's end).
func (ix *indexFile) span(lo, hi int) (entries []storage.IndexEntry, endOff uint64, endPos int64, err error) {
	if lo < 0 || hi > ix.n || lo >= hi {
		return nil, 0, 0, fmt.Errorf("index %s: entries %d..%d of %d", ix.path, lo, hi, ix.n)
	}
	read := hi - lo
	if hi < ix.n {
		read++
	}
	b := make([]byte, read*storage.IndexEntryBytes)
	if _, err := ix.f.ReadAt(b, int64(lo)*storage.IndexEntryBytes); err != nil {
		return nil, 0, 0, fmt.Errorf("read index %s: %w", ix.path, err)
	}
	all := make([]storage.IndexEntry, read)
	for i := range all {
		all[i] = storage.ParseIndexEntry(b[i*storage.IndexEntryBytes:])
	}
	endOff, endPos = ix.seg.End, ix.seg.Bytes
	if hi < ix.n {
		endOff, endPos = all[read-1].Offset, int64(all[read-1].Position)
		all = all[:read-1]
	}
	return all, endOff, endPos, nil
}

// search returns the first i in [0, n) for which f is true (n if none);
// f must be false then true along the index.
func (ix *indexFile) search(f func(storage.IndexEntry) bool) (int, error) {
	var err error
	i := sort.Search(ix.n, func(i int) bool {
		if err != nil {
			return true
		}
		e, rerr := ix.raw(i)
		if rerr != nil {
			err = rerr
			return true
		}
		return f(e)
	})
	return i, err
}

// lastAtOrBelow returns the entry of the record holding offset off (the
// last starting at or before it; 0 when off is before the first).
func (ix *indexFile) lastAtOrBelow(off uint64) (int, error) {
	i, err := ix.search(func(e storage.IndexEntry) bool { return e.Offset > off })
	return max(i-1, 0), err
}

// firstAtOrAbove returns the first entry whose record starts at log
// position pos or later (n if none).
func (ix *indexFile) firstAtOrAbove(pos int64) (int, error) {
	return ix.search(func(e storage.IndexEntry) bool { return int64(e.Position) >= pos })
}

// firstTimestampAtOrAbove returns the first entry with a timestamp at or
// after ts (n if none).
func (ix *indexFile) firstTimestampAtOrAbove(ts uint64) (int, error) {
	return ix.search(func(e storage.IndexEntry) bool { return e.Timestamp >= ts })
}
