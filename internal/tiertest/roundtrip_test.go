//go:build !windows

package tiertest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredTwoGigabytes produces 2 GB (2048 batches of 1000 messages of
// 1000 bytes) into one partition with 32 MiB segments that keeps 200 MiB
// of uploaded data locally, waits until every sealed segment is uploaded
// and the local copies beyond the retention are dropped, and then reads
// every message back from offset 0 (the older ones from the bucket,
// through the server's cache) checking each payload and that offsets are
// contiguous. The bucket must hold exactly one log and one index object
// per segment the manifest lists, and the partition directory at most
// the retention plus one segment of logs once caught up. While the
// producer outruns the uploads, sealed segments not uploaded yet stay
// local (the directory grows past the retention, by design), but the
// uploaded ones kept locally must stay within the retention plus the
// segments of one upload round (upload_concurrency, 2). Polls by
// timestamp find messages in both tiers, and the read cache stays within
// cache_size.
func TestTieredTwoGigabytes(t *testing.T) {
	const (
		batches  = 2048
		perBatch = 1000
		size     = 1000
		segment  = 32 << 20
		keep     = 200 << 20
		prefix   = "twogig"
		// cacheSize is the default tiered_storage.cache_size.
		cacheSize = 512 << 20
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "200 MiB"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)
	bucket := openBucket(t, store)

	meter := meterDisk(dir, 200*time.Millisecond)
	p := newProducer(c, to, perBatch, size, 0)
	ps := produce(t, p, batches, 0, 30*time.Second)
	t.Logf("produced %d messages (%s of payload) in %s: %.0f MB/s, slowest send %s",
		p.Next, mib(ps.Bytes), ps.Elapsed.Round(time.Millisecond), ps.MBps(), ps.MaxSend.Round(time.Millisecond))

	st, catchUp := waitCaughtUp(t, dir, 0, keep, 3*time.Minute)
	meter.Stop()
	t.Logf("uploads caught up %s after the last send: %d segments (%s) in the bucket, %d local segment files",
		catchUp.Round(time.Millisecond), len(st.Manifest.Segments), mib(st.Manifest.remoteBytes()), len(st.Local.Segments))
	t.Logf("partition directory: now %s of logs (%s in all); max seen in %d samples: %s of logs, %s in all, "+
		"%s of uploaded segments still local, %s not uploaded yet",
		mib(st.Local.LogBytes), mib(st.Local.DirBytes), meter.samples, mib(meter.maxLog), mib(meter.maxDir),
		mib(meter.maxUploadLocal), mib(meter.maxPending))
	if st.Local.LogBytes > keep+segment {
		t.Errorf("caught up, the partition directory holds %s of segment logs, more than the local retention %s plus one segment",
			mib(st.Local.LogBytes), mib(keep))
	}
	// Two segments are listed at once by an upload round, and dropped
	// right after it.
	if meter.maxUploadLocal > keep+2*segment {
		t.Errorf("during the run, %s of uploaded segments were kept locally, more than the local retention %s plus two segments",
			mib(meter.maxUploadLocal), mib(keep))
	}
	checkBucket(t, bucket, prefix, st.Manifest)

	info := partitionInfo(t, c, to)
	if info.MessagesCount != p.Next || info.CurrentOffset != p.Next-1 {
		t.Errorf("GET_TOPIC: partition holds %d messages, current offset %d; want %d and %d",
			info.MessagesCount, info.CurrentOffset, p.Next, p.Next-1)
	}

	// The oldest local segment splits the log: what comes before it is
	// read from the bucket (cold: nothing read yet), the rest locally.
	firstLocal := st.Local.Segments[0].Start
	if firstLocal == 0 {
		t.Fatalf("no segment was dropped from local disk: %s", st)
	}
	remote := readBack(t, c, to, 0, firstLocal, size, 3*time.Minute)
	local := readBack(t, c, to, firstLocal, p.Next, size, time.Minute)
	t.Logf("read back %d messages from the bucket (%s) in %s: %.0f MB/s; %d local messages (%s) in %s: %.0f MB/s",
		remote.Messages, mib(remote.Bytes), remote.Elapsed.Round(time.Millisecond), remote.MBps(),
		local.Messages, mib(local.Bytes), local.Elapsed.Round(time.Millisecond), local.MBps())
	if remote.Messages+local.Messages != p.Next {
		t.Errorf("read %d messages, produced %d", remote.Messages+local.Messages, p.Next)
	}
	// Polls by timestamp find messages in either tier: the first batch
	// stamped at or after a batch's timestamp is that batch (or one
	// stamped in the same microsecond just before it).
	for _, off := range []uint64{firstLocal / 2, firstLocal + perBatch} {
		m, ok := pollOne(t, c, to, wire.OffsetStrategy(off))
		if !ok || m.Offset != off {
			t.Fatalf("poll at offset %d returned offset %d (any: %v)", off, m.Offset, ok)
		}
		byTime, ok := pollOne(t, c, to, wire.TimestampStrategy(m.Timestamp))
		if !ok || byTime.Timestamp != m.Timestamp || byTime.Offset > off || off-byTime.Offset > perBatch ||
			!payloadOK(byTime.Offset, 0, size, byTime.Payload) {
			t.Errorf("poll by the timestamp %d of offset %d returned offset %d stamped %d (any: %v)",
				m.Timestamp, off, byTime.Offset, byTime.Timestamp, ok)
		}
	}
	if after, err := measureLocal(dir); err == nil && after.LogBytes > keep+segment {
		t.Errorf("after the read back the partition directory holds %s of segment logs", mib(after.LogBytes))
	}
	// The read cache is bounded by tiered_storage.cache_size (512 MiB by
	// default); no chunk is pinned once the polls are answered.
	cache, err := measureLocal(filepath.Join(srv.data, "tier_cache"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("read cache after the read back: %s", mib(cache.DirBytes))
	if cache.DirBytes > cacheSize {
		t.Errorf("the read cache holds %s, more than tiered_storage.cache_size %s", mib(cache.DirBytes), mib(cacheSize))
	}
}
