package storage

import "testing"

// TestActiveIndexParked: a new or recovered active segment holds only its
// log open; the first flush opens the index, and a sealed segment keeps
// it open for lookups. The data stays readable throughout.
func TestActiveIndexParked(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Format: fakeFormat{}, SegmentBytes: 4000, FlushInterval: -1}
	p := mustOpen(t, dir, opts)
	active := func() *segment { l := p.segs.Load().segs; return l[len(l)-1] }
	if active().idx != nil {
		t.Fatal("a new active segment holds its index open")
	}
	recs := appendN(t, p, 3, 1)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if active().idx == nil {
		t.Fatal("the flush did not open the index")
	}
	mustClose(t, p)

	p = mustOpen(t, dir, opts)
	defer mustClose(t, p)
	if active().idx != nil {
		t.Fatal("a recovered active segment holds its index open")
	}
	recs = append(recs, appendN(t, p, 120, 2)...) // rolls segments
	segs := p.segs.Load().segs
	if len(segs) < 3 {
		t.Fatalf("%d segments, want rolls", len(segs))
	}
	for _, s := range segs[:len(segs)-1] {
		if s.idx == nil {
			t.Fatalf("sealed segment %d has no open index", s.start)
		}
	}
	var rr ReadResult
	defer rr.Release()
	// By offset through the sealed indexes, from every record.
	for _, r := range recs {
		if err := p.Read(&rr, r.base, 1, 0); err != nil || len(rr.Extents) != 1 || rr.Extents[0].FirstOffset != r.base {
			t.Fatalf("read at %d: %v %+v", r.base, err, rr.Extents)
		}
	}
}
