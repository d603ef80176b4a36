package bench

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// BenchmarkBatchEncode measures what client.SendMessages does on the
// client side for each default batch (1000 messages of 1000 bytes):
// copying the payloads into the frame and checksumming every message
// and the batch. It bounds what the tool adds to a producer's figure.
func BenchmarkBatchEncode(b *testing.B) {
	cfg := Config{MessageSize: DefaultMessageSize, MessagesPerBatch: DefaultMessagesPerBatch}
	src := newBatchSource(&cfg, 1)
	buf := make([]byte, 0, wireLen(cfg.MessagesPerBatch, cfg.MessageSize))
	b.SetBytes(int64(cfg.batchPayload()))
	for b.Loop() {
		out, err := wire.AppendBatch(buf[:0], src.next(time.Now()))
		if err != nil {
			b.Fatal(err)
		}
		buf = out
	}
}
