package tier

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func sampleManifest() Manifest {
	return Manifest{
		Epoch: 3,
		Segments: []Remote{
			{Start: 0, End: 100, Bytes: 4096, Records: 10, FirstTimestamp: 1, LastTimestamp: 9, Key: "p/e3/0.log", ETag: "abc"},
			{Start: 100, End: 250, Bytes: 8192, Records: 15, FirstTimestamp: 10, LastTimestamp: 20, Key: "p/e3/100.log", ETag: "def-2"},
		},
		Deletes: []string{"p/e2/0.log", "p/e2/0.index"},
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, manifestName)
	m, err := loadManifest(path)
	if err != nil || m.Epoch != 0 || len(m.Segments) != 0 {
		t.Fatalf("missing manifest: %+v %v, want empty", m, err)
	}
	want := sampleManifest()
	if err := want.save(path); err != nil {
		t.Fatal(err)
	}
	got, err := loadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if i := got.find(150); i != 1 {
		t.Fatalf("find(150) = %d", i)
	}
	if i := got.find(250); i != -1 {
		t.Fatalf("find(250) = %d", i)
	}
}

func TestManifestInsertAndCover(t *testing.T) {
	var m Manifest
	seg := func(start, end uint64) Remote {
		return Remote{Start: start, End: end, Bytes: 1, Records: 1, Key: "k"}
	}
	for _, r := range []Remote{seg(100, 200), seg(0, 100), seg(300, 400)} {
		if !m.insert(r) {
			t.Fatalf("insert %d..%d refused", r.Start, r.End)
		}
	}
	if m.insert(seg(120, 180)) || m.insert(seg(0, 200)) {
		t.Fatal("a segment whose offsets are held, or that swallows others, was inserted")
	}
	// A replica's segment overlapping the uploaded ones (other cuts).
	if !m.insert(seg(150, 250)) {
		t.Fatal("overlapping segment refused")
	}
	if !m.covers(0, 250) || m.covers(0, 260) || m.covers(250, 300) || !m.covers(300, 400) {
		t.Fatalf("covers wrong over %+v", m.Segments)
	}
	if i := m.find(180); i != 1 {
		t.Fatalf("find(180) = %d, want the first segment holding it", i)
	}
	if _, err := decodeManifest(m.encode()); err != nil {
		t.Fatalf("overlapping manifest does not decode: %v", err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := sampleManifest().Segments[1]
	epoch, got, err := decodeRecord(encodeRecord(7, r))
	if err != nil || epoch != 7 || !reflect.DeepEqual(got, r) {
		t.Fatalf("record: %d %+v %v", epoch, got, err)
	}
	b := encodeRecord(7, r)
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(append([]byte(nil), b...), 0), append([]byte{9}, b[1:]...)} {
		if _, _, err := decodeRecord(bad); err == nil {
			t.Fatalf("bad record %x decoded", bad)
		}
	}
}

func TestManifestRejects(t *testing.T) {
	good := sampleManifest()
	b := good.encode()
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXXXXXX"), b[8:]...),
		"truncated": b[:len(b)-9],
	}
	flipped := append([]byte(nil), b...)
	flipped[30] ^= 1
	cases["bit flip"] = flipped
	order := sampleManifest()
	order.Segments[1].Start = 0
	cases["start out of order"] = order.encode()
	inside := sampleManifest()
	inside.Segments[1].End = 100
	cases["end out of order"] = inside.encode()
	empty := sampleManifest()
	empty.Segments[0].End = 0
	cases["empty segment"] = empty.encode()
	for name, in := range cases {
		if _, err := decodeManifest(in); !errors.Is(err, errManifest) {
			t.Errorf("%s: %v, want errManifest", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), manifestName)
	if err := os.WriteFile(path, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadManifest(path); !errors.Is(err, errManifest) {
		t.Fatalf("load of a damaged manifest: %v", err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	m := sampleManifest()
	f.Add(m.encode())
	f.Add((&Manifest{}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes.
		if again := m.encode(); string(again) != string(b) {
			t.Fatalf("re-encoding differs")
		}
	})
}
