package client_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// TestPollMessagesBuffer: polls through one PollBuffer return the same
// messages as PollMessages, each result valid until the next poll, and
// once the buffer has grown a poll of about 1 MB allocates a small
// fraction of its reply.
func TestPollMessagesBuffer(t *testing.T) {
	s := dataBroker(t, 1)
	c, err := client.Dial(t.Context(), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword), client.WithTLS(s.ClientTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	payload := bytes.Repeat([]byte("x"), 1000)
	const batches, perBatch = 12, 1000
	for b := range batches {
		msgs := make([]wire.Message, perBatch)
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(b*perBatch + i + 1)}, Payload: payload}
		}
		msgs[0].Payload = []byte{byte(b)}
		if _, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	req := func(off uint64) wire.PollMessages {
		return wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: streamID, TopicID: topicID,
			Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(off), Count: perBatch}
	}
	var pb client.PollBuffer
	for b := range uint64(batches) {
		want, err := c.PollMessages(ctx, req(b*perBatch))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.PollMessagesBuffer(ctx, req(b*perBatch), &pb)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != perBatch || got.Count != want.Count || !bytes.Equal(got.Records, want.Records) {
			t.Fatalf("batch %d: %d messages (%d bytes), PollMessages got %d (%d bytes)", b, got.Count, len(got.Records), want.Count, len(want.Records))
		}
		it := got.Messages()
		if m, ok := it.Next(); !ok || m.Offset != b*perBatch || !bytes.Equal(m.Payload, []byte{byte(b)}) {
			t.Fatalf("batch %d: first message %+v", b, m)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var replyBytes int
	for b := range uint64(batches) {
		got, err := c.PollMessagesBuffer(ctx, req(b*perBatch), &pb)
		if err != nil {
			t.Fatal(err)
		}
		replyBytes += len(got.Records)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(replyBytes)/10 {
		t.Fatalf("%d bytes allocated for %d bytes of replies, want under a tenth", alloc, replyBytes)
	}
}
