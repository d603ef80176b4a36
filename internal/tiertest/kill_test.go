//go:build !windows

package tiertest

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredKillDuringUploads produces about 600 MB into a partition with
// 16 MiB segments whose local copies are dropped as soon as they are
// uploaded (local_retention_size "0"), kills the server with SIGKILL once
// a few segments are in the bucket (uploads of the others in flight),
// starts it again on the same data directory and produces the rest. Once
// the uploads caught up: every acknowledged message polls back exactly
// once from offset 0, byte-identical (a batch whose send the kill cut off
// may be there too, at its own offsets, or not at all); the bucket holds
// exactly one log and one index object per segment of the manifest (the
// keys are deterministic, so an upload repeated after the restart
// replaces its object); only the active segment is left on local disk.
// The kill is timed to cut off a multipart upload with a part stored,
// and its parts must not stay in the object store once the uploads caught
// up.
func TestTieredKillDuringUploads(t *testing.T) {
	const (
		batches  = 600
		perBatch = 1000
		size     = 1000
		segment  = 16 << 20
		prefix   = "kill"
		// killAfter is the number of segment logs in the bucket at which
		// the server is killed.
		killAfter = 4
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0"})
	// No reconnection: the kill must end the producer's send with an
	// error, so that what was acknowledged is known.
	c := srv.Dial(t, client.WithReconnect(client.ReconnectPolicy{Disabled: true}))
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)
	meter := meterDisk(dir, 200*time.Millisecond)

	p := newProducer(c, to, perBatch, size, 0)
	type result struct {
		stats produceStats
		err   error
	}
	done := make(chan result, 1)
	go func() {
		st, err := runProducer(p, batches, 0, 30*time.Second, nil)
		done <- result{st, err}
	}()
	// Kill once a few segments are in the bucket and a segment log is
	// being uploaded in parts (the store holds an unfinished multipart
	// upload with a part in it); after a few seconds without one, kill
	// all the same.
	deadline := time.Now().Add(2 * time.Minute)
	var enough time.Time
	for {
		if enough.IsZero() && countLogObjects(listBucket(t, bucket)) >= killAfter {
			enough = time.Now()
		}
		if !enough.IsZero() {
			if _, b := multipartLeftovers(t, store); b > 0 || time.Since(enough) > 5*time.Second {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d segments in the bucket after 2 minutes", killAfter)
		}
		time.Sleep(5 * time.Millisecond)
	}
	before, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	killedAt := time.Now()
	var first result
	select {
	case first = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the producer did not stop within a minute of the kill")
	}
	acked := p.Next
	pb, pn := before.pending()
	t.Logf("killed with %d segments in the manifest, %d sealed segments (%s) not uploaded, %d messages acknowledged (producer: %v)",
		len(before.Manifest.Segments), pn, mib(pb), acked, first.err)
	if pn == 0 {
		t.Logf("no upload was pending when the server was killed; the kill raced the last upload")
	}
	if first.err == nil {
		t.Logf("the producer had finished (%d batches, %.0f MB/s) before the kill", first.stats.Batches, first.stats.MBps())
	}
	cutOff, cutBytes := multipartLeftovers(t, store)
	t.Logf("the kill cut off %d multipart uploads (%s of parts in the object store)", cutOff, mib(cutBytes))

	srv.Start()
	t.Logf("restarted in %s", time.Since(killedAt).Round(time.Millisecond))
	c = srv.Dial(t)
	info := partitionInfo(t, c, to)
	next := info.CurrentOffset + 1
	if info.MessagesCount == 0 {
		next = 0
	}
	// The batch in flight at the kill is either stored whole or not at
	// all; nothing acknowledged is lost.
	if next != acked && !(first.err != nil && next == acked+perBatch) {
		t.Fatalf("after the restart the partition ends at offset %d; %d messages were acknowledged (one batch of %d was in flight: %v)",
			next, acked, perBatch, first.err != nil)
	}
	rest := batches - int(next/perBatch)
	p = newProducer(c, to, perBatch, size, next)
	if rest > 0 {
		ps := produce(t, p, rest, 0, 30*time.Second)
		t.Logf("after the restart, produced %d more batches at %.0f MB/s; %d messages in all", ps.Batches, ps.MBps(), p.Next)
	}

	st, catchUp := waitCaughtUp(t, dir, 0, 0, 3*time.Minute)
	meter.Stop()
	t.Logf("uploads caught up %s after the last send: %d segments (%s) in the bucket; local: %s of logs, max seen %s (%s of uploaded segments)",
		catchUp.Round(time.Millisecond), len(st.Manifest.Segments), mib(st.Manifest.remoteBytes()),
		mib(st.Local.LogBytes), mib(meter.maxLog), mib(meter.maxUploadLocal))
	if len(st.Local.Segments) != 1 || st.Local.LogBytes > segment {
		t.Errorf("local_retention_size 0: the partition keeps %d segment files (%s), want only the active segment",
			len(st.Local.Segments), mib(st.Local.LogBytes))
	}
	objs := checkBucket(t, bucket, prefix, st.Manifest)
	if got, want := len(objs), 2*len(st.Manifest.Segments)+1; got != want {
		t.Errorf("the bucket holds %d objects, want %d (two per segment and the ownership marker)", got, want)
	}
	// An upload the kill cut off is done again under the same key after
	// the restart; the parts of the one cut off must not stay behind in
	// the store (invisible to listings, but kept and billed by S3).
	if n, b := multipartLeftovers(t, store); n > 0 {
		t.Errorf("caught up after the restart, the object store still holds %d unfinished multipart uploads (%s of parts) "+
			"that the kill cut off; nothing aborts them", n, mib(b))
	}
	rs := readBack(t, c, to, 0, p.Next, size, 3*time.Minute)
	t.Logf("read back %d messages (%s) in %s: %.0f MB/s", rs.Messages, mib(rs.Bytes), rs.Elapsed.Round(time.Millisecond), rs.MBps())
	if info := partitionInfo(t, c, to); info.MessagesCount != p.Next {
		t.Errorf("GET_TOPIC: the partition holds %d messages, want %d", info.MessagesCount, p.Next)
	}
}

// multipartLeftovers returns the multipart uploads versitygw holds that
// were started and neither completed nor aborted (its posix backend keeps
// each as a directory .sgwtmp/multipart/{object hash}/{upload id} of the
// bucket directory), with the size of their parts.
func multipartLeftovers(t testing.TB, store *objstoretest.Server) (uploads int, bytes int64) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(store.Dir, store.Bucket, ".sgwtmp", "multipart", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		u, err := measureLocal(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Logf("read %s: %v", d, err)
		}
		bytes += u.DirBytes
	}
	return len(dirs), bytes
}
