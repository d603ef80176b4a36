package objstore_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// TestAbortIncomplete: a multipart upload left unfinished (a part
// stored, never completed) is aborted when it started before the bound,
// and kept when it started after it.
func TestAbortIncomplete(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "inc")
	ctx := testContext(t)
	raw, err := minio.New(srv.Endpoint[len("http://"):], &minio.Options{
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), Region: srv.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	core := minio.Core{Client: raw}
	start := func(key string) {
		id, err := core.NewMultipartUpload(ctx, srv.Bucket, key, minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		part := randomBytes(5<<20, 1)
		if _, err := core.PutObjectPart(ctx, srv.Bucket, key, id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start("inc/a/left.log")
	start("other/b/left.log")
	if n, err := s.AbortIncomplete(ctx, s.Key("a/"), time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("an upload started after the bound: aborted %d, %v", n, err)
	}
	if n, err := s.AbortIncomplete(ctx, s.Key("a/"), time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("aborted %d, %v; want the one under the prefix", n, err)
	}
	left := 0
	for u := range raw.ListIncompleteUploads(ctx, srv.Bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		if u.Key != "other/b/left.log" {
			t.Fatalf("upload of %s left", u.Key)
		}
		left++
	}
	if left != 1 {
		t.Fatalf("%d uploads left, want the one outside the prefix", left)
	}
}
