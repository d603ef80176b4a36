package metadata

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// BenchmarkCreateTopicDurable measures committed CREATE_TOPIC operations
// (journal append + fsync + apply) per second.
func BenchmarkCreateTopicDurable(b *testing.B) {
	s := openTest(b, b.TempDir(), DefaultSnapshotEvery, nil)
	defer s.Close()
	streams := 0
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if i%MaxTopicsPerStream == 0 {
			s.ok(b, wire.CmdCreateStream, &wire.CreateStream{Name: "s" + strconv.Itoa(streams)})
			streams++
		}
		s.ok(b, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(uint32(streams - 1)), PartitionsCount: 1, Name: "t" + strconv.Itoa(i)})
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// populateTopics creates n topics with 1 partition each, in streams of
// 1000 topics.
func populateTopics(b *testing.B, s *testStore, n int) {
	for i := range n {
		if i%1000 == 0 {
			s.ok(b, wire.CmdCreateStream, &wire.CreateStream{Name: "s" + strconv.Itoa(i/1000)})
		}
		s.ok(b, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(uint32(i / 1000)), PartitionsCount: 1, Name: "t" + strconv.Itoa(i)})
	}
}

// BenchmarkRestart10kTopics measures Open on a directory holding 10,000
// topics: from the snapshot, and from the journal alone.
func BenchmarkRestart10kTopics(b *testing.B) {
	for _, mode := range []string{"snapshot", "journal"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			every := 1 << 30
			s := openTest(b, dir, every, nil)
			populateTopics(b, s, 10_000)
			if mode == "snapshot" {
				if err := s.Snapshot(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				r := openTest(b, dir, every, nil)
				b.StopTimer()
				r.j.close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkMemoryPerTopic reports the heap held per topic (one partition,
// default options) in the metadata state.
func BenchmarkMemoryPerTopic(b *testing.B) {
	const n = 5000
	for range b.N {
		s := openTest(b, b.TempDir(), 1<<30, nil)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		populateTopics(b, s, n)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/topic")
		s.Close()
	}
}
