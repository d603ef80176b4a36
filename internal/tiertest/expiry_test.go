//go:build !windows

package tiertest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredExpiry produces into a topic with a message_expiry of 8
// seconds, 1 MiB segments and local_retention_size "0", with retention
// running every second: once the sealed segments are uploaded (and gone
// from local disk), expiry removes them from the bucket too (log and
// index objects, the manifest's entries and the local index copies), and
// a poll from offset 0 starts at the first offset left, the active
// segment's. Segments sealed afterwards are uploaded as before.
func TestTieredExpiry(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 1 << 20
		expiry   = 8 * time.Second
		prefix   = "expiry"
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0",
		retentionInterval: "1 s", uploadInterval: "200 ms"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment),
		wire.Uint64Option(wire.TopicOptMessageExpiry, uint64(expiry/time.Microsecond)))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)

	p := newProducer(c, to, perBatch, size, 0)
	// 65 batches of about 100 KiB: six sealed segments and a few batches in
	// the active one.
	produce(t, p, 65, 0, 30*time.Second)
	producedAt := time.Now()
	// The uploads must be seen before the data expires.
	st, catchUp := waitCaughtUp(t, dir, 0, 0, expiry-2*time.Second)
	t.Logf("%d messages in %d segments uploaded %s after the last send", p.Next, len(st.Manifest.Segments), catchUp.Round(time.Millisecond))
	if len(st.Manifest.Segments) < 3 {
		t.Fatalf("only %d segments uploaded: %s", len(st.Manifest.Segments), st)
	}
	checkBucket(t, bucket, prefix, st.Manifest)
	active := st.activeStart()

	// Expiry: the sealed segments go from both tiers; the active one
	// stays.
	deadline := producedAt.Add(expiry + 30*time.Second)
	for {
		now, err := readState(dir)
		if err != nil {
			t.Fatal(err)
		}
		objs := listBucket(t, bucket)
		if len(now.Manifest.Segments) == 0 && len(now.Manifest.Deletes) == 0 && len(objs) == 1 {
			t.Logf("expired segments removed from the bucket %s after the last send (expiry %s)",
				time.Since(producedAt).Round(time.Millisecond), expiry)
			checkBucket(t, bucket, prefix, now.Manifest)
			if now.activeStart() != active || len(now.Local.Segments) != 1 {
				t.Errorf("after expiry the local segments are %+v, want only the active one at %d", now.Local.Segments, active)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expired segments still listed %s after the last send: %d objects in the bucket; %s",
				time.Since(producedAt).Round(time.Millisecond), len(objs), now)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if copies, _ := os.ReadDir(filepath.Join(dir, "remote")); len(copies) != 0 {
		t.Errorf("the local copies of the removed segments' indexes are still there: %d files", len(copies))
	}
	first, ok := firstOffset(t, c, to)
	if !ok || first != active {
		t.Errorf("after expiry a poll from offset 0 starts at %d (any: %v), want %d", first, ok, active)
	}
	if info := partitionInfo(t, c, to); info.MessagesCount != p.Next-active {
		t.Errorf("GET_TOPIC after expiry: %d messages, want %d (offsets %d..%d)", info.MessagesCount, p.Next-active, active, p.Next-1)
	}
	readBack(t, c, to, active, p.Next, size, 30*time.Second)

	// New segments after the expiry are uploaded after the old keys.
	produce(t, p, 30, 0, 30*time.Second)
	st, _ = waitCaughtUp(t, dir, active, 0, expiry-2*time.Second)
	if len(st.Manifest.Segments) == 0 {
		t.Fatalf("nothing uploaded after the expiry: %s", st)
	}
	checkBucket(t, bucket, prefix, st.Manifest)
	readBack(t, c, to, active, p.Next, size, 30*time.Second)
}
