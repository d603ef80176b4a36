package objstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

func TestMultipartPut(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "mp", func(c *objstore.Config) {
		c.PartSize = objstore.MinPartSize // the smallest part size S3 accepts
		c.Concurrency = 2
	})
	ctx := testContext(t)
	key := s.Key("segment.log")
	const size = 12<<20 + 12345 // three parts, the last one short
	data := randomBytes(size, 5)

	info := put(t, s, key, data, map[string]string{"parts": "3"})
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("ETag %q is not a three-part ETag", info.ETag)
	}
	if want := mustETag(t, data, s.PartSize()); info.ETag != want {
		t.Errorf("ETag %q, computed locally %q", info.ETag, want)
	}
	if info.Size != size || info.Meta["parts"] != "3" {
		t.Errorf("info %+v", info)
	}
	onDisk, err := os.ReadFile(srv.ObjectPath(key))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, data) {
		t.Fatal("the object's file does not hold the bytes put")
	}
	// Ranges across the part boundaries.
	for _, r := range []struct{ off, n int64 }{{objstore.MinPartSize - 100, 200}, {2*objstore.MinPartSize - 1, 2}, {size - 7, 7}} {
		p := make([]byte, r.n)
		if err := s.ReadRange(ctx, key, r.off, p); err != nil {
			t.Errorf("ReadRange(%d, %d): %v", r.off, r.n, err)
		} else if !bytes.Equal(p, data[r.off:r.off+r.n]) {
			t.Errorf("ReadRange(%d, %d) returned other bytes", r.off, r.n)
		}
	}
	// Overwriting with a single-part object works as well.
	small := randomBytes(1000, 6)
	if info := put(t, s, key, small, nil); info.Size != 1000 || strings.Contains(info.ETag, "-") {
		t.Errorf("single-part overwrite: %+v", info)
	}
	assertNoUploadsLeft(t, srv)
}

func TestMultipartExactMultiple(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "", func(c *objstore.Config) { c.PartSize = objstore.MinPartSize })
	data := randomBytes(2*objstore.MinPartSize, 7)
	info := put(t, s, "two-parts", data, nil)
	if want := mustETag(t, data, objstore.MinPartSize); info.ETag != want || !strings.HasSuffix(want, "-2") {
		t.Errorf("ETag %q, computed locally %q", info.ETag, want)
	}
	// Exactly one part's worth is a single PUT.
	one := put(t, s, "one-part", data[:objstore.MinPartSize], nil)
	if strings.Contains(one.ETag, "-") {
		t.Errorf("an object of exactly PartSize bytes got the multipart ETag %q", one.ETag)
	}
}

// assertNoUploadsLeft checks that no multipart upload left parts behind in
// the posix backend's staging directory.
func assertNoUploadsLeft(t *testing.T, srv *objstoretest.Server) {
	t.Helper()
	staging := filepath.Join(srv.Dir, srv.Bucket, ".sgwtmp", "multipart")
	entries, err := os.ReadDir(staging)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		sub, _ := os.ReadDir(filepath.Join(staging, e.Name()))
		if len(sub) > 0 {
			t.Errorf("multipart staging %s still holds %d uploads", e.Name(), len(sub))
		}
	}
}
