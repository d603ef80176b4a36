//go:build !windows

package tiertest

import (
	"context"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredLocalRetentionOption drives the local retention with the
// topic option local_retention_size on a server whose default is "0": a
// topic created with keep-all (u64::MAX) keeps every uploaded segment
// locally; updated to 3 MiB, it drops the oldest down to 3 MiB of sealed
// segments; updated to 0 (the server's default), only the active segment
// stays. After a graceful restart the option and the manifest are still
// there and every message polls back.
func TestTieredLocalRetentionOption(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 1 << 20
		keep     = 3 << 20
		prefix   = "options"
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0", uploadInterval: "200 ms",
		retentionInterval: "1 s"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment),
		wire.Uint64Option(wire.TopicOptLocalRetentionSize, wire.LocalRetentionKeepAll))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)

	p := newProducer(c, to, perBatch, size, 0)
	produce(t, p, 100, 0, 30*time.Second)
	st, _ := waitCaughtUp(t, dir, 0, 1<<40, time.Minute)
	if n := len(st.sealed()); n != len(st.Manifest.Segments) || n < 5 {
		t.Fatalf("keep-all: %d sealed segments local, %d in the bucket; want all of them in both: %s", n, len(st.Manifest.Segments), st)
	}

	// waitKeep waits until the local sealed segments fit in keep bytes.
	// An update not applied within 15 s is an error; the server is then
	// restarted (it reads the topic's options when it opens the
	// partition), after which the retention must hold.
	waitKeep := func(keep int64) tierState {
		t.Helper()
		if st, ok := tryCaughtUp(dir, 0, keep, 15*time.Second); ok {
			return st
		}
		t.Errorf("local_retention_size %d set by UPDATE_TOPIC is not applied within 15 s (retention runs every second)", keep)
		srv.Stop()
		srv.Start()
		c = srv.Dial(t)
		st, _ := waitCaughtUp(t, dir, 0, keep, 30*time.Second)
		t.Logf("local_retention_size %d applied after a restart", keep)
		return st
	}
	updateRetention := func(size uint64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.UpdateTopic(ctx, to.stream, to.topic, "log", wire.Uint64Option(wire.TopicOptLocalRetentionSize, size)); err != nil {
			t.Fatalf("update local_retention_size to %d: %v", size, err)
		}
	}
	updateRetention(keep)
	st = waitKeep(keep)
	var sealed int64
	for _, s := range st.sealed() {
		sealed += s.Bytes
	}
	t.Logf("local_retention_size 3 MiB: %d sealed segments (%s) local", len(st.sealed()), mib(sealed))
	if sealed <= keep-2*segment {
		t.Errorf("local_retention_size 3 MiB: only %s of sealed segments kept locally", mib(sealed))
	}

	updateRetention(0)
	st = waitKeep(0)
	checkBucket(t, bucket, prefix, st.Manifest)

	srv.Stop()
	srv.Start()
	c = srv.Dial(t)
	after, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Manifest.Segments) != len(st.Manifest.Segments) || len(after.Local.Segments) != 1 {
		t.Errorf("after a graceful restart: %s; before: %s", after, st)
	}
	readBack(t, c, to, 0, p.Next, size, time.Minute)
}
