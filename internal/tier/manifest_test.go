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
	overlap := sampleManifest()
	overlap.Segments[1].Start = 50
	cases["overlap"] = overlap.encode()
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
