package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Open opens (creating if needed) the Log stored in dir and recovers it:
// temp files of interrupted atomic writes are removed, an interrupted
// ApplySnapshot is finished, segments made obsolete by a compaction are
// deleted, and every remaining record is checked. A torn or corrupt record
// at the end of the last segment (an interrupted write) is cut off with a
// warning naming the file and offset; a bad record anywhere else, or a gap
// between segments, fails Open with an error naming the file and offset.
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	l := &Log{dir: dir, opts: opts, log: opts.Logger.With("raft_log", dir)}
	l.cache.limit = opts.CacheBytes
	if err := l.recover(); err != nil {
		for _, s := range l.segs {
			_ = s.f.Close()
		}
		return nil, fmt.Errorf("open raft log %s: %w", dir, err)
	}
	return l, nil
}

func (l *Log) recover() error {
	if err := removeTempFiles(l.dir); err != nil {
		return err
	}
	if err := l.loadFirstAndSnapshot(); err != nil {
		return err
	}
	if err := l.loadHardState(); err != nil {
		return err
	}
	if err := l.loadSegments(); err != nil {
		return err
	}
	l.cache.reset(l.lastIndex() + 1)
	return nil
}

// loadFirstAndSnapshot reads the first marker and the snapshot, finishing
// an ApplySnapshot that a crash interrupted.
func (l *Log) loadFirstAndSnapshot() error {
	b, ok, err := readOptional(l.dir, firstFile)
	if err != nil {
		return err
	}
	if ok {
		if l.first, err = decodeFirst(b); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(l.dir, firstFile), err)
		}
	}
	b, ok, err = readOptional(l.dir, snapshotFile)
	if err != nil {
		return err
	}
	if !ok {
		l.snap = pb.EnsureSnapshot(nil)
		return nil
	}
	rec, err := decodeSnapshot(b)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(l.dir, snapshotFile), err)
	}
	l.snap = rec.snap
	if rec.kind == snapApplied && rec.gen != l.first.gen {
		md := rec.snap.GetMetadata()
		l.log.Warn("finishing a snapshot apply interrupted by a crash", "index", md.GetIndex(), "term", md.GetTerm())
		names, err := segmentFiles(l.dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := os.Remove(filepath.Join(l.dir, n.name)); err != nil {
				return fmt.Errorf("remove segment: %w", err)
			}
		}
		return l.resetLog(firstMarker{index: md.GetIndex(), term: md.GetTerm(), gen: rec.gen})
	}
	return nil
}

// loadHardState reads the hardstate file and, if it holds a newer record
// with the same term and vote, the commit file.
func (l *Log) loadHardState() error {
	b, ok, err := readOptional(l.dir, hardStateFile)
	if err != nil {
		return err
	}
	if ok {
		if l.durable, err = decodeHardState(b); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(l.dir, hardStateFile), err)
		}
	}
	l.hs, l.hsSeq = l.durable.hs, l.durable.seq
	b, ok, err = readOptional(l.dir, commitFile)
	if err != nil {
		// The commit file is written without fsync: a torn record is
		// expected after a crash and costs only a newer commit index.
		l.log.Warn("ignoring unreadable commit file", "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	rec, err := decodeHardState(b)
	if err != nil {
		l.log.Warn("ignoring unreadable commit file", "err", err)
		return nil
	}
	if rec.seq <= l.durable.seq {
		return nil
	}
	// Later records must be numbered above this one whichever file wins.
	l.hsSeq = rec.seq
	if !sameTermVote(rec.hs, l.durable.hs) {
		l.log.Warn("ignoring commit file with another term or vote than the hard state",
			"commit_term", rec.hs.GetTerm(), "term", l.durable.hs.GetTerm())
		return nil
	}
	l.hs, l.hsSeq = rec.hs, rec.seq
	return nil
}

// segmentFile is a segment file found in the directory.
type segmentFile struct {
	name  string
	first uint64
}

// segmentFiles lists the segment files of dir in index order.
func segmentFiles(dir string) ([]segmentFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []segmentFile
	for _, e := range ents {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, segmentFile{name: e.Name(), first: first})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out, nil
}

// loadSegments scans the segment files, builds the index of entries above
// the first marker and opens the files.
func (l *Log) loadSegments() error {
	files, err := segmentFiles(l.dir)
	if err != nil {
		return err
	}
	next := l.first.index + 1 // the entry the next file must start at or before
	for k, sf := range files {
		path := filepath.Join(l.dir, sf.name)
		if k+1 < len(files) && files[k+1].first <= next {
			// Every entry of this file is compacted: an interrupted
			// Compact left it behind.
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("remove compacted segment: %w", err)
			}
			continue
		}
		if len(l.segs) == 0 && sf.first > next {
			return fmt.Errorf("%s: starts at entry %d but the log needs entry %d: %w", path, sf.first, next, errCorrupt)
		}
		if len(l.segs) > 0 && sf.first != next {
			return fmt.Errorf("%s: starts at entry %d, want %d: %w", path, sf.first, next, errCorrupt)
		}
		s, count, err := l.scan(path, sf.first, k == len(files)-1)
		if err != nil {
			return err
		}
		l.segs = append(l.segs, s)
		next = max(next, sf.first+count)
	}
	// Drop segments left wholly at or below the marker (a crash can lose
	// unsynced entries that a durable Compact already covered).
	for len(l.segs) > 0 && segmentEnd(l.segs, 0, l.lastIndex()) <= l.first.index {
		if err := closeAndRemove(l.segs[0]); err != nil {
			return err
		}
		l.segs = l.segs[1:]
	}
	return nil
}

// scan opens and checks one segment, appending its entries above the
// marker to l.locs.
func (l *Log) scan(path string, first uint64, last bool) (*segment, uint64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("open segment: %w", err)
	}
	res, err := scanSegment(f, first, func(e scannedEntry) {
		if e.index > l.first.index {
			l.locs = append(l.locs, entryLoc{term: e.term, off: e.off, size: e.size})
		}
	})
	if err == nil && res.badAt >= 0 {
		if !last || !res.badAtEnd {
			err = fmt.Errorf("%s at offset %d: %w", path, res.badAt, res.badErr)
		} else {
			l.log.Warn("cutting off a torn record at the end of the log",
				slog.String("file", path), slog.Int64("offset", res.badAt), slog.Int64("bytes", res.fileSize-res.badAt),
				slog.String("reason", res.badErr.Error()))
			if err = f.Truncate(res.badAt); err == nil {
				err = f.Sync()
			}
			if err != nil {
				err = fmt.Errorf("cut %s at offset %d: %w", path, res.badAt, err)
			}
		}
	}
	if err != nil {
		return nil, 0, errors.Join(err, f.Close())
	}
	return &segment{first: first, path: path, f: f, size: res.validSize}, res.count, nil
}
