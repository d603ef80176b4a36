package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestQuarantineProperty damages a random set of records of a random log
// (payload or checksum bytes, any segment) and checks, after a reopen
// that verifies every record, that a reader gets exactly the other
// records, that the quarantine is exactly the damaged records, one range
// each (a damaged last record of the active segment is a torn tail: cut),
// that timestamp lookups never answer a damaged offset, and that a Scrub
// finds nothing more and the quarantine survives a plain reopen.
func TestQuarantineProperty(t *testing.T) {
	tmpRoot := fastTempDir(t)
	rapid.Check(t, func(rrt *rapid.T) {
		rt := rapidTB{TB: t, rt: rrt}
		dir, err := os.MkdirTemp(tmpRoot, "quar-prop")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		opts := Options{Format: fakeFormat{}, FlushInterval: -1,
			SegmentBytes: rapid.SampledFrom([]int64{300, 1500, 1 << 20}).Draw(rrt, "segmentBytes")}
		p, err := Open(dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		n := rapid.IntRange(1, 60).Draw(rrt, "records")
		var recs []appended
		for i := range n {
			count := uint32(rapid.IntRange(1, 4).Draw(rrt, "count"))
			rec := makeRecord(count, rapid.IntRange(0, 200).Draw(rrt, "payload"), byte(i))
			res, err := p.Append(rec, count)
			if err != nil {
				rt.Fatal(err)
			}
			recs = append(recs, appended{base: res.BaseOffset, count: count, ts: res.Timestamp, rec: rec})
		}
		if err := p.Close(); err != nil {
			rt.Fatal(err)
		}
		// Where every record is.
		type place struct {
			log string
			pos int64
		}
		var where []place
		for _, l := range segmentLogs(rt, dir) {
			for _, e := range recordsIn(rt, l) {
				where = append(where, place{l, e.pos})
			}
		}
		damaged := map[int]bool{}
		for range rapid.IntRange(0, 6).Draw(rrt, "damages") {
			k := rapid.IntRange(0, n-1).Draw(rrt, "k")
			if damaged[k] {
				continue // one flip per record: a second one may undo it
			}
			// A payload byte, or a checksum byte (the length stays).
			at := int64(24 + rapid.IntRange(0, len(recs[k].rec)-25).Draw(rrt, "at"))
			flipByte(rt, where[k].log, where[k].pos+at)
			damaged[k] = true
		}
		// The last record of the active segment is a torn tail when
		// damaged: cut, not quarantined.
		logs := segmentLogs(rt, dir)
		lastActive := -1
		if where[n-1].log == logs[len(logs)-1] {
			lastActive = n - 1
		}
		var wantDamage []int
		for k := range n {
			if damaged[k] && k != lastActive {
				wantDamage = append(wantDamage, k)
			}
		}
		var want []appended
		for k := range n {
			if !damaged[k] {
				want = append(want, recs[k])
			}
		}
		check := func(p *Partition) {
			checkDamage(rt, p, recs, wantDamage...)
			checkServed(rt, p, want)
			for _, k := range wantDamage {
				off, ok, err := p.OffsetForTimestamp(recs[k].ts)
				if err != nil {
					rt.Fatal(err)
				}
				if ok && slices.ContainsFunc(wantDamage, func(j int) bool { return off >= recs[j].base && off < recs[j].base+uint64(recs[j].count) }) {
					rt.Fatalf("timestamp lookup answers the damaged offset %d", off)
				}
			}
		}
		vo := opts
		vo.VerifySealed = true
		p, err = Open(dir, vo)
		if err != nil {
			rt.Fatal(err)
		}
		check(p)
		rep, err := p.Scrub(t.Context(), 0)
		if err != nil || len(rep.New) != 0 {
			rt.Fatalf("scrub after a verifying open: %+v, %v", rep, err)
		}
		if err := p.Close(); err != nil {
			rt.Fatal(err)
		}
		p, err = Open(dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		check(p)
		// Repair everything: the log is whole again.
		for _, k := range wantDamage {
			if err := p.RepairRecord(recs[k].base, recs[k].rec); err != nil {
				rt.Fatalf("repair %d: %v", k, err)
			}
		}
		checkDamage(rt, p, recs)
		got := readServed(rt, p)
		for _, g := range got {
			i := slices.IndexFunc(recs, func(r appended) bool { return r.base == g.base })
			if i < 0 || !bytes.Equal(recs[i].rec, g.rec) {
				rt.Fatalf("record %d differs after repair", g.base)
			}
		}
		if len(got) != n-boolInt(damaged[lastActive] && lastActive >= 0) {
			rt.Fatalf("%d records after repair, want %d", len(got), n)
		}
		if err := p.Close(); err != nil {
			rt.Fatal(err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*"+quarSuffix)); len(m) != 0 {
			rt.Fatalf("quarantine files after repair: %v", m)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rapidTB lets the testing.TB helpers of this package fail a rapid check
// (so that it shrinks) instead of the whole test.
type rapidTB struct {
	testing.TB
	rt *rapid.T
}

func (r rapidTB) Helper()                        {}
func (r rapidTB) Fatal(args ...any)              { r.rt.Fatal(args...) }
func (r rapidTB) Fatalf(format string, a ...any) { r.rt.Fatalf(format, a...) }
func (r rapidTB) Error(args ...any)              { r.rt.Error(args...) }
func (r rapidTB) Errorf(format string, a ...any) { r.rt.Errorf(format, a...) }
func (r rapidTB) Log(args ...any)                { r.rt.Log(args...) }
func (r rapidTB) Logf(format string, a ...any)   { r.rt.Logf(format, a...) }
