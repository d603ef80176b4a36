//go:build !windows

package tiertest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// The messages of the tests are deterministic functions of their offsets,
// so a test checks what it reads back without keeping what it sent: the
// payload of the message at offset o of generation g is o (8 bytes,
// little-endian) followed by a window of a fixed pseudo-random block that
// starts at a position derived from o and g, and its id is idOf(o, g).
// The generation tells data written again at the same offsets (after a
// purge) from the old data; it is 0 unless a test sets it.

// noise is the pseudo-random block payloads are cut from.
var noise = func() []byte {
	b := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(0x7469657274657374, 1))
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}()

// noiseAt returns where the payload of offset off of generation gen
// starts in noise.
func noiseAt(off, gen uint64, size int) int {
	return int((off*2654435761 + gen*40503) % uint64(len(noise)-size))
}

// fillPayload writes the payload of offset off of generation gen into p.
func fillPayload(off, gen uint64, p []byte) {
	binary.LittleEndian.PutUint64(p, off)
	at := noiseAt(off, gen, len(p))
	copy(p[8:], noise[at:at+len(p)-8])
}

// payloadOK reports whether p is the payload of size bytes of offset off
// of generation gen.
func payloadOK(off, gen uint64, size int, p []byte) bool {
	if len(p) != size || binary.LittleEndian.Uint64(p) != off {
		return false
	}
	at := noiseAt(off, gen, size)
	return bytes.Equal(p[8:], noise[at:at+size-8])
}

// idOf is the message id of offset off of generation gen.
func idOf(off, gen uint64) wire.Uint128 {
	return wire.Uint128{Lo: off + 1, Hi: 0x7469657274657374 + gen}
}

// target names the partition the tests write and read.
type target struct {
	stream, topic wire.Identifier
	partition     uint32
}

// createTopic creates a stream and a topic with one partition and the
// given options, and returns the target.
func createTopic(t testing.TB, c *client.Client, opts ...wire.Option) target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateStream(ctx, "tiered"); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := c.CreateTopic(ctx, wire.NamedID("tiered"), "log", 1, opts...); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	return target{stream: wire.NamedID("tiered"), topic: wire.NamedID("log"), partition: 0}
}

// producer sends batches of perBatch messages of size bytes each, one
// batch at a time, to a partition only it writes, so that it knows the
// offset of every message it sends.
type producer struct {
	c        *client.Client
	to       target
	perBatch int
	size     int
	// Next is the offset of the next message sent.
	Next uint64
	// Gen is the generation of the messages sent.
	Gen uint64

	msgs    []wire.Message
	payload []byte
	batch   []byte
}

// newProducer returns a producer whose next message has offset next.
func newProducer(c *client.Client, to target, perBatch, size int, next uint64) *producer {
	p := &producer{c: c, to: to, perBatch: perBatch, size: size, Next: next,
		msgs: make([]wire.Message, perBatch), payload: make([]byte, perBatch*size)}
	for i := range p.msgs {
		p.msgs[i].Payload = p.payload[i*size : (i+1)*size]
	}
	return p
}

// batchBytes is the payload size of one batch.
func (p *producer) batchBytes() int64 { return int64(p.perBatch * p.size) }

// Send sends the next batch and checks that the server stored it at the
// expected offsets. An error leaves Next unchanged: the batch's outcome is
// unknown.
func (p *producer) Send(ctx context.Context) error {
	now := uint64(time.Now().UnixMicro())
	for i := range p.msgs {
		off := p.Next + uint64(i)
		fillPayload(off, p.Gen, p.msgs[i].Payload)
		p.msgs[i].ID = idOf(off, p.Gen)
		p.msgs[i].OriginTimestamp = now
	}
	var err error
	if p.batch, err = wire.AppendBatch(p.batch[:0], p.msgs); err != nil {
		return err
	}
	conf, err := p.c.SendBatch(ctx, p.to.stream, p.to.topic, wire.PartitioningByID(p.to.partition), p.batch)
	if err != nil {
		return err
	}
	if len(conf) != 1 || conf[0].BaseOffset != p.Next {
		return fmt.Errorf("batch at offset %d confirmed as %+v", p.Next, conf)
	}
	p.Next += uint64(p.perBatch)
	return nil
}

// produceStats are the figures of a run of sends.
type produceStats struct {
	Batches int
	Bytes   int64 // payload bytes acknowledged
	Elapsed time.Duration
	MaxSend time.Duration // the slowest acknowledged send
}

// MBps is the acknowledged payload throughput in MB/s.
func (s produceStats) MBps() float64 { return mbps(s.Bytes, s.Elapsed) }

// produce sends n batches (each bounded by sendTimeout), spaced so that
// the payload rate stays at or below rate bytes per second (0: as fast
// as acknowledged), and fails the test on the first error.
func produce(t testing.TB, p *producer, n int, rate int64, sendTimeout time.Duration) produceStats {
	t.Helper()
	st, err := runProducer(p, n, rate, sendTimeout, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// runProducer is produce for a goroutine: it stops at the first error,
// which it returns, after n batches, or when stop is closed.
func runProducer(p *producer, n int, rate int64, sendTimeout time.Duration, stop <-chan struct{}) (produceStats, error) {
	var st produceStats
	start := time.Now()
	for i := range n {
		if rate > 0 {
			due := start.Add(time.Duration(float64(int64(i)*p.batchBytes()) / float64(rate) * float64(time.Second)))
			select {
			case <-stop:
				st.Elapsed = time.Since(start)
				return st, nil
			case <-time.After(time.Until(due)):
			}
		}
		select {
		case <-stop:
			st.Elapsed = time.Since(start)
			return st, nil
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		t0 := time.Now()
		err := p.Send(ctx)
		cancel()
		if err != nil {
			st.Elapsed = time.Since(start)
			return st, fmt.Errorf("send of batch %d (offset %d): %w", i, p.Next, err)
		}
		st.MaxSend = max(st.MaxSend, time.Since(t0))
		st.Batches++
		st.Bytes += p.batchBytes()
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

// readStats are the figures of a read back.
type readStats struct {
	Messages uint64
	Bytes    int64 // payload bytes
	Polls    int
	Elapsed  time.Duration
}

// MBps is the payload throughput in MB/s.
func (s readStats) MBps() float64 { return mbps(s.Bytes, s.Elapsed) }

// pollLimit is the number of messages asked for per poll.
const pollLimit = 8000

// readBack polls the partition from offset from up to (not including) end
// and checks every message: offsets contiguous from the first one
// returned, which must be from; payload and id those of its offset. It
// stops at the first problem, failing the test, and gives up after
// timeout.
func readBack(t testing.TB, c *client.Client, to target, from, end uint64, size int, timeout time.Duration) readStats {
	t.Helper()
	return readBackGen(t, c, to, from, end, size, 0, timeout)
}

// readBackGen is readBack of messages of generation gen.
func readBackGen(t testing.TB, c *client.Client, to target, from, end uint64, size int, gen uint64, timeout time.Duration) readStats {
	t.Helper()
	st, err := readRange(c, to, from, end, size, gen, timeout)
	if err != nil {
		t.Fatalf("read back %d..%d: %v", from, end, err)
	}
	return st
}

// readRange is readBackGen returning its first problem instead of failing
// the test.
func readRange(c *client.Client, to target, from, end uint64, size int, gen uint64, timeout time.Duration) (readStats, error) {
	var st readStats
	var pb client.PollBuffer
	start := time.Now()
	next := from
	empty := 0
	for next < end {
		if time.Since(start) > timeout {
			return st, fmt.Errorf("at offset %d after %s", next, timeout)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		got, err := c.PollMessagesBuffer(ctx, wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: to.stream, TopicID: to.topic,
			Partition: wire.SomePartition(to.partition), Strategy: wire.OffsetStrategy(next),
			Count: uint32(min(pollLimit, end-next)),
		}, &pb)
		cancel()
		if err != nil {
			return st, fmt.Errorf("poll at offset %d: %w", next, err)
		}
		st.Polls++
		if got.Count == 0 {
			// An empty reply before the end is a failure; allow a few
			// in case the reply raced a change of the log.
			if empty++; empty > 5 {
				return st, fmt.Errorf("poll at offset %d: no messages", next)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		empty = 0
		it := got.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != next {
				return st, fmt.Errorf("poll at offset %d: message at offset %d, expected %d", next, m.Offset, next)
			}
			if !payloadOK(m.Offset, gen, size, m.Payload) || m.ID != idOf(m.Offset, gen) {
				return st, fmt.Errorf("message at offset %d: payload (%d bytes) or id %v is not the one sent", m.Offset, len(m.Payload), m.ID)
			}
			st.Messages++
			st.Bytes += int64(len(m.Payload))
			next++
			if next == end {
				break
			}
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

// firstOffset returns the offset of the first message a poll from offset
// 0 returns (ok false when it returns none).
func firstOffset(t testing.TB, c *client.Client, to target) (uint64, bool) {
	t.Helper()
	m, ok := pollOne(t, c, to, wire.OffsetStrategy(0))
	return m.Offset, ok
}

// pollOne returns the first message a poll with strategy returns (ok
// false when it returns none).
func pollOne(t testing.TB, c *client.Client, to target, strategy wire.PollingStrategy) (wire.PolledMessage, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.PollMessages(ctx, wire.PollMessages{
		Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: to.stream, TopicID: to.topic,
		Partition: wire.SomePartition(to.partition), Strategy: strategy, Count: 1,
	})
	if err != nil {
		t.Fatalf("poll (%+v): %v", strategy, err)
	}
	it := got.Messages()
	return it.Next()
}

// partitionInfo returns the partition as GET_TOPIC reports it.
func partitionInfo(t testing.TB, c *client.Client, to target) wire.PartitionInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.GetTopic(ctx, to.stream, to.topic)
	if err != nil {
		t.Fatalf("get topic: %v", err)
	}
	for _, p := range d.Partitions {
		if p.ID == to.partition {
			return p
		}
	}
	t.Fatalf("topic has no partition %d: %+v", to.partition, d.Partitions)
	return wire.PartitionInfo{}
}

// mbps is bytes per elapsed time in MB/s (10^6 bytes).
func mbps(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / 1e6 / d.Seconds()
}
