//go:build !windows

package tiertest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredPurgeAndDeletions purges a topic while its segments are being
// uploaded (local_retention_size "0", 2 MiB segments), writes new
// messages at the same offsets and checks that only they come back: the
// bucket ends up holding exactly the new manifest's objects, none of the
// purged data. Then DELETE_SEGMENTS removes the two oldest segments (only
// in the bucket) and the topic is deleted: their objects leave the
// bucket, and in the end it holds only the server's ownership marker.
func TestTieredPurgeAndDeletions(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 2 << 20
		prefix   = "purge"
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)

	// Generation 0: 60 MB, purged while its segments are uploaded.
	old := newProducer(c, to, perBatch, size, 0)
	produce(t, old, 600, 0, 30*time.Second)
	deadline := time.Now().Add(time.Minute)
	for countLogObjects(listBucket(t, bucket)) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 segments uploaded within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	pb, pn := before.pending()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = c.PurgeTopic(ctx, to.stream, to.topic)
	cancel()
	if err != nil {
		t.Fatalf("purge topic: %v", err)
	}
	t.Logf("purged with %d segments in the bucket and %d (%s) waiting for upload", len(before.Manifest.Segments), pn, mib(pb))
	if _, ok := firstOffset(t, c, to); ok {
		t.Error("after the purge a poll from offset 0 returns messages")
	}

	// Generation 1 at the same offsets.
	fresh := newProducer(c, to, perBatch, size, 0)
	fresh.Gen = 1
	produce(t, fresh, 200, 0, 30*time.Second)
	st, catchUp := waitCaughtUp(t, dir, 0, 0, 2*time.Minute)
	t.Logf("after the purge: %d segments of the new data uploaded %s after the last send, manifest epoch %d",
		len(st.Manifest.Segments), catchUp.Round(time.Millisecond), st.Manifest.Epoch)
	if st.Manifest.Epoch == 0 {
		t.Errorf("the manifest is still at epoch 0 after the purge")
	}
	checkBucket(t, bucket, prefix, st.Manifest)
	readBackGen(t, c, to, 0, fresh.Next, size, 1, time.Minute)

	// DELETE_SEGMENTS: the two oldest segments, only in the bucket.
	if len(st.Manifest.Segments) < 3 {
		t.Fatalf("want at least 3 segments in the bucket: %s", st)
	}
	newFirst := st.Manifest.Segments[2].Start
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	err = c.DeleteSegments(ctx, to.stream, to.topic, to.partition, 2)
	cancel()
	if err != nil {
		t.Fatalf("delete segments: %v", err)
	}
	st, _ = waitCaughtUp(t, dir, newFirst, 0, time.Minute)
	checkBucket(t, bucket, prefix, st.Manifest)
	if first, ok := firstOffset(t, c, to); !ok || first != newFirst {
		t.Errorf("after DELETE_SEGMENTS 2 a poll from offset 0 starts at %d (any: %v), want %d", first, ok, newFirst)
	}
	readBackGen(t, c, to, newFirst, fresh.Next, size, 1, time.Minute)

	// Deleting the topic deletes its objects.
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	err = c.DeleteTopic(ctx, to.stream, to.topic)
	cancel()
	if err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		objs := listBucket(t, bucket)
		if len(objs) == 1 && strings.HasSuffix(objs[0].Key, "/iggo-owner") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the topic was deleted the bucket holds %d objects, the first %q", len(objs), objs[0].Key)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the deleted partition's directory is still there: %v", err)
	}
	if n, b := multipartLeftovers(t, store); n > 0 {
		t.Logf("%d unfinished multipart uploads (%s of parts) left in the object store", n, mib(b))
	}
}
