package storage

import (
	"bytes"
	"errors"
	"testing"
)

// TestAppendStamped: stamped records are written byte for byte, must
// continue the log, roll segments and survive a reopen like Append's.
func TestAppendStamped(t *testing.T) {
	allPermutations(t, func(t *testing.T, opts Options) {
		opts.SegmentBytes = 256
		dir := t.TempDir()
		p := mustOpen(t, dir, opts)
		var want [][]byte
		next, ts := uint64(0), uint64(1000)
		for i := range 10 {
			rec := stampedRecord(next, ts, 3, 40, byte(i))
			orig := bytes.Clone(rec)
			res, err := p.AppendStamped(rec, 3, next, ts)
			if err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
			if res.BaseOffset != next || res.Timestamp != ts || !bytes.Equal(rec, orig) {
				t.Fatalf("append %d: result %+v, record modified %v", i, res, !bytes.Equal(rec, orig))
			}
			want = append(want, orig)
			next += 3
			ts += 5
		}
		if n, last := p.Tail(); n != 30 || last != ts-5 {
			t.Fatalf("tail %d %d", n, last)
		}
		// A hole and a replay are both refused, nothing is written.
		for _, base := range []uint64{31, 27} {
			if _, err := p.AppendStamped(stampedRecord(base, ts, 3, 40, 0), 3, base, ts); !errors.Is(err, ErrOffsetMismatch) {
				t.Fatalf("base %d: %v", base, err)
			}
		}
		// Append continues where the stamped records ended.
		res, err := p.Append(makeRecord(1, 8, 9), 1)
		if err != nil || res.BaseOffset != 30 || res.Timestamp < ts-5 {
			t.Fatalf("append after stamped: %+v %v", res, err)
		}
		if st := p.Stats(); st.Segments < 2 || st.NextOffset != 31 {
			t.Fatalf("stats %+v", st)
		}
		mustClose(t, p)
		p = mustOpen(t, dir, opts)
		defer mustClose(t, p)
		got := readRecords(t, p, 0)
		if len(got) != len(want)+1 {
			t.Fatalf("%d records after reopen, want %d", len(got), len(want)+1)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs after reopen", i)
			}
		}
	})
}
