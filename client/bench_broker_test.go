package client_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// BenchmarkBrokerProducer measures one Producer sending 100-byte messages
// to the real broker (storage included) on loopback, with the default
// batching (1000 messages or 1 MiB per batch, 5 ms linger) with one or
// four batches in flight per partition and a 16 or 2 MiB buffer budget. It reports messages
// per second, the peak of the budget in use (sampled every 1000 sends)
// and the peak Go heap of the process (client and broker share it).
func BenchmarkBrokerProducer(b *testing.B) {
	for _, tc := range []struct{ parts, inflight, budgetMiB uint32 }{{1, 1, 16}, {1, 4, 16}, {4, 1, 16}, {1, 1, 2}} {
		parts := tc.parts
		name := "partitions=" + itoa(int(parts)) + "/inflight=" + itoa(int(tc.inflight)) + "/budget=" + itoa(int(tc.budgetMiB)) + "MiB"
		b.Run(name, func(b *testing.B) {
			s := dataBroker(b, parts)
			c, err := client.Dial(b.Context(), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			budget := int(tc.budgetMiB) << 20
			p, err := c.NewProducer(b.Context(), streamID, topicID, client.WithPartitionCount(parts), client.WithBufferBytes(budget),
				client.WithMaxInFlight(int(tc.inflight)))
			if err != nil {
				b.Fatal(err)
			}
			msg := client.Message{Payload: make([]byte, 100)}
			var peakBuf int
			var peakHeap uint64
			var ms runtime.MemStats
			start := time.Now()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if err := p.Send(b.Context(), msg); err != nil {
					b.Fatal(err)
				}
				if i++; i%1000 == 0 {
					peakBuf = max(peakBuf, p.BufferedBytes())
				}
				if i%200000 == 0 {
					runtime.ReadMemStats(&ms)
					peakHeap = max(peakHeap, ms.HeapInuse)
				}
			}
			if err := p.Flush(b.Context()); err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			stored := uint64(0)
			for part := range parts {
				res, err := c.PollMessages(b.Context(), wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: streamID, TopicID: topicID,
					Partition: wire.SomePartition(part), Strategy: wire.LastStrategy(), Count: 1})
				if err != nil {
					b.Fatal(err)
				}
				if res.Count > 0 {
					stored += res.CurrentOffset + 1
				}
			}
			if stored != uint64(b.N) {
				b.Fatalf("broker stored %d messages, sent %d", stored, b.N)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
			b.ReportMetric(float64(peakBuf)/(1<<20), "peak-buffer-MiB")
			b.ReportMetric(float64(budget)/(1<<20), "budget-MiB")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
			p.Close(b.Context())
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
