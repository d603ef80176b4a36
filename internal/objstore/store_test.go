package objstore_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

func TestRoundTrip(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "cluster-a")
	ctx := testContext(t)
	key := s.Key("streams/1/topics/2/partitions/3/00000000000000000000.log")
	data := randomBytes(100_000, 1)
	meta := map[string]string{"Start-Offset": "0", "end-offset": "99"}

	info := put(t, s, key, data, meta)
	want := objstore.Info{
		Size: int64(len(data)),
		ETag: mustETag(t, data, s.PartSize()),
		Meta: map[string]string{"start-offset": "0", "end-offset": "99"},
	}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("Put info (-want +got):\n%s", diff)
	}
	head, err := s.Head(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, head); diff != "" {
		t.Errorf("Head (-want +got):\n%s", diff)
	}

	// The posix backend keeps the object as a plain file.
	onDisk, err := os.ReadFile(srv.ObjectPath(key))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, data) {
		t.Error("the object's file does not hold the bytes put")
	}

	ranges := []struct{ off, n int64 }{{0, 1}, {0, int64(len(data))}, {12345, 6789}, {int64(len(data)) - 10, 10}}
	for _, r := range ranges {
		p := make([]byte, r.n)
		if err := s.ReadRange(ctx, key, r.off, p); err != nil {
			t.Errorf("ReadRange(%d, %d): %v", r.off, r.n, err)
			continue
		}
		if !bytes.Equal(p, data[r.off:r.off+r.n]) {
			t.Errorf("ReadRange(%d, %d) returned other bytes", r.off, r.n)
		}
	}

	// Put again with other bytes: an overwrite.
	data2 := randomBytes(5000, 2)
	info2 := put(t, s, key, data2, nil)
	if info2.Size != int64(len(data2)) || info2.Meta != nil {
		t.Errorf("overwrite: info %+v", info2)
	}
	p := make([]byte, len(data2))
	if err := s.ReadRange(ctx, key, 0, p); err != nil || !bytes.Equal(p, data2) {
		t.Errorf("after overwrite: ReadRange err %v, same bytes %v", err, bytes.Equal(p, data2))
	}
	// And the same bytes once more: idempotent.
	if again := put(t, s, key, data2, nil); again.ETag != info2.ETag {
		t.Errorf("re-put ETag %s, first %s", again.ETag, info2.ETag)
	}

	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}
}

func TestEmptyObject(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "")
	info := put(t, s, "empty", nil, nil)
	if info.Size != 0 || info.ETag != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("empty object: %+v", info)
	}
	if err := s.ReadRange(testContext(t), "empty", 0, nil); err != nil {
		t.Errorf("ReadRange of nothing: %v", err)
	}
}

func TestNotFoundAndShortReads(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "p")
	ctx := testContext(t)
	key := s.Key("obj")
	put(t, s, key, randomBytes(100, 3), nil)

	tests := []struct {
		name string
		key  string
		off  int64
		n    int
		want error
	}{
		{"missing key", s.Key("missing"), 0, 10, objstore.ErrNotFound},
		{"past the end", key, 90, 20, objstore.ErrShortObject},
		{"starts at the end", key, 100, 1, objstore.ErrShortObject},
		{"starts after the end", key, 1000, 1, objstore.ErrShortObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ReadRange(ctx, tt.key, tt.off, make([]byte, tt.n))
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadRange(%q, %d, %d) = %v, want %v", tt.key, tt.off, tt.n, err, tt.want)
			}
		})
	}
	if _, err := s.Head(ctx, s.Key("missing")); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head of a missing key: %v", err)
	}
	if _, err := s.GetSmall(ctx, s.Key("missing"), 10); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("GetSmall of a missing key: %v", err)
	}
	if _, err := s.GetSmall(ctx, key, 99); err == nil {
		t.Error("GetSmall of 100 bytes with max 99: no error")
	}
	if got, err := s.GetSmall(ctx, key, 100); err != nil || len(got) != 100 {
		t.Errorf("GetSmall with max 100: %d bytes, %v", len(got), err)
	}
}

func TestListAndDeletePrefix(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "iggo")
	other := newStore(t, srv, "iggo2") // a neighbour sharing the first letters
	ctx := testContext(t)

	var want []objstore.Object
	for _, rel := range []string{"streams/1/b", "streams/1/a", "streams/1/sub/c", "streams/1.x", "streams/10/a"} {
		data := randomBytes(len(rel)*10, 4)
		put(t, s, s.Key(rel), data, nil)
		want = append(want, objstore.Object{Key: s.Key(rel), Size: int64(len(data))})
	}
	put(t, other, other.Key("streams/1/a"), []byte("other"), nil)

	got, err := s.List(ctx, s.Key("streams/1/"))
	if err != nil {
		t.Fatal(err)
	}
	wantUnder := []objstore.Object{want[1], want[0], want[2]} // key order
	if diff := cmp.Diff(wantUnder, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	all, err := s.List(ctx, s.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Errorf("List of the whole prefix: %d objects, want 5: %v", len(all), all)
	}
	if none, err := s.List(ctx, s.Key("nothing/")); err != nil || len(none) != 0 {
		t.Errorf("List of an empty prefix: %v, %v", none, err)
	}

	n, err := s.DeletePrefix(ctx, s.Key("streams/1/"))
	if err != nil || n != 3 {
		t.Errorf("DeletePrefix = %d, %v; want 3", n, err)
	}
	left, err := s.List(ctx, s.Key(""))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]objstore.Object{want[3], want[4]}, left); diff != "" {
		t.Errorf("left after DeletePrefix (-want +got):\n%s", diff)
	}
	if _, err := other.Head(ctx, other.Key("streams/1/a")); err != nil {
		t.Errorf("the neighbouring prefix lost its object: %v", err)
	}
	if n, err := s.DeletePrefix(ctx, s.Key("streams/1/")); err != nil || n != 0 {
		t.Errorf("DeletePrefix again = %d, %v; want 0, nil", n, err)
	}

	// Guards: an empty prefix and one outside the store's prefix.
	if _, err := s.DeletePrefix(ctx, ""); err == nil {
		t.Error("DeletePrefix(\"\") accepted")
	}
	if _, err := s.DeletePrefix(ctx, "iggo2/"); err == nil {
		t.Error("DeletePrefix outside the store prefix accepted")
	}
}

func TestListManyPages(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 1001 objects")
	}
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "many")
	ctx := testContext(t)
	// More objects than one list page holds; written as files so that the
	// test stays fast (the posix backend lists the directory).
	const n = 1001
	dir := srv.ObjectPath(s.Key("d"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(srv.ObjectPath(s.Key(objName(i))), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.List(ctx, s.Key("d/"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("List: %d objects, want %d", len(got), n)
	}
	for i, o := range got {
		if o.Key != s.Key(objName(i)) {
			t.Fatalf("List[%d] = %q, want %q", i, o.Key, s.Key(objName(i)))
		}
	}
	deleted, err := s.DeletePrefix(ctx, s.Key("d/"))
	if err != nil || deleted != n {
		t.Fatalf("DeletePrefix = %d, %v; want %d", deleted, err, n)
	}
}

func objName(i int) string {
	const digits = "0123456789"
	return "d/" + string([]byte{digits[i/1000%10], digits[i/100%10], digits[i/10%10], digits[i%10]})
}

// mustETag returns the ETag of data uploaded with partSize parts.
func mustETag(t testing.TB, data []byte, partSize int64) string {
	t.Helper()
	etag, err := objstore.ComputeETag(bytes.NewReader(data), int64(len(data)), partSize)
	if err != nil {
		t.Fatal(err)
	}
	return etag
}
