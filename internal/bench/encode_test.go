package bench

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestBatchSource: the batch built once passes the server's admission
// checks after every re-stamp, carries the send time as every message's
// origin timestamp, and keeps its frames byte for byte.
func TestBatchSource(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size, per int
	}{
		{"one message", 10, 1},
		{"empty payloads", 0, 3},
		{"default", DefaultMessageSize, DefaultMessagesPerBatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{MessageSize: tc.size, MessagesPerBatch: tc.per}
			src, err := newBatchSource(&cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			frames := string(src.batch[wire.BatchHeaderSize:])
			start := time.Now()
			for i := range 3 {
				now := start.Add(time.Duration(i) * time.Hour)
				v, err := wire.ValidateBatch(src.next(now))
				if err != nil {
					t.Fatalf("send %d: the re-stamped batch is refused: %v", i, err)
				}
				if v.MessageCount() != uint32(tc.per) || v.OriginTimestamp() != uint64(now.UnixMicro()) || string(v.Frames()) != frames {
					t.Fatalf("send %d: header %+v", i, v.Header())
				}
				it := v.Messages()
				for m, ok := it.Next(); ok; m, ok = it.Next() {
					if m.TimestampDelta() != 0 || len(m.Payload()) != tc.size || m.ID() != (wire.Uint128{Lo: uint64(m.Index()) + 1, Hi: 7}) {
						t.Fatalf("send %d: message %d: delta %d, %d bytes, id %v", i, m.Index(), m.TimestampDelta(), len(m.Payload()), m.ID())
					}
				}
			}
		})
	}
}

// BenchmarkBatchRestamp measures what a producer does on the client side
// before each default batch (1000 messages of 1000 bytes) besides the
// send's copy into the frame: re-stamping the origin timestamp and
// recomputing the batch checksum.
func BenchmarkBatchRestamp(b *testing.B) {
	cfg := Config{MessageSize: DefaultMessageSize, MessagesPerBatch: DefaultMessagesPerBatch}
	src, err := newBatchSource(&cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		src.next(time.Now())
	}
}

// BenchmarkBatchEncode measures, for comparison, encoding the same batch
// from scratch (what client.SendMessages does on every call): copying the
// payloads and checksumming every message and the batch.
func BenchmarkBatchEncode(b *testing.B) {
	cfg := Config{MessageSize: DefaultMessageSize, MessagesPerBatch: DefaultMessagesPerBatch}
	payload := make([]byte, cfg.MessageSize)
	msgs := make([]wire.Message, cfg.MessagesPerBatch)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(i) + 1}, Payload: payload}
	}
	buf := make([]byte, 0, wire.BatchHeaderSize+cfg.MessagesPerBatch*(wire.MessageHeaderSize+cfg.MessageSize))
	b.SetBytes(int64(cfg.batchPayload()))
	b.ReportAllocs()
	for b.Loop() {
		ts := uint64(time.Now().UnixMicro())
		for i := range msgs {
			msgs[i].OriginTimestamp = ts
		}
		out, err := wire.AppendBatch(buf[:0], msgs)
		if err != nil {
			b.Fatal(err)
		}
		buf = out
	}
}
