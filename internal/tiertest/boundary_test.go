//go:build !windows

package tiertest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/wire"
)

// TestTieredReadAtTheBoundary polls, over and over, the oldest offset
// still on local disk while a producer seals 1 MiB segments that are
// dropped locally as soon as they are uploaded (local_retention_size
// "0"): every poll must start at the offset asked for, whether the
// segment holding it is still local or already only in the bucket, and
// return the messages sent there. A poll that starts later has skipped
// messages a consumer asked for.
func TestTieredReadAtTheBoundary(t *testing.T) {
	const (
		perBatch = 100
		size     = 1000
		segment  = 1 << 20
		prefix   = "boundary"
		run      = 10 * time.Second
	)
	store := objstoretest.Start(t)
	srv := startServer(t, serverConfig{store: store, prefix: prefix, localRetention: "0", uploadInterval: "100 ms"})
	c := srv.Dial(t)
	to := createTopic(t, c, wire.Uint64Option(wire.TopicOptSegmentSize, segment))
	dir := srv.PartitionDir(t)

	p := newProducer(c, to, perBatch, size, 0)
	produce(t, p, 20, 0, 30*time.Second)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := runProducer(p, int(run.Seconds()*20_000_000/(perBatch*size)), 20_000_000, 30*time.Second, stop)
		done <- err
	}()

	reader := srv.Dial(t)
	var pb client.PollBuffer
	polls, skips := 0, 0
	var firstSkip string
	deadline := time.Now().Add(run)
	for time.Now().Before(deadline) {
		from, ok := oldestLocal(dir)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := reader.PollMessagesBuffer(ctx, wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: to.stream, TopicID: to.topic,
			Partition: wire.SomePartition(to.partition), Strategy: wire.OffsetStrategy(from), Count: 10,
		}, &pb)
		cancel()
		if err != nil {
			close(stop)
			t.Fatalf("poll at offset %d: %v", from, err)
		}
		polls++
		it := got.Messages()
		m, ok := it.Next()
		if !ok {
			continue // at the end of the log
		}
		if m.Offset != from {
			if skips++; skips == 1 {
				firstSkip = "poll at offset " + strconv.FormatUint(from, 10) + " returned messages from offset " + strconv.FormatUint(m.Offset, 10)
			}
			continue
		}
		if !payloadOK(m.Offset, 0, size, m.Payload) {
			close(stop)
			t.Fatalf("poll at offset %d: the payload is not the one sent", from)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, _ := readState(dir)
	t.Logf("%d polls at the oldest local offset while %d segments were uploaded and dropped; %d skipped messages",
		polls, len(st.Manifest.Segments), skips)
	if skips > 0 {
		t.Errorf("%d of %d polls at the oldest local offset started later than asked (first: %s): "+
			"a segment dropped between the choice of tier and the local read skips its messages", skips, polls, firstSkip)
	}
}

// oldestLocal returns the start offset of the oldest segment log in a
// partition directory.
func oldestLocal(dir string) (uint64, bool) {
	ents, err := os.ReadDir(dir) // sorted by name: the zero-padded start offsets
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		if name := e.Name(); strings.HasSuffix(name, ".log") && len(name) == 24 {
			off, err := strconv.ParseUint(strings.TrimSuffix(name, ".log"), 10, 64)
			return off, err == nil
		}
	}
	return 0, false
}
