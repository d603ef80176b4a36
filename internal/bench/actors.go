package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// Consumers poll again after an empty poll with a backoff growing from
// minIdle to maxIdle (the protocol has no long poll); a consumer that
// sees nothing for stallTimeout while data is still owed fails the run.
const (
	minIdle      = 20 * time.Microsecond
	maxIdle      = time.Millisecond
	stallTimeout = 60 * time.Second
	// resyncIdle is how often a group member without partitions asks for
	// its assignment again.
	resyncIdle = 100 * time.Millisecond
)

// streamInfo is one benchmark stream with its single topic.
type streamInfo struct {
	name          string
	stream, topic wire.Identifier
	partitions    int
	group         wire.Identifier // the stream's consumer group, balanced scenarios
	groupName     string
}

// unit is the accounting between the producers writing some partitions
// and the consumers reading them: one per pinned pair, per consumer
// group, per producing consumer.
type unit struct {
	sent     atomic.Uint64 // messages confirmed by the server
	received atomic.Uint64
	feeders  atomic.Int64 // producers still running
	final    atomic.Bool  // sent will not change any more
}

// owed reports whether consumers must still read: more was (or may yet
// be) sent than received.
func (u *unit) owed() bool {
	if !u.final.Load() {
		return true
	}
	return u.received.Load() < u.sent.Load()
}

// producerDone marks one feeding producer finished.
func (u *unit) producerDone() {
	if u.feeders.Add(-1) == 0 {
		u.final.Store(true)
	}
}

// clock is the run's shared timeline.
type clock struct {
	warmupEnd time.Time
	end       time.Time // zero in count mode
}

func (k *clock) measuring(t time.Time) bool { return !t.Before(k.warmupEnd) }

// actor is one producer, consumer or producing consumer on its own
// connection.
type actor struct {
	kind      ActorKind
	id        int
	st        *streamInfo
	partition int // -1: the server chooses
	c         *client.Client
	web       *httpData         // --transport http: produce and poll over the HTTP API (http.go)
	pollBuf   client.PollBuffer // reply memory of the actor's polls
	u         *unit
	rate      float64 // payload bytes per second, 0 unlimited
	target    uint64  // measured batches (producers), messages (fill consumers); 0 in duration mode
	fill      bool    // consumer of a pre-filled stream
	trackAge  bool

	// Live counters, read by the sampler and the progress display.
	msgs, bytes, total atomic.Uint64

	// Owned by the actor's goroutine; read after it returned.
	batches, wireBytes uint64
	first, last        time.Time
	lat, age           Histogram
}

// measured accounts one measured batch.
func (a *actor) measured(t0, t1 time.Time, msgs, payload, wireLen uint64) {
	if a.batches == 0 {
		a.first = t0
	}
	a.last = t1
	a.batches++
	a.wireBytes += wireLen
	a.lat.Record(t1.Sub(t0))
	a.msgs.Add(msgs)
	a.bytes.Add(payload)
}

// pacer spaces sends so the payload rate stays at or under rate.
type pacer struct {
	rate  float64
	start time.Time
	sent  float64
}

// wait sleeps until n more bytes fit the rate.
func (p *pacer) wait(ctx context.Context, n uint64) error {
	if p.rate <= 0 {
		return nil
	}
	now := time.Now()
	if p.start.IsZero() {
		p.start = now
	}
	due := p.start.Add(time.Duration(p.sent / p.rate * float64(time.Second)))
	p.sent += float64(n)
	if d := due.Sub(now); d > 0 {
		return sleepCtx(ctx, d)
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// idler is the backoff between empty polls, with the stall watchdog.
type idler struct {
	wait     time.Duration
	progress time.Time
}

func (i *idler) busy() { i.wait, i.progress = 0, time.Now() }

func (i *idler) idle(ctx context.Context, what string) error {
	if i.progress.IsZero() {
		i.progress = time.Now()
	}
	if time.Since(i.progress) > stallTimeout {
		return fmt.Errorf("%s: no message for %v while more are owed", what, stallTimeout)
	}
	i.wait = min(max(i.wait*2, minIdle), maxIdle)
	return sleepCtx(ctx, i.wait)
}

// batchSource is a producer's batch, encoded once with wire.BatchBuilder
// and sent as is with client.SendBatch, so a send costs the client one
// copy of the batch into the request frame and no per-message work, and a
// figure measures the server rather than the client's encoding.
//
// Every message has the same payload and an id fixed by its position
// (actor id in the high half, position + 1 in the low): the broker does
// not deduplicate by message id, so ids repeat from one batch to the next.
// All messages carry one origin timestamp, so every frame's
// timestamp_delta is 0 and the time lives only in the batch header's
// origin_timestamp, which the frame checksums do not cover: next re-stamps
// it with the send time and recomputes the batch checksum
// (wire.BatchChecksum hashes 44 + 8·n bytes; frames are untouched), which
// keeps the message age consumers measure (receive time − origin
// timestamp) meaningful.
type batchSource struct {
	batch []byte
}

func newBatchSource(cfg *Config, actorID int) (*batchSource, error) {
	payload := make([]byte, cfg.MessageSize)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	var bb wire.BatchBuilder
	bb.Reset(make([]byte, 0, wire.BatchHeaderSize+cfg.MessagesPerBatch*(wire.MessageHeaderSize+cfg.MessageSize)))
	ts := uint64(time.Now().UnixMicro())
	for i := range cfg.MessagesPerBatch {
		if err := bb.Add(wire.Uint128{Lo: uint64(i) + 1, Hi: uint64(actorID)}, ts, payload, nil); err != nil {
			return nil, fmt.Errorf("encode the batch: %w", err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		return nil, fmt.Errorf("encode the batch: %w", err)
	}
	return &batchSource{batch: batch}, nil
}

// next re-stamps the batch's origin timestamp with now (and its checksum)
// and returns it. The caller may send it until the next call.
func (b *batchSource) next(now time.Time) []byte {
	binary.LittleEndian.PutUint64(b.batch[wire.BatchOffOriginTimestamp:], uint64(now.UnixMicro()))
	binary.LittleEndian.PutUint64(b.batch[wire.BatchOffChecksum:], wire.BatchChecksum(b.batch))
	return b.batch
}

func (a *actor) partitioning() wire.Partitioning {
	if a.partition < 0 {
		return wire.BalancedPartitioning()
	}
	return wire.PartitioningByID(uint32(a.partition))
}

// runProducer sends batches one at a time, as iggy-bench does, until the
// target or the end of the run.
func (a *actor) runProducer(ctx context.Context, cfg *Config, k *clock) error {
	defer a.u.producerDone()
	src, err := newBatchSource(cfg, a.id)
	if err != nil {
		return fmt.Errorf("producer %d: %w", a.id, err)
	}
	p := pacer{rate: a.rate}
	n := uint64(cfg.MessagesPerBatch)
	payload := cfg.batchPayload()
	wl := uint64(len(src.batch))
	for {
		now := time.Now()
		if k.measuring(now) && (a.target > 0 && a.batches >= a.target || !k.end.IsZero() && !now.Before(k.end)) {
			return nil
		}
		if err := p.wait(ctx, payload); err != nil {
			return err
		}
		t0 := time.Now()
		if err := a.sendBatch(ctx, a.st.stream, a.st.topic, a.partitioning(), src.next(t0)); err != nil {
			return fmt.Errorf("producer %d: send: %w", a.id, err)
		}
		t1 := time.Now()
		a.u.sent.Add(n)
		a.total.Add(n)
		if k.measuring(t0) {
			a.measured(t0, t1, n, payload, wl)
		}
	}
}

// polled accounts the messages of one poll reply: count, payload bytes,
// the last offset, and (when tracked) each message's age at t1.
func (a *actor) polled(res *wire.PolledMessages, t1 time.Time, measured bool) (n, payload, last uint64) {
	now := uint64(t1.UnixMicro())
	it := res.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		n++
		payload += uint64(len(m.Payload))
		last = m.Offset
		if measured && a.trackAge {
			a.age.Record(time.Duration(int64(now-m.OriginTimestamp)) * time.Microsecond)
		}
	}
	return n, payload, last
}

// runConsumer reads partition 0 of its stream by offset. A consumer of a
// pre-filled stream first re-reads the fill for the warmup, then reads it
// once, measured (in duration mode it wraps around until the end); next
// to a producer it reads until it has everything the producer sent.
func (a *actor) runConsumer(ctx context.Context, cfg *Config, k *clock) error {
	consumer := wire.SingleConsumer(wire.NumericID(uint32(a.id)))
	var offset uint64
	var idle idler
	p := pacer{rate: a.rate}
	what := fmt.Sprintf("consumer %d", a.id)
	poll := func(off uint64) (*wire.PolledMessages, error) {
		res, err := a.pollBuffer(ctx, wire.PollMessages{
			Consumer: consumer, StreamID: a.st.stream, TopicID: a.st.topic,
			Partition: wire.SomePartition(uint32(a.partition)), Strategy: wire.OffsetStrategy(off),
			Count: uint32(cfg.MessagesPerBatch),
		}, &a.pollBuf)
		if err != nil {
			return nil, fmt.Errorf("%s: poll: %w", what, err)
		}
		return res, nil
	}
	fillTotal := a.u.sent.Load()
	if a.fill {
		for time.Now().Before(k.warmupEnd) {
			res, err := poll(offset)
			if err != nil {
				return err
			}
			_, _, last := a.polled(res, time.Now(), false)
			offset = last + 1
			if res.Count == 0 || offset >= fillTotal {
				offset = 0
			}
		}
		offset = 0
	}
	for {
		now := time.Now()
		switch {
		case a.fill && k.end.IsZero() && a.u.received.Load() >= fillTotal:
			return nil
		case !k.end.IsZero() && a.fill && !now.Before(k.end):
			return nil
		case !a.fill && !a.u.owed():
			return nil
		}
		if err := p.wait(ctx, cfg.batchPayload()); err != nil {
			return err
		}
		t0 := time.Now()
		res, err := poll(offset)
		if err != nil {
			return err
		}
		t1 := time.Now()
		if res.Count == 0 {
			if a.fill && offset >= fillTotal {
				offset = 0 // duration mode: read the fill again
				continue
			}
			if err := idle.idle(ctx, what); err != nil {
				return err
			}
			continue
		}
		idle.busy()
		m := k.measuring(t0)
		n, payload, last := a.polled(res, t1, m)
		offset = last + 1
		a.u.received.Add(n)
		a.total.Add(n)
		if m {
			a.measured(t0, t1, n, payload, uint64(len(res.Records)))
		}
	}
}

// groupFenced reports a poll refused because the member's assignment
// changed (semantics.md §6).
func groupFenced(err error) bool {
	return errors.Is(err, wire.ErrConsumerGroupMemberNotFound) || errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned)
}

// runGroupConsumer reads as a member of its stream's consumer group
// (joined before the start): round robin over the assigned partitions,
// Next strategy with auto-commit, so the group's offsets carry the
// position. It stops when the group has read everything sent to the
// stream. For a pre-filled stream the warmup reads the partitions as a
// single consumer by offset, which leaves the group's offsets untouched.
func (a *actor) runGroupConsumer(ctx context.Context, cfg *Config, k *clock) error {
	what := fmt.Sprintf("consumer %d", a.id)
	if a.fill {
		if err := a.groupWarmup(ctx, cfg, k); err != nil {
			return err
		}
	}
	var parts []uint32
	synced := time.Time{}
	sync := func() error {
		as, err := a.c.SyncConsumerGroup(ctx, a.st.stream, a.st.topic, a.st.group)
		if err != nil {
			return fmt.Errorf("%s: sync group: %w", what, err)
		}
		parts, synced = as.Partitions, time.Now()
		return nil
	}
	if err := sync(); err != nil {
		return err
	}
	var idle idler
	p := pacer{rate: a.rate}
	rr, empty := 0, 0
	for a.u.owed() {
		if len(parts) == 0 {
			if time.Since(synced) >= resyncIdle {
				if err := sync(); err != nil {
					return err
				}
			}
			if err := idle.idle(ctx, what); err != nil {
				return err
			}
			continue
		}
		if err := p.wait(ctx, cfg.batchPayload()); err != nil {
			return err
		}
		part := parts[rr%len(parts)]
		rr++
		t0 := time.Now()
		res, err := a.pollBuffer(ctx, wire.PollMessages{
			Consumer: wire.GroupConsumer(a.st.group), StreamID: a.st.stream, TopicID: a.st.topic,
			Partition: wire.SomePartition(part), Strategy: wire.NextStrategy(),
			Count: uint32(cfg.MessagesPerBatch), AutoCommit: true,
		}, &a.pollBuf)
		t1 := time.Now()
		if groupFenced(err) || err == nil && res.PartitionID == wire.PollResyncPartition {
			if err := sync(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: poll: %w", what, err)
		}
		if res.Count == 0 {
			if empty++; empty >= len(parts) {
				empty = 0
				if err := idle.idle(ctx, what); err != nil {
					return err
				}
			}
			continue
		}
		empty = 0
		idle.busy()
		m := k.measuring(t0)
		n, payload, _ := a.polled(res, t1, m)
		a.u.received.Add(n)
		a.total.Add(n)
		if m {
			a.measured(t0, t1, n, payload, uint64(len(res.Records)))
		}
	}
	return nil
}

// groupWarmup re-reads the stream's fill by offset, partition after
// partition, until the warmup ends.
func (a *actor) groupWarmup(ctx context.Context, cfg *Config, k *clock) error {
	consumer := wire.SingleConsumer(wire.NumericID(uint32(a.id)))
	part, offset := uint32(0), uint64(0)
	for time.Now().Before(k.warmupEnd) {
		res, err := a.pollBuffer(ctx, wire.PollMessages{
			Consumer: consumer, StreamID: a.st.stream, TopicID: a.st.topic,
			Partition: wire.SomePartition(part), Strategy: wire.OffsetStrategy(offset),
			Count: uint32(cfg.MessagesPerBatch),
		}, &a.pollBuf)
		if err != nil {
			return fmt.Errorf("consumer %d: warmup poll: %w", a.id, err)
		}
		if res.Count == 0 {
			part, offset = (part+1)%uint32(a.st.partitions), 0
			continue
		}
		_, _, last := a.polled(res, time.Now(), false)
		offset = last + 1
	}
	return nil
}

// runProducingConsumer sends a batch to partition 0 of its stream, polls
// until it has read that batch back, and repeats. Its latency is the
// whole round; the message age is measured too.
func (a *actor) runProducingConsumer(ctx context.Context, cfg *Config, k *clock) error {
	defer a.u.producerDone()
	what := fmt.Sprintf("producing consumer %d", a.id)
	src, err := newBatchSource(cfg, a.id)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	p := pacer{rate: a.rate}
	n := uint64(cfg.MessagesPerBatch)
	payloadLen := cfg.batchPayload()
	consumer := wire.SingleConsumer(wire.NumericID(uint32(a.id)))
	var offset uint64
	var idle idler
	for {
		now := time.Now()
		if k.measuring(now) && (a.target > 0 && a.batches >= a.target || !k.end.IsZero() && !now.Before(k.end)) {
			return nil
		}
		if err := p.wait(ctx, payloadLen); err != nil {
			return err
		}
		t0 := time.Now()
		if err := a.sendBatch(ctx, a.st.stream, a.st.topic, a.partitioning(), src.next(t0)); err != nil {
			return fmt.Errorf("%s: send: %w", what, err)
		}
		a.u.sent.Add(n)
		m := k.measuring(t0)
		var got, payload, wl uint64
		for got < n {
			res, err := a.pollBuffer(ctx, wire.PollMessages{
				Consumer: consumer, StreamID: a.st.stream, TopicID: a.st.topic,
				Partition: wire.SomePartition(uint32(a.partition)), Strategy: wire.OffsetStrategy(offset),
				Count: uint32(n - got),
			}, &a.pollBuf)
			if err != nil {
				return fmt.Errorf("%s: poll: %w", what, err)
			}
			if res.Count == 0 {
				if err := idle.idle(ctx, what); err != nil {
					return err
				}
				continue
			}
			idle.busy()
			c, b, last := a.polled(res, time.Now(), m)
			got, payload, wl = got+c, payload+b, wl+uint64(len(res.Records))
			offset = last + 1
		}
		t1 := time.Now()
		a.u.received.Add(got)
		a.total.Add(got)
		if m {
			a.measured(t0, t1, got, payload, wl)
		}
	}
}
