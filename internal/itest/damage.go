package itest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// DamagedRecord is a stored record a test flipped a byte of: where it is
// and which offsets it covers, as VERIFY_PARTITION should report it.
type DamagedRecord struct {
	// File is the segment log relative to the data directory, with
	// forward slashes.
	File        string
	Pos, Len    uint64
	First, Last uint64
}

// indexEntrySize is a .index entry: offset u64 | timestamp u64 | position
// u64, little endian (internal/storage).
const indexEntrySize = 24

// PartitionDir returns the directory of partition id of the only topic
// incarnation with that id in stream (data directory layout:
// streams/{stream}/topics/{topic}-{incarnation}/partitions/{id}).
func (s *Server) PartitionDir(t testing.TB, stream, topic, id uint32) string {
	t.Helper()
	pattern := filepath.Join(s.Dir, "streams", u32s(stream), "topics", u32s(topic)+"-*", "partitions", u32s(id))
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("partition directory %s: %v %v", pattern, m, err)
	}
	return m[0]
}

// Segments returns the segment logs of a partition directory in offset
// order (the last one is the active segment).
func Segments(t testing.TB, partDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(partDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// FlipRecordByte flips one byte in the middle of the record at index rec
// of the sealed segment log seg (a path Segments returned), under the
// running server, and returns that record. dataDir is the server's data
// directory. The segment must hold more than rec+1 records.
func FlipRecordByte(t testing.TB, dataDir, seg string, rec int) DamagedRecord {
	t.Helper()
	idx, err := os.ReadFile(seg[:len(seg)-len(".log")] + ".index")
	if err != nil {
		t.Fatal(err)
	}
	n := len(idx) / indexEntrySize
	if rec+1 >= n {
		t.Fatalf("%s has %d records, want more than %d", seg, n, rec+1)
	}
	entry := func(i int) (off, pos uint64) {
		e := idx[i*indexEntrySize:]
		return binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[16:])
	}
	first, pos := entry(rec)
	next, end := entry(rec + 1)
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := int64(pos + (end-pos)/2)
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dataDir, seg)
	if err != nil {
		t.Fatal(err)
	}
	return DamagedRecord{File: filepath.ToSlash(rel), Pos: pos, Len: end - pos, First: first, Last: next - 1}
}

func u32s(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
