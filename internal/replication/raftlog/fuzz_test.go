package raftlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeRecord checks that decodeRecord never panics, only returns
// the two record errors, and that whatever it accepts re-encodes to the
// same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, []byte("hello")))
	f.Add(appendRecord(nil, nil))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5})
	f.Add(appendRecord(appendRecord(nil, []byte{1}), []byte{2, 3}))
	if rec, _, err := appendEntryRecord(nil, mkEntry(7, 3, []byte("data"))); err == nil {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		payload, n, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, errTorn) && !errors.Is(err, errCorrupt) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if n > len(b) || n != recordHeaderBytes+len(payload) {
			t.Fatalf("n %d for %d payload bytes in %d", n, len(payload), len(b))
		}
		if !bytes.Equal(appendRecord(nil, payload), b[:n]) {
			t.Fatal("re-encoding differs")
		}
		_, _, _ = entryIndexTerm(payload)
		_, _ = leadingIndex(payload)
	})
}

// FuzzOpenSegment writes fuzzed bytes as the only segment of a Log and
// opens it: Open must either fail or serve a log whose every entry reads
// back.
func FuzzOpenSegment(f *testing.F) {
	var seg []byte
	for i := uint64(1); i <= 3; i++ {
		seg, _, _ = appendEntryRecord(seg, mkEntry(i, 1, []byte("entry")))
	}
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add(append(append([]byte(nil), seg...), 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segmentName(1)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{Logger: quietLogger()})
		if err != nil {
			return
		}
		defer func() { _ = l.Close() }()
		last, _ := l.LastIndex()
		if last == 0 {
			return
		}
		ents, err := l.Entries(1, last+1, 1<<62)
		if err != nil || uint64(len(ents)) != last {
			t.Fatalf("opened log of %d entries serves %d: %v", last, len(ents), err)
		}
	})
}
