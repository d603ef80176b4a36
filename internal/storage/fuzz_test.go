package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzDecodeIndex(f *testing.F) {
	var valid []byte
	for _, e := range []IndexEntry{{5, 100, 0}, {9, 100, 60}, {12, 130, 200}} {
		valid = e.AppendTo(valid)
	}
	f.Add(valid, uint64(5), int64(300))
	f.Add(valid[:30], uint64(5), int64(300))
	f.Add(valid, uint64(5), int64(200))
	f.Add([]byte{}, uint64(0), int64(0))
	f.Add([]byte{}, uint64(0), int64(10))
	f.Fuzz(func(t *testing.T, b []byte, start uint64, logSize int64) {
		entries, err := DecodeIndex(b, start, logSize)
		if err != nil {
			return
		}
		if len(entries) != len(b)/IndexEntryBytes {
			t.Fatalf("%d entries from %d bytes", len(entries), len(b))
		}
		var enc []byte
		for _, e := range entries {
			enc = e.AppendTo(enc)
		}
		if !bytes.Equal(enc, b) {
			t.Fatal("decode/encode round trip differs")
		}
	})
}

// validPrefix returns the complete valid records at the start of b (fake
// format, offsets from 0) and the end offset.
func validPrefix(b []byte) ([][]byte, uint64) {
	var out [][]byte
	next := uint64(0)
	for len(b) >= fakeHeaderLen {
		n, err := fakeFormat{}.RecordLen(b[:fakeHeaderLen])
		if err != nil || n > int64(len(b)) || n > DefaultMaxRecordBytes {
			break
		}
		info, err := fakeFormat{}.Verify(b[:n])
		if err != nil || info.BaseOffset != next {
			break
		}
		out = append(out, b[:n])
		next += uint64(info.Count)
		b = b[n:]
	}
	return out, next
}

// FuzzRecover writes arbitrary bytes as a segment log (and index) and opens
// the partition: it must either refuse with ErrCorrupt or serve the
// complete valid records at the start of the log and, past damage it
// quarantined, only records that verify and stand in the log as they are,
// in offset order, none of them quarantined; never a torn one. With
// sealed, the bytes form a sealed segment followed by an empty active one.
func FuzzRecover(f *testing.F) {
	var log, idx []byte
	for i := range 4 {
		rec := stampedRecord(uint64(i*3), uint64(1000+i), 3, 20+i*7, byte(i))
		idx = IndexEntry{Offset: uint64(i * 3), Timestamp: uint64(1000 + i), Position: uint64(len(log))}.AppendTo(idx)
		log = append(log, rec...)
	}
	f.Add(log, idx, false)
	f.Add(log, idx, true)
	f.Add(log[:len(log)-5], idx, false)
	f.Add(log, idx[:30], true)
	f.Add(log, []byte{}, false)
	f.Add(append(bytes.Clone(log), 0, 0, 0, 0), idx, false)
	bad := bytes.Clone(log)
	bad[70] ^= 1
	f.Add(bad, idx, false)
	f.Add(bad, idx, true)
	f.Add([]byte{}, []byte{}, false)
	f.Fuzz(func(t *testing.T, log, idx []byte, sealed bool) {
		if len(log) > 1<<16 || len(idx) > 1<<16 {
			return
		}
		dir := fastTempDir(t)
		must(t, os.WriteFile(filepath.Join(dir, segmentStem(0)+logSuffix), log, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, segmentStem(0)+indexSuffix), idx, 0o644))
		want, end := validPrefix(log)
		if sealed {
			if end == 0 {
				end = 1 // an active segment at 1 leaves a gap either way
			}
			must(t, os.WriteFile(filepath.Join(dir, segmentStem(end)+logSuffix), nil, 0o644))
		}
		p, err := Open(dir, Options{Format: fakeFormat{}, FlushInterval: -1})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v", err)
			}
			return
		}
		defer p.Close()
		got := readServed(t, p)
		if len(got) < len(want) {
			t.Fatalf("recovered %d records, the log starts with %d complete ones", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].rec, want[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
		for _, g := range got[len(want):] {
			if !bytes.Contains(log, g.rec) {
				t.Fatalf("served record %d is not in the log", g.base)
			}
		}
		if _, err := p.Append(makeRecord(1, 3, 0), 1); err != nil {
			t.Fatal(err)
		}
		if again := readServed(t, p); len(again) != len(got)+1 {
			t.Fatalf("%d records after append, want %d", len(again), len(got)+1)
		}
	})
}
