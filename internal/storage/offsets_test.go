package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOffsets(t *testing.T) {
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			o, err := OpenOffsets(dir, sync)
			must(t, err)
			type op struct {
				name   string
				do     func() error
				kind   ConsumerKind
				id     uint32
				want   uint64
				wantOK bool
			}
			var stored bool
			for _, tc := range []op{
				{"absent", func() error { return nil }, KindConsumer, 1, 0, false},
				{"store", func() error { return o.Store(KindConsumer, 1, 10) }, KindConsumer, 1, 10, true},
				{"kinds are separate", func() error { return nil }, KindGroup, 1, 0, false},
				{"store group", func() error { return o.Store(KindGroup, 1, 3) }, KindGroup, 1, 3, true},
				{"store backwards", func() error { return o.Store(KindConsumer, 1, 4) }, KindConsumer, 1, 4, true},
				{"advance forward", func() error { var err error; stored, err = o.Advance(KindConsumer, 1, 8); return err }, KindConsumer, 1, 8, true},
				{"advance backwards ignored", func() error {
					ok, err := o.Advance(KindConsumer, 1, 2)
					if ok {
						return errors.New("advance moved backwards")
					}
					return err
				}, KindConsumer, 1, 8, true},
				{"advance new", func() error { _, err := o.Advance(KindConsumer, 2, 0); return err }, KindConsumer, 2, 0, true},
				{"delete", func() error {
					ok, err := o.Delete(KindConsumer, 2)
					if !ok {
						return errors.New("delete found nothing")
					}
					return err
				}, KindConsumer, 2, 0, false},
				{"delete absent", func() error {
					ok, err := o.Delete(KindConsumer, 2)
					if ok {
						return errors.New("deleted twice")
					}
					return err
				}, KindConsumer, 2, 0, false},
				{"max id", func() error { return o.Store(KindGroup, 1<<32-1, 1<<64-1) }, KindGroup, 1<<32 - 1, 1<<64 - 1, true},
			} {
				must(t, tc.do())
				got, ok := o.Get(tc.kind, tc.id)
				if ok != tc.wantOK || got != tc.want {
					t.Fatalf("%s: got %d,%v want %d,%v", tc.name, got, ok, tc.want, tc.wantOK)
				}
			}
			if !stored {
				t.Fatal("advance forward reported no store")
			}
			want := map[offsetKey]uint64{{KindConsumer, 1}: 8, {KindGroup, 1}: 3, {KindGroup, 1<<32 - 1}: 1<<64 - 1}
			must(t, o.Close())
			if err := o.Store(KindConsumer, 1, 1); !errors.Is(err, ErrClosed) {
				t.Fatalf("store after close: %v", err)
			}
			o2, err := OpenOffsets(dir, sync)
			must(t, err)
			if diff := cmp.Diff(want, o2.m, cmp.AllowUnexported(offsetKey{})); diff != "" {
				t.Fatalf("reloaded (-want +got):\n%s", diff)
			}
			must(t, o2.Clear())
			o3, err := OpenOffsets(dir, sync)
			must(t, err)
			if len(o3.m) != 0 {
				t.Fatalf("offsets after clear: %v", o3.m)
			}
		})
	}
}

func TestOffsetFiles(t *testing.T) {
	dir := t.TempDir()
	cons := filepath.Join(dir, consumersDirName)
	must(t, os.MkdirAll(cons, 0o755))
	good := AppendOffsetFile(nil, 42)
	bad := bytes.Clone(good)
	bad[3] ^= 1
	legacy := []byte{7, 0, 0, 0, 0, 0, 0, 0}
	for name, b := range map[string][]byte{
		"1":          good,
		"2":          bad,
		"3":          legacy,
		"4":          good[:12], // torn
		"5":          nil,
		"6.tmp":      good,
		"not-an-id":  good,
		"4294967296": good, // beyond u32
	} {
		must(t, os.WriteFile(filepath.Join(cons, name), b, 0o644))
	}
	o, err := OpenOffsets(dir, false)
	must(t, err)
	want := map[offsetKey]uint64{{KindConsumer, 1}: 42, {KindConsumer, 3}: 7}
	if diff := cmp.Diff(want, o.m, cmp.AllowUnexported(offsetKey{})); diff != "" {
		t.Fatalf("loaded (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(cons, "6.tmp")); !os.IsNotExist(err) {
		t.Fatal("temp file kept")
	}
	// A corrupt file is overwritten by the next store.
	must(t, o.Store(KindConsumer, 2, 9))
	b, err := os.ReadFile(filepath.Join(cons, "2"))
	must(t, err)
	if !bytes.Equal(b, AppendOffsetFile(nil, 9)) {
		t.Fatalf("file %x", b)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		off  uint64
		ok   bool
	}{
		{"good", good, 42, true},
		{"bad checksum", bad, 0, false},
		{"legacy", legacy, 7, true},
		{"empty", nil, 0, false},
		{"long", append(bytes.Clone(good), 0), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off, ok := DecodeOffsetFile(tc.b)
			if off != tc.off || ok != tc.ok {
				t.Fatalf("got %d,%v", off, ok)
			}
		})
	}
}

func FuzzDecodeOffsetFile(f *testing.F) {
	f.Add(AppendOffsetFile(nil, 0))
	f.Add(AppendOffsetFile(nil, 1<<63))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		off, ok := DecodeOffsetFile(b)
		if !ok {
			return
		}
		if len(b) == offsetFileBytes && !bytes.Equal(AppendOffsetFile(nil, off), b) {
			t.Fatalf("round trip of %x", b)
		}
	})
}
