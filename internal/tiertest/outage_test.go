//go:build !windows

package tiertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredStoreOutage stops the object store for a minute while a
// producer sends 100 KB batches at 2 MB/s into a partition with 4 MiB
// segments and local_retention_size "0": every send keeps succeeding
// (sealed segments stay local, the active segment is untouched), a poll
// of an offset only in the bucket fails with an error rather than
// returning other bytes while a poll of local data works, and once the
// store is back the uploads catch up (nothing left pending, local copies
// dropped) and every message polls back byte-identical.
func TestTieredStoreOutage(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 4 << 20
		rate     = 2_000_000 // payload bytes per second
		prefix   = "outage"
		warmUp   = 5 * time.Second
		outage   = 60 * time.Second
		after    = 5 * time.Second
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)

	p := newProducer(c, to, perBatch, size, 0)
	stop := make(chan struct{})
	type result struct {
		stats produceStats
		err   error
	}
	done := make(chan result, 1)
	// Bounded: the batches of the whole run at the rate, with room.
	maxBatches := int(2 * (warmUp + outage + after).Seconds() * rate / (perBatch * size))
	go func() {
		st, err := runProducer(p, maxBatches, rate, 30*time.Second, stop)
		done <- result{st, err}
	}()
	stopProducer := func() result {
		close(stop)
		select {
		case r := <-done:
			return r
		case <-time.After(time.Minute):
			t.Fatal("the producer did not stop within a minute")
			return result{}
		}
	}
	defer func() {
		select {
		case <-stop:
		default:
			stopProducer()
		}
	}()

	time.Sleep(warmUp)
	before, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Manifest.Segments) == 0 || before.Local.Segments[0].Start == 0 {
		t.Fatalf("nothing uploaded and dropped locally in the first %s: %s", warmUp, before)
	}
	store.Stop(t)
	stoppedAt := time.Now()
	t.Logf("object store stopped with %d segments in the bucket", len(before.Manifest.Segments))

	// Halfway through the outage: the bucket's data cannot be read and
	// the poll says so; local data is served.
	// The poll goes on a connection of its own: one connection answers
	// in order, and the producer's sends must not wait behind it.
	reader := srv.Dial(t)
	time.Sleep(outage / 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	pollStart := time.Now()
	got, err := reader.PollMessages(ctx, wire.PollMessages{
		Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: to.stream, TopicID: to.topic,
		Partition: wire.SomePartition(to.partition), Strategy: wire.OffsetStrategy(0), Count: 10,
	})
	cancel()
	pollTook := time.Since(pollStart)
	if err == nil {
		// Only acceptable if what came back is the data sent.
		it := got.Messages()
		n := 0
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if !payloadOK(m.Offset, 0, size, m.Payload) {
				t.Fatalf("object store down: the poll at offset 0 returned message %d with a payload that was not sent", m.Offset)
			}
			n++
		}
		t.Logf("object store down: the poll at offset 0 returned %d messages (from the read cache) in %s", n, pollTook.Round(time.Millisecond))
	} else {
		t.Logf("object store down: the poll at offset 0 fails after %s: %v", pollTook.Round(time.Millisecond), err)
		if !errors.Is(err, wire.ErrCannotReadMessage) {
			t.Errorf("object store down: the poll at offset 0 failed with %v, want the server's CannotReadMessage (4011)", err)
		}
	}
	mid, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := partitionInfo(t, c, to).CurrentOffset
	readBack(t, c, to, last, last+1, size, 30*time.Second)
	if len(mid.Manifest.Segments) != len(before.Manifest.Segments) {
		t.Errorf("the manifest went from %d to %d segments while the object store was down",
			len(before.Manifest.Segments), len(mid.Manifest.Segments))
	}

	time.Sleep(time.Until(stoppedAt.Add(outage)))
	down, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	pb, pn := down.pending()
	store.Restart(t)
	restartedAt := time.Now()
	t.Logf("object store restarted after %s; %d sealed segments (%s) waiting for upload, %s of logs local",
		time.Since(stoppedAt).Round(time.Millisecond), pn, mib(pb), mib(down.Local.LogBytes))
	if pn == 0 {
		t.Errorf("no sealed segment waited for upload after %s of outage at %d B/s", outage, rate)
	}

	time.Sleep(after)
	r := stopProducer()
	if r.err != nil {
		t.Fatalf("a send failed during the run: %v", r.err)
	}
	t.Logf("produced %d batches (%s) over %s, all acknowledged; slowest send %s",
		r.stats.Batches, mib(r.stats.Bytes), r.stats.Elapsed.Round(time.Millisecond), r.stats.MaxSend.Round(time.Millisecond))
	if r.stats.MaxSend > 5*time.Second {
		t.Errorf("a send took %s while the object store was down", r.stats.MaxSend)
	}

	st, _ := waitCaughtUp(t, dir, 0, 0, 3*time.Minute)
	t.Logf("uploads caught up %s after the object store came back: %d segments (%s) in the bucket, %s of logs local",
		time.Since(restartedAt).Round(time.Millisecond), len(st.Manifest.Segments), mib(st.Manifest.remoteBytes()), mib(st.Local.LogBytes))
	checkBucket(t, bucket, prefix, st.Manifest)
	if n, b := multipartLeftovers(t, store); n > 0 {
		t.Logf("%d multipart uploads cut off by the outage (%s of parts) are left in the object store", n, mib(b))
	}
	rs := readBack(t, c, to, 0, p.Next, size, 2*time.Minute)
	t.Logf("read back %d messages (%s) in %s: %.0f MB/s", rs.Messages, mib(rs.Bytes), rs.Elapsed.Round(time.Millisecond), rs.MBps())
}
