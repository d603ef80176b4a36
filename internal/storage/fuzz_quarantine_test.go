package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzDecodeSidecar: DecodeSidecar never panics, and what decodes encodes
// back to the same bytes.
func FuzzDecodeSidecar(f *testing.F) {
	f.Add(encodeSidecar(nil), int64(100))
	f.Add(encodeSidecar([]Damage{{Pos: 10, Len: 20, First: 3, Last: 5, Reason: "verify record: bad checksum"}}), int64(100))
	f.Add(encodeSidecar([]Damage{{Pos: 0, Len: 5, First: 0, Last: 0}, {Pos: 5, Len: 50, First: 1, Last: 9, Reason: "x"}}), int64(60))
	f.Add([]byte("IGQ1\xff\xff\xff\xff"), int64(1))
	f.Fuzz(func(t *testing.T, b []byte, logSize int64) {
		q, err := DecodeSidecar(b, "seg.log", logSize)
		if err != nil {
			if !errors.Is(err, errSidecar) {
				t.Fatalf("error %v does not match errSidecar", err)
			}
			return
		}
		if got := encodeSidecar(q); !bytes.Equal(got, b) {
			t.Fatalf("re-encoded %x, decoded from %x", got, b)
		}
		for _, d := range q {
			if d.Path != "seg.log" {
				t.Fatalf("path %q", d.Path)
			}
		}
	})
}

// damageTemplate is a partition written once for FuzzDamagedPartition:
// its files' bytes by name, and the records appended.
type damageTemplate struct {
	files map[string][]byte
	names []string
	recs  []appended
}

func buildDamageTemplate(f *testing.F) *damageTemplate {
	dir := f.TempDir()
	opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 1200}
	p := mustOpen(f, dir, opts)
	recs := appendN(f, p, 30, 5)
	// Seal with a quarantine file too: flip a record of the active
	// segment, reopen (quarantined), append until it is sealed.
	mustClose(f, p)
	log, pos := locateRecord(f, dir, recs[len(recs)-2])
	flipByte(f, log, pos+40)
	p = mustOpen(f, dir, opts)
	for p.Stats().Segments < 8 {
		recs = append(recs, appendN(f, p, 1, len(recs))...)
	}
	mustClose(f, p)
	tpl := &damageTemplate{files: map[string][]byte{}, recs: recs}
	ents, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		tpl.files[e.Name()] = b
		tpl.names = append(tpl.names, e.Name())
	}
	slices.Sort(tpl.names)
	return tpl
}

// FuzzDamagedPartition damages the files of a real multi-segment partition
// (one with a quarantine file among them) with byte flips and truncations
// taken from the input, then opens it: Open never panics and either
// refuses with ErrCorrupt or serves only records that verify and are
// exactly the records appended at their offsets, never one it reports as
// damaged (before or after the read) — with VerifySealed and without it,
// where reads verify what Open did not (verify.go) — before and after a
// Scrub pass; another Open keeps that true, and appends continue.
//
// The input is a list of 8-byte operations: file u8 (index into the
// sorted file names), kind u8 (0-2 flip, 3 truncate), xor u8, unused u8,
// position u32.
func FuzzDamagedPartition(f *testing.F) {
	tpl := buildDamageTemplate(f)
	op := func(file, kind, xor byte, pos uint32) []byte {
		b := []byte{file, kind, xor, 0}
		return binary.LittleEndian.AppendUint32(b, pos)
	}
	f.Add([]byte{}, false)
	for i := range tpl.names {
		f.Add(op(byte(i), 0, 0x10, 100), false)
		f.Add(op(byte(i), 0, 0x10, 17), true)
		f.Add(op(byte(i), 3, 0, 500), false)
		f.Add(slices.Concat(op(byte(i), 0, 1, 40), op(byte(i), 0, 0x80, 700)), true)
	}
	byBase := map[uint64]appended{}
	for _, r := range tpl.recs {
		byBase[r.base] = r
	}
	f.Fuzz(func(t *testing.T, ops []byte, verify bool) {
		if len(ops) > 8*16 {
			return
		}
		files := map[string][]byte{}
		for name, b := range tpl.files {
			files[name] = bytes.Clone(b)
		}
		for ; len(ops) >= 8; ops = ops[8:] {
			name := tpl.names[int(ops[0])%len(tpl.names)]
			b := files[name]
			if len(b) == 0 {
				continue
			}
			pos := int(binary.LittleEndian.Uint32(ops[4:8])) % len(b)
			if ops[1]%4 == 3 {
				files[name] = b[:pos]
			} else {
				b[pos] ^= max(ops[2], 1)
			}
		}
		dir := fastTempDir(t)
		for name, b := range files {
			must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
		opts := Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 1200, VerifySealed: verify}
		check := func(p *Partition) {
			got := readServed(t, p)
			dmg := p.Damaged() // with what the read found
			for _, g := range got {
				want, ok := byBase[g.base]
				if !ok || !bytes.Equal(g.rec, want.rec) {
					t.Fatalf("served record %d is not the record appended there", g.base)
				}
				if _, ok := damageAt(dmg, g.base); ok {
					t.Fatalf("served record %d is quarantined", g.base)
				}
			}
		}
		p, err := Open(dir, opts)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v", err)
			}
			return
		}
		// Without VerifySealed, Open verified the active segment and the
		// index and last record of every sealed one; reads verify the
		// rest before serving it.
		check(p)
		if _, err := p.Scrub(t.Context(), 0); err != nil {
			t.Fatalf("scrub: %v", err)
		}
		check(p)
		mustClose(t, p)
		p, err = Open(dir, Options{Format: fakeFormat{}, FlushInterval: -1, SegmentBytes: 1200})
		if err != nil {
			t.Fatalf("reopen after a successful open: %v", err)
		}
		defer p.Close()
		check(p)
		if _, err := p.Append(makeRecord(1, 3, 0), 1); err != nil {
			t.Fatal(err)
		}
	})
}
