package client_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// TestBrokerSendBatch sends one encoded batch twice with SendBatch and
// polls each copy back: the record is the sent batch byte for byte except
// for the fields the broker stamps (partition_id, base_offset,
// base_timestamp) and the batch checksum recomputed over them
// (messages.md, "Batch checksum"). A batch with a wrong checksum is
// refused by the broker (the client does not verify checksums).
func TestBrokerSendBatch(t *testing.T) {
	s := dataBroker(t, 2)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("k"), Value: wire.StringHeader("v")}}.AppendTo(nil)
	now := uint64(time.Now().UnixMicro())
	const n = 25
	msgs := make([]wire.Message, n)
	for i := range msgs {
		msgs[i] = wire.Message{ID: client.NewMessageID(), OriginTimestamp: now + uint64(i), Payload: []byte("batch message " + strconv.Itoa(i))}
		if i%2 == 0 {
			msgs[i].UserHeaders = hdrs
		}
	}
	batch, err := wire.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for round, want := range []uint64{0, n} {
		conf, err := c.SendBatch(ctx, streamID, topicID, wire.PartitioningByID(1), batch)
		if err != nil {
			t.Fatalf("send %d: %v", round, err)
		}
		if len(conf) != 1 || conf[0].PartitionID != 1 || conf[0].BaseOffset != want {
			t.Fatalf("send %d: confirmations %+v", round, conf)
		}
	}
	for _, base := range []uint64{0, n} {
		res, err := c.PollMessages(ctx, wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: streamID, TopicID: topicID,
			Partition: wire.SomePartition(1), Strategy: wire.OffsetStrategy(base), Count: n,
		})
		if err != nil {
			t.Fatal(err)
		}
		v, rest, err := wire.ParseBatch(res.Records)
		if err != nil || len(rest) != 0 || res.Count != n {
			t.Fatalf("poll from %d: %d messages, %d bytes after the first record, %v", base, res.Count, len(rest), err)
		}
		if v.PartitionID() != 1 || v.BaseOffset() != base || v.BaseTimestamp() < now || v.Checksum() != v.ComputeChecksum() {
			t.Fatalf("poll from %d: stamped header %+v", base, v.Header())
		}
		got := append([]byte(nil), v.Bytes()...)
		for _, off := range []int{wire.BatchOffPartitionID, wire.BatchOffBaseOffset, wire.BatchOffBaseTimestamp} {
			binary.LittleEndian.PutUint64(got[off:], 0)
		}
		binary.LittleEndian.PutUint64(got[wire.BatchOffChecksum:], wire.BatchChecksum(got))
		if !bytes.Equal(got, batch) {
			t.Fatalf("poll from %d: the record with the stamps undone differs from the sent batch", base)
		}
	}
	bad := append([]byte(nil), batch...)
	bad[wire.BatchOffChecksum] ^= 1
	if _, err := c.SendBatch(ctx, streamID, topicID, wire.PartitioningByID(1), bad); !errors.Is(err, wire.ErrInvalidBatchChecksum) {
		t.Fatalf("send with a wrong batch checksum: %v", err)
	}
}
