package storage

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// segmentLogs returns the .log paths of dir in offset order.
func segmentLogs(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+logSuffix))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func indexOf(logPath string) string { return strings.TrimSuffix(logPath, logSuffix) + indexSuffix }

// recordsIn walks a log file and returns its records (start offset from
// the file name).
func recordsIn(t testing.TB, path string) []memEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	start, _ := parseSegmentName(filepath.Base(path), logSuffix)
	w := walker{f: f, size: fi.Size(), format: fakeFormat{}, maxRecord: DefaultMaxRecordBytes}
	e, err := w.walk(start)
	if err != nil {
		t.Fatalf("walk %s: %v", path, err)
	}
	return e
}

func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func truncateFile(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func flipByte(t testing.TB, path string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b[:], pos); err != nil {
		t.Fatal(err)
	}
}

// buildLog writes a multi-segment partition and returns its directory and
// records.
func buildLog(t testing.TB, opts Options, n int) (string, []appended) {
	t.Helper()
	dir := t.TempDir()
	opts.SegmentBytes = 2500
	p := mustOpen(t, dir, opts)
	recs := appendN(t, p, n, 11)
	mustClose(t, p)
	return dir, recs
}

// TestRecoverRandomTruncation truncates the active segment's .log and
// .index at random offsets (a crash mid-write) and checks that recovery
// keeps exactly the complete records, continues offsets after them, and
// never loses a complete record.
func TestRecoverRandomTruncation(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		// The segment size buildLog writes with: a reopened active
		// segment preallocates this much, not the 1 GiB default, for
		// each of the copies below (which all live until the test ends).
		opts.SegmentBytes = 2500
		dir, recs := buildLog(t, opts, 60)
		logs := segmentLogs(t, dir)
		if len(logs) < 3 {
			t.Fatalf("want several segments, got %d", len(logs))
		}
		lastLog := logs[len(logs)-1]
		activeRecs := recordsIn(t, lastLog)
		sealedCount := len(recs) - len(activeRecs)
		rng := rand.New(rand.NewPCG(1, 2))
		for iter := range 25 {
			d := copyDir(t, dir)
			l := filepath.Join(d, filepath.Base(lastLog))
			idx := indexOf(l)
			cut := rng.Int64N(fileSize(t, l) + 1)
			truncateFile(t, l, cut)
			switch iter % 3 {
			case 1:
				truncateFile(t, idx, rng.Int64N(fileSize(t, idx)+1))
			case 2:
				if err := os.Remove(idx); err != nil {
					t.Fatal(err)
				}
			}
			keep := 0
			for _, e := range activeRecs {
				if e.endPos() <= cut {
					keep++
				}
			}
			want := recs[:sealedCount+keep]
			p := mustOpen(t, d, opts)
			checkSame(t, p, want)
			next := want[len(want)-1].base + uint64(want[len(want)-1].count)
			if st := p.Stats(); st.NextOffset != next {
				t.Fatalf("iter %d: next %d, want %d", iter, st.NextOffset, next)
			}
			more := appendN(t, p, 2, iter)
			if more[0].base != next {
				t.Fatalf("iter %d: appended at %d, want %d", iter, more[0].base, next)
			}
			mustClose(t, p)
			p = mustOpen(t, d, opts)
			checkSame(t, p, append(slices.Clone(want), more...))
			mustClose(t, p)
		}
	})
}

func TestRecoverCases(t *testing.T) {
	opts := Options{Format: fakeFormat{}, FlushInterval: -1}
	dir, recs := buildLog(t, opts, 60)
	logs := segmentLogs(t, dir)
	lastLog := logs[len(logs)-1]
	activeRecs := recordsIn(t, lastLog)
	sealedRecs := recordsIn(t, logs[1])
	if len(activeRecs) < 3 || len(sealedRecs) < 3 {
		t.Fatalf("need 3 records in segments, have %d and %d", len(activeRecs), len(sealedRecs))
	}
	nSealed := len(recs) - len(activeRecs)
	nFirst := len(recordsIn(t, logs[0]))
	base := filepath.Base
	for _, tc := range []struct {
		name         string
		verifySealed bool
		damage       func(t *testing.T, d string)
		corrupt      bool // Open must fail with ErrCorrupt
		want         []appended
	}{
		{"intact", false, func(*testing.T, string) {}, false, recs},
		{"garbage tail", false, func(t *testing.T, d string) {
			f, _ := os.OpenFile(filepath.Join(d, base(lastLog)), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("garbage that is not a record at all, longer than a header"))
			f.Close()
		}, false, recs},
		{"zero tail", false, func(t *testing.T, d string) {
			l := filepath.Join(d, base(lastLog))
			truncateFile(t, l, fileSize(t, l)+4096)
		}, false, recs},
		{"last active record corrupt", false, func(t *testing.T, d string) {
			flipByte(t, filepath.Join(d, base(lastLog)), activeRecs[len(activeRecs)-1].pos+40)
		}, false, recs[:len(recs)-1]},
		{"middle active record corrupt", false, func(t *testing.T, d string) {
			// The index says valid records follow: quarantined.
			flipByte(t, filepath.Join(d, base(lastLog)), activeRecs[1].pos+40)
		}, false, without(recs, nSealed+1)},
		{"middle active record corrupt, no index", false, func(t *testing.T, d string) {
			// Its own length header says where the next record starts.
			flipByte(t, filepath.Join(d, base(lastLog)), activeRecs[1].pos+40)
			os.Remove(filepath.Join(d, base(indexOf(lastLog))))
		}, false, without(recs, nSealed+1)},
		{"middle active record length corrupt, no index", false, func(t *testing.T, d string) {
			// Without an index nothing says valid data follows: cut there.
			flipByte(t, filepath.Join(d, base(lastLog)), activeRecs[1].pos+17)
			os.Remove(filepath.Join(d, base(indexOf(lastLog))))
		}, false, recs[:nSealed+1]},
		{"sealed last record corrupt", false, func(t *testing.T, d string) {
			flipByte(t, filepath.Join(d, base(logs[1])), sealedRecs[len(sealedRecs)-1].pos+40)
		}, false, without(recs, nFirst+len(sealedRecs)-1)},
		{"sealed middle record corrupt, verified", true, func(t *testing.T, d string) {
			flipByte(t, filepath.Join(d, base(logs[1])), sealedRecs[1].pos+40)
		}, false, without(recs, nFirst+1)},
		{"sealed middle record corrupt, damaged index", false, func(t *testing.T, d string) {
			// The record's own length header says where the next one starts.
			flipByte(t, filepath.Join(d, base(logs[1])), sealedRecs[1].pos+40)
			truncateFile(t, filepath.Join(d, base(indexOf(logs[1]))), IndexEntryBytes+3)
		}, false, without(recs, nFirst+1)},
		{"sealed middle record header corrupt, no index", true, func(t *testing.T, d string) {
			// Nothing locates the record after the damaged one: the rest
			// of the segment, up to the next one's start, is quarantined.
			flipByte(t, filepath.Join(d, base(logs[1])), sealedRecs[1].pos+17)
			os.Remove(filepath.Join(d, base(indexOf(logs[1]))))
		}, false, append(slices.Clone(recs[:nFirst+1]), recs[nFirst+len(sealedRecs):]...)},
		{"sealed log truncated", false, func(t *testing.T, d string) {
			truncateFile(t, filepath.Join(d, base(logs[1])), sealedRecs[len(sealedRecs)-1].pos)
		}, true, nil},
		{"sealed index missing", false, func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, base(indexOf(logs[1]))))
		}, false, recs},
		{"sealed index torn", false, func(t *testing.T, d string) {
			i := filepath.Join(d, base(indexOf(logs[1])))
			truncateFile(t, i, fileSize(t, i)-5)
		}, false, recs},
		{"sealed index entry past log", false, func(t *testing.T, d string) {
			i := filepath.Join(d, base(indexOf(logs[1])))
			flipByte(t, i, fileSize(t, i)-2)
		}, false, recs},
		{"sealed index wrong timestamp", false, func(t *testing.T, d string) {
			i := filepath.Join(d, base(indexOf(logs[1])))
			flipByte(t, i, fileSize(t, i)-IndexEntryBytes+8)
		}, false, recs},
		{"orphan index", false, func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, segmentStem(1<<40)+indexSuffix), []byte("x"), 0o644)
		}, false, recs},
		{"gap", false, func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, base(logs[1])))
		}, true, nil},
		{"empty sealed segment", false, func(t *testing.T, d string) {
			truncateFile(t, filepath.Join(d, base(logs[1])), 0)
		}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, dir)
			tc.damage(t, d)
			o := opts
			o.SegmentBytes = 2500
			o.VerifySealed = tc.verifySealed
			p, err := Open(d, o)
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("open: %v, want ErrCorrupt", err)
				}
				ce, ok := errors.AsType[*CorruptError](err)
				if !ok || ce.Path == "" || ce.Reason == "" {
					t.Fatalf("not a descriptive *CorruptError: %#v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			checkServed(t, p, tc.want)
			mustClose(t, p)
			// Repairs and quarantines are persistent: a second open agrees.
			p = mustOpen(t, d, o)
			checkServed(t, p, tc.want)
			mustClose(t, p)
			if _, err := os.Stat(filepath.Join(d, segmentStem(1<<40)+indexSuffix)); err == nil {
				t.Fatal("orphan index kept")
			}
		})
	}
}
