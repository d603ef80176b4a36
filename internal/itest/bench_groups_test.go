package itest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// BenchmarkGroupDrain measures a consumer group of 4 members draining a
// 16-partition topic of 1,000,000 messages with 100-byte payloads through
// loopback TCP (each member on its own connection, polls of up to 1000
// messages with auto-commit, Next strategy), then the time from one
// member's LEAVE to the remaining members' SYNCs covering all 16
// partitions again. Each iteration uses a new group, so it reads the whole
// topic from offset 0.
//
// Metrics: msgs/s and payload-MB/s of the drain (payload bytes only; each
// stored message also carries its 64-byte header), rebalance-µs.
func BenchmarkGroupDrain(b *testing.B) {
	const (
		partitions = 16
		members    = 4
		total      = 1_000_000
		size       = 100
		pollCount  = 1000
	)
	e := startGroups(b, partitions)
	e.fill(b, total/partitions, size, 1000)
	var drain, rebalance time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		name := "drain-" + strconv.Itoa(i)
		ExpectOK(b, e.root.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(0), TopicID: sid(0), Name: name}))
		ms := make([]*member, members)
		for j := range ms {
			ms[j] = e.member(b, name+"-"+strconv.Itoa(j))
			ms[j].ref.GroupID = wire.NamedID(name)
			ms[j].mustJoin(b)
		}
		b.StartTimer()
		start := time.Now()
		var got atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, members)
		for _, m := range ms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- drainMember(m, pollCount, &got)
			}()
		}
		wg.Wait()
		drain += time.Since(start)
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		if got.Load() != total {
			b.Fatalf("drained %d messages, want %d", got.Load(), total)
		}
		start = time.Now()
		if err := ms[members-1].leave(); err != nil {
			b.Fatal(err)
		}
		for covered := 0; covered < partitions; {
			covered = 0
			for _, m := range ms[:members-1] {
				a, ok, err := m.sync()
				if err != nil || !ok {
					b.Fatalf("SYNC after LEAVE: %v %v", ok, err)
				}
				covered += len(a.Partitions)
			}
		}
		rebalance += time.Since(start)
	}
	b.StopTimer()
	secs := drain.Seconds()
	b.ReportMetric(float64(total)*float64(b.N)/secs, "msgs/s")
	b.ReportMetric(float64(total)*size*float64(b.N)/secs/1e6, "payload-MB/s")
	b.ReportMetric(float64(rebalance.Microseconds())/float64(b.N), "rebalance-µs")
	b.ReportMetric(0, "ns/op")
}

// drainMember polls the member's partitions round robin until each one
// answers an empty poll (auto-commit moves the group offset forward).
func drainMember(m *member, count uint32, got *atomic.Int64) error {
	a, _, err := m.sync()
	if err != nil {
		return err
	}
	live := append([]uint32(nil), a.Partitions...)
	for len(live) > 0 {
		next := live[:0]
		for _, p := range live {
			polled, err := m.poll(p, count, true)
			if err != nil {
				return err
			}
			if polled.Count > 0 {
				got.Add(int64(polled.Count))
				next = append(next, p)
			}
		}
		live = next
	}
	return nil
}
