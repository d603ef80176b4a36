package raftlog

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// buildLog writes n entries of dataBytes each to a new Log in dir (with
// small segments) and closes it; it returns the entries.
func buildLog(t *testing.T, dir string, n int, dataBytes int) []*pb.Entry {
	t.Helper()
	l := openT(t, dir, Options{SegmentBytes: 2048, Sync: true})
	ents := make([]*pb.Entry, n)
	for i := range ents {
		ents[i] = mkEntry(uint64(i+1), 1+uint64(i/7), bytes.Repeat([]byte{byte(i)}, dataBytes))
	}
	if err := l.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := l.SetHardState(&pb.HardState{Term: new(uint64(3)), Vote: new(uint64(2)), Commit: new(uint64(n / 2))}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return ents
}

func segmentPaths(t *testing.T, dir string) []string {
	t.Helper()
	files, err := segmentFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(dir, f.name)
	}
	return out
}

// recordOffsets returns the offset of every record of a segment file.
func recordOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := 0; off < len(b); {
		_, n, err := decodeRecord(b[off:])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, off, err)
		}
		offs = append(offs, int64(off))
		off += n
	}
	return offs
}

// copyDir copies the regular files of src into a new temp dir.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// openCapture opens dir with a logger writing into the returned buffer.
func openCapture(dir string) (*Log, *bytes.Buffer, error) {
	var buf bytes.Buffer
	l, err := Open(dir, Options{SegmentBytes: 2048, Sync: true, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	return l, &buf, err
}

func checkEntriesEqual(t *testing.T, l *Log, want []*pb.Entry) {
	t.Helper()
	last, _ := l.LastIndex()
	if last != uint64(len(want)) {
		t.Fatalf("last index %d, want %d", last, len(want))
	}
	got, err := l.Entries(1, last+1, math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	if !equalEntries(got, want) {
		t.Fatalf("entries differ")
	}
}

func TestTornLastRecordAtEveryOffset(t *testing.T) {
	src := t.TempDir()
	ents := buildLog(t, src, 40, 150)
	paths := segmentPaths(t, src)
	if len(paths) < 3 {
		t.Fatalf("want several segments, got %d", len(paths))
	}
	lastPath := paths[len(paths)-1]
	offs := recordOffsets(t, lastPath)
	st, _ := os.Stat(lastPath)
	recStart := offs[len(offs)-1]
	for cut := recStart; cut < st.Size(); cut++ {
		dir := copyDir(t, src)
		p := filepath.Join(dir, filepath.Base(lastPath))
		if err := os.Truncate(p, cut); err != nil {
			t.Fatal(err)
		}
		l, logs, err := openCapture(dir)
		if err != nil {
			t.Fatalf("cut at %d: open: %v", cut, err)
		}
		checkEntriesEqual(t, l, ents[:len(ents)-1])
		if cut > recStart {
			line := logs.String()
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, p) || !strings.Contains(line, fmt.Sprintf("offset=%d", recStart)) {
				t.Fatalf("cut at %d: want a warning naming %s and offset %d, got %q", cut, p, recStart, line)
			}
		}
		// The log continues cleanly after the cut.
		again := mkEntry(uint64(len(ents)), 9, []byte("again"))
		if err := l.Append([]*pb.Entry{again}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openT(t, dir, Options{SegmentBytes: 2048})
		checkEntriesEqual(t, l, append(append([]*pb.Entry(nil), ents[:len(ents)-1]...), again))
		_ = l.Close()
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptMiddleRecordFailsOpen(t *testing.T) {
	src := t.TempDir()
	buildLog(t, src, 45, 150)
	paths := segmentPaths(t, src)
	for _, k := range []int{0, 1, len(paths) - 1} {
		offs := recordOffsets(t, paths[k])
		if len(offs) < 3 {
			t.Fatalf("segment %d has %d records", k, len(offs))
		}
		for _, delta := range []int64{2, recordHeaderBytes + 5} { // the length, then the payload
			dir := copyDir(t, src)
			p := filepath.Join(dir, filepath.Base(paths[k]))
			flipByte(t, p, offs[1]+delta)
			l, _, err := openCapture(dir)
			if err == nil {
				_ = l.Close()
				t.Fatalf("segment %d: open succeeded over a corrupt record", k)
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", offs[1])) {
				t.Fatalf("segment %d: error %q does not name %s and offset %d", k, err, p, offs[1])
			}
		}
	}
}

func TestCorruptLastRecordIsCut(t *testing.T) {
	src := t.TempDir()
	ents := buildLog(t, src, 40, 150)
	paths := segmentPaths(t, src)
	last := paths[len(paths)-1]
	offs := recordOffsets(t, last)
	flipByte(t, last, offs[len(offs)-1]+recordHeaderBytes+20)
	l, logs, err := openCapture(src)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	checkEntriesEqual(t, l, ents[:len(ents)-1])
	if !strings.Contains(logs.String(), "corrupt record") {
		t.Fatalf("no warning: %q", logs)
	}
}

func TestZeroFilledTailIsCut(t *testing.T) {
	src := t.TempDir()
	ents := buildLog(t, src, 40, 150)
	paths := segmentPaths(t, src)
	f, err := os.OpenFile(paths[len(paths)-1], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	l, logs, err := openCapture(src)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	checkEntriesEqual(t, l, ents)
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("no warning: %q", logs)
	}
}

func TestMissingMiddleSegmentFailsOpen(t *testing.T) {
	src := t.TempDir()
	buildLog(t, src, 40, 150)
	paths := segmentPaths(t, src)
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	l, _, err := openCapture(src)
	if err == nil {
		_ = l.Close()
		t.Fatal("open succeeded with a hole")
	}
	if !strings.Contains(err.Error(), paths[2]) {
		t.Fatalf("error %q does not name %s", err, paths[2])
	}
}

func TestTornTempFilesIgnored(t *testing.T) {
	src := t.TempDir()
	buildLog(t, src, 10, 20)
	for _, name := range []string{hardStateFile, firstFile, snapshotFile} {
		if err := os.WriteFile(filepath.Join(src, name+tempSuffix), []byte{1, 2, 3}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := openT(t, src, Options{})
	defer func() { _ = l.Close() }()
	hs, _, err := l.InitialState()
	if err != nil || hs.GetTerm() != 3 || hs.GetVote() != 2 || hs.GetCommit() != 5 {
		t.Fatalf("hard state %v, %v", hs, err)
	}
	if m, _ := filepath.Glob(filepath.Join(src, "*"+tempSuffix)); len(m) != 0 {
		t.Fatalf("temp files left: %v", m)
	}
}

func TestCommitOnlyChangeSurvivesAndTornCommitFallsBack(t *testing.T) {
	dir := t.TempDir()
	buildLog(t, dir, 10, 20)
	l := openT(t, dir, Options{})
	if err := l.SetHardState(&pb.HardState{Term: new(uint64(3)), Vote: new(uint64(2)), Commit: new(uint64(9))}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	l = openT(t, dir, Options{})
	hs, _, _ := l.InitialState()
	_ = l.Close()
	if hs.GetCommit() != 9 {
		t.Fatalf("commit %d after reopen, want 9", hs.GetCommit())
	}
	flipByte(t, filepath.Join(dir, commitFile), recordHeaderBytes+1)
	l = openT(t, dir, Options{})
	defer func() { _ = l.Close() }()
	hs, _, _ = l.InitialState()
	if hs.GetCommit() != 5 || hs.GetTerm() != 3 || hs.GetVote() != 2 {
		t.Fatalf("hard state %v after a torn commit file, want term 3 vote 2 commit 5", hs)
	}
	// A later term change goes to the hardstate file and wins.
	if err := l.SetHardState(&pb.HardState{Term: new(uint64(4)), Vote: new(uint64(0)), Commit: new(uint64(6))}); err != nil {
		t.Fatal(err)
	}
}

func TestInterruptedApplySnapshotIsFinished(t *testing.T) {
	dir := t.TempDir()
	buildLog(t, dir, 40, 150)
	l := openT(t, dir, Options{SegmentBytes: 2048})
	snap := pb.EnsureSnapshot(&pb.Snapshot{Data: []byte("state"), Metadata: &pb.SnapshotMetadata{Index: new(uint64(100)), Term: new(uint64(8))}})
	// Crash right after the snapshot file was written.
	if err := l.storeSnapshot(snapshotRecord{kind: snapApplied, gen: l.first.gen + 1, snap: snap}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	l, logs, err := openCapture(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	first, _ := l.FirstIndex()
	last, _ := l.LastIndex()
	term, _ := l.Term(100)
	if first != 101 || last != 100 || term != 8 {
		t.Fatalf("after recovery first %d last %d term(100) %d, want 101 100 8", first, last, term)
	}
	if len(segmentPaths(t, dir)) != 0 {
		t.Fatal("segments left after an applied snapshot")
	}
	if !strings.Contains(logs.String(), "interrupted") {
		t.Fatalf("no warning: %q", logs)
	}
	if err := l.Append([]*pb.Entry{mkEntry(101, 8, nil)}); err != nil {
		t.Fatal(err)
	}
}

func TestInterruptedCompactIsFinished(t *testing.T) {
	dir := t.TempDir()
	ents := buildLog(t, dir, 40, 150)
	before := len(segmentPaths(t, dir))
	// Crash after the first marker was written, before any segment went.
	if err := writeFileAtomic(fileio.OS{}, dir, firstFile, encodeFirst(firstMarker{index: 30, term: ents[29].GetTerm()})); err != nil {
		t.Fatal(err)
	}
	l := openT(t, dir, Options{SegmentBytes: 2048})
	defer func() { _ = l.Close() }()
	if after := len(segmentPaths(t, dir)); after >= before || after == 0 {
		t.Fatalf("segments %d before, %d after recovery", before, after)
	}
	if _, err := l.Entries(30, 41, math.MaxUint64); errClass(err) != "compacted" {
		t.Fatalf("entries(30): %v", err)
	}
	got, err := l.Entries(31, 41, math.MaxUint64)
	if err != nil || !equalEntries(got, ents[30:]) {
		t.Fatalf("entries(31, 41): %d entries, %v", len(got), err)
	}
	if term, _ := l.Term(30); term != ents[29].GetTerm() {
		t.Fatalf("term(30) %d", term)
	}
}

// TestTornCommitFileBelowCompaction: the commit file holds the only commit
// index above the compaction point; once it is torn, the hardstate file's
// older commit lies below the log's first index, and raft would refuse to
// start (it panics). The commit index the log reports is raised to the
// compaction point, and raft starts.
func TestTornCommitFileBelowCompaction(t *testing.T) {
	dir := t.TempDir()
	buildLog(t, dir, 100, 20) // hardstate file: commit 50
	l := openT(t, dir, Options{SegmentBytes: 2048})
	if err := l.SetHardState(&pb.HardState{Term: new(uint64(3)), Vote: new(uint64(2)), Commit: new(uint64(90))}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CreateSnapshot(83, &pb.ConfState{Voters: []uint64{1, 2, 3}}, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(83); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	if err := os.Truncate(filepath.Join(dir, commitFile), 5); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, Options{SegmentBytes: 2048})
	defer func() { _ = l.Close() }()
	hs, _, err := l.InitialState()
	if err != nil || hs.GetCommit() != 83 || hs.GetTerm() != 3 || hs.GetVote() != 2 {
		t.Fatalf("hard state %v (%v) after a torn commit file, want term 3 vote 2 commit 83", hs, err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("raft refused the log: %v", r)
		}
	}()
	if _, err := raft.NewRawNode(&raft.Config{ID: 2, ElectionTick: 10, HeartbeatTick: 1, Storage: l, MaxInflightMsgs: 16,
		Logger: &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}}); err != nil {
		t.Fatal(err)
	}
}
