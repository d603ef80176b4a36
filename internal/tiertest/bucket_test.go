//go:build !windows

package tiertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/internal/storage"
)

// openBucket returns a client of the test bucket with no key prefix, so
// that listings see every object, whatever its key.
func openBucket(t testing.TB, srv *objstoretest.Server) *objstore.Store {
	t.Helper()
	st, err := objstore.New(srv.Config(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// listBucket lists every object of the bucket.
func listBucket(t testing.TB, st *objstore.Store) []objstore.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs, err := st.List(ctx, "")
	if err != nil {
		t.Fatalf("list the bucket: %v", err)
	}
	return objs
}

// countLogObjects counts the segment log objects in a listing.
func countLogObjects(objs []objstore.Object) int {
	n := 0
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".log") {
			n++
		}
	}
	return n
}

// bucketMatches compares the bucket with a caught-up partition's manifest
// and returns what is wrong (nil when nothing is): the bucket must hold
// exactly the ownership marker under prefix, and, for each segment the
// manifest lists, one log object of the segment's size under its key and
// one index object of its records' index size, and nothing else.
func bucketMatches(objs []objstore.Object, prefix string, m manifest) []string {
	var bad []string
	want := map[string]int64{prefix + "/" + objstore.OwnerMarker: -1}
	for _, s := range m.Segments {
		if !strings.HasPrefix(s.Key, prefix+"/streams/") || !strings.HasSuffix(s.Key, ".log") {
			bad = append(bad, fmt.Sprintf("manifest key %q is not a segment key under %s/streams/", s.Key, prefix))
		}
		idx := strings.TrimSuffix(s.Key, ".log") + ".index"
		if _, dup := want[s.Key]; dup {
			bad = append(bad, fmt.Sprintf("the manifest lists key %q twice", s.Key))
		}
		want[s.Key] = s.Bytes
		want[idx] = int64(s.Records) * storage.IndexEntryBytes
	}
	seen := map[string]bool{}
	for _, o := range objs {
		size, ok := want[o.Key]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("stray object %q (%d bytes)", o.Key, o.Size))
		case seen[o.Key]:
			bad = append(bad, fmt.Sprintf("object %q listed twice", o.Key))
		case size >= 0 && o.Size != size:
			bad = append(bad, fmt.Sprintf("object %q holds %d bytes, the manifest says %d", o.Key, o.Size, size))
		}
		seen[o.Key] = true
	}
	for k := range want {
		if !seen[k] {
			bad = append(bad, fmt.Sprintf("object %q missing", k))
		}
	}
	return bad
}

// checkBucket fails the test when the bucket does not match the manifest
// exactly (bucketMatches) and returns the listing.
func checkBucket(t testing.TB, st *objstore.Store, prefix string, m manifest) []objstore.Object {
	t.Helper()
	objs := listBucket(t, st)
	if bad := bucketMatches(objs, prefix, m); len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		t.Errorf("the bucket does not hold exactly the manifest's %d segments (one log and one index object each):\n%s",
			len(m.Segments), strings.Join(bad, "\n"))
	}
	return objs
}
