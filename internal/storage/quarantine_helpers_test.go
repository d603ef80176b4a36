package storage

import (
	"bytes"
	"testing"
)

// servedRecord is one record a reader got, with its offsets.
type servedRecord struct {
	base  uint64
	count uint32
	rec   []byte
}

// readServed reads the whole partition as a consumer would: read from
// offset 0, continue from the end of what came back, until the committed
// end; quarantined ranges are skipped by Read itself. Every record must
// verify, offsets must increase, and no offset may be quarantined.
func readServed(t testing.TB, p *Partition) []servedRecord {
	t.Helper()
	_, next := p.Bounds()
	dmg := p.Damaged()
	var out []servedRecord
	var r ReadResult
	defer r.Release()
	from := uint64(0)
	for guard := 0; from < next; guard++ {
		if guard > 1_000_000 {
			t.Fatal("read loop does not advance")
		}
		if err := p.Read(&r, from, ^uint64(0), 0); err != nil {
			t.Fatalf("read from %d: %v", from, err)
		}
		if len(r.Extents) == 0 {
			break
		}
		for i, e := range r.Extents {
			buf := make([]byte, e.Len)
			if _, err := e.ReadAt(buf, 0); err != nil {
				t.Fatalf("extent %d: %v", i, err)
			}
			recs, err := splitRecords(buf)
			if err != nil {
				t.Fatalf("read from %d, extent %d: a served record fails verification: %v", from, i, err)
			}
			for _, rec := range recs {
				info, _ := fakeFormat{}.Verify(rec)
				if n := len(out); n > 0 && info.BaseOffset < out[n-1].base+uint64(out[n-1].count) {
					t.Fatalf("offset %d served after %d", info.BaseOffset, out[n-1].base)
				}
				for _, d := range dmg {
					if info.BaseOffset <= d.Last && info.BaseOffset+uint64(info.Count) > d.First {
						t.Fatalf("record %d+%d served from the quarantined range %d..%d", info.BaseOffset, info.Count, d.First, d.Last)
					}
				}
				out = append(out, servedRecord{base: info.BaseOffset, count: info.Count, rec: rec})
			}
		}
		from = r.Extents[len(r.Extents)-1].EndOffset
	}
	return out
}

// checkServed asserts that a consumer reading the partition gets exactly
// want, byte for byte.
func checkServed(t testing.TB, p *Partition, want []appended) {
	t.Helper()
	got := readServed(t, p)
	if len(got) != len(want) {
		t.Fatalf("served %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].base != want[i].base || !bytes.Equal(got[i].rec, want[i].rec) {
			t.Fatalf("record %d differs (offset %d, want %d)", i, got[i].base, want[i].base)
		}
	}
}

// without returns recs without the records at the given indexes.
func without(recs []appended, skip ...int) []appended {
	var out []appended
	for i, r := range recs {
		drop := false
		for _, k := range skip {
			drop = drop || i == k
		}
		if !drop {
			out = append(out, r)
		}
	}
	return out
}
