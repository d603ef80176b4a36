package client

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// sentBatch is a SendMessages request as the fake server saw it.
type sentBatch struct {
	Partition uint32
	Payloads  []string
	IDs       []wire.Uint128
	Request   uint64
}

// sentBatches decodes every SendMessages request received by s.
func sentBatches(t testing.TB, s *fakeServer) []sentBatch {
	t.Helper()
	var out []sentBatch
	for _, r := range s.requests() {
		if r.Hdr.Operation != wire.OpSendMessages {
			continue
		}
		var sm wire.SendMessages
		if _, err := sm.Admit(r.Body); err != nil {
			t.Fatalf("server would refuse a batch: %v", err)
		}
		if sm.Partitioning.Kind != wire.PartitionByID {
			t.Fatalf("partitioning %v, want by id", sm.Partitioning.Kind)
		}
		b := sentBatch{Partition: sm.Partitioning.PartitionID, Request: r.Hdr.Request}
		v, _, err := wire.ParseBatch(sm.Batch)
		if err != nil {
			t.Fatal(err)
		}
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			b.Payloads = append(b.Payloads, string(m.Payload()))
			b.IDs = append(b.IDs, m.ID())
		}
		out = append(out, b)
	}
	return out
}

// topicServer answers GET_TOPIC with a topic of n partitions and lets
// send, when non-nil, answer SendMessages.
func topicServer(t testing.TB, n uint32, send fakeHandler) *fakeServer {
	return newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		switch {
		case r.Command() == wire.CmdGetTopic:
			d := wire.TopicDetails{Topic: wire.Topic{ID: 1, Name: "t", PartitionsCount: n, CompressionAlgorithm: wire.CompressionNone}}
			for i := range n {
				d.Partitions = append(d.Partitions, wire.PartitionInfo{ID: i})
			}
			fc.reply(r, 0, d.AppendTo(nil))
			return true
		case r.Hdr.Operation == wire.OpSendMessages && send != nil:
			return send(fc, r)
		}
		return false
	})
}

func newTestProducer(t testing.TB, c *Client, opts ...ProducerOption) *Producer {
	t.Helper()
	p, err := c.NewProducer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func payloads(prefix string, n int) []Message {
	out := make([]Message, n)
	for i := range out {
		out[i] = Message{Payload: []byte(prefix + strconv.Itoa(i))}
	}
	return out
}

func TestProducerBatching(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []ProducerOption
		sends int
		want  []int // messages per batch, in order
	}{
		{"by count", []ProducerOption{WithBatchMessages(10)}, 25, []int{10, 10, 5}},
		{"by bytes", []ProducerOption{WithBatchBytes(3 * (wire.MessageHeaderSize + 2))}, 7, []int{3, 3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := topicServer(t, 1, nil)
			c := dialFake(t, s)
			opts := append([]ProducerOption{WithPartition(0), WithLinger(time.Hour), WithMaxInFlight(1)}, tc.opts...)
			p := newTestProducer(t, c, opts...)
			ctx := ctxTimeout(t)
			msgs := payloads("m", tc.sends)
			for i := range msgs {
				if err := p.Send(ctx, msgs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var got []int
			var all []string
			for _, b := range sentBatches(t, s) {
				got = append(got, len(b.Payloads))
				all = append(all, b.Payloads...)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("batch sizes (-want +got):\n%s", d)
			}
			for i, m := range msgs {
				if all[i] != string(m.Payload) {
					t.Fatalf("message %d is %q, want %q (order)", i, all[i], m.Payload)
				}
			}
		})
	}
}

// TestProducerLinger: a partial batch goes out after the linger time
// without Flush.
func TestProducerLinger(t *testing.T) {
	s := topicServer(t, 1, nil)
	c := dialFake(t, s)
	p := newTestProducer(t, c, WithPartition(0), WithLinger(5*time.Millisecond))
	if err := p.Send(ctxTimeout(t), payloads("x", 3)...); err != nil {
		t.Fatal(err)
	}
	s.waitFor(func(rs []fakeReq) bool {
		for _, r := range rs {
			if r.Hdr.Operation == wire.OpSendMessages {
				return true
			}
		}
		return false
	})
	if b := sentBatches(t, s); len(b) != 1 || len(b[0].Payloads) != 3 {
		t.Fatalf("batches %+v", b)
	}
}

// TestProducerKeyPartitioning: keyed messages land on XXH32(key) %
// partitions; keyless ones round-robin over the partitions.
func TestProducerKeyPartitioning(t *testing.T) {
	const parts = 5
	s := topicServer(t, parts, nil)
	c := dialFake(t, s)
	p := newTestProducer(t, c, WithLinger(time.Hour))
	if p.Partitions() != parts {
		t.Fatalf("partitions %d", p.Partitions())
	}
	ctx := ctxTimeout(t)
	want := map[string]uint32{}
	for i := range 50 {
		key := "key-" + strconv.Itoa(i)
		want[key] = xhash.XXH32([]byte(key), 0) % parts
		if err := p.Send(ctx, Message{Key: []byte(key), Payload: []byte(key)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, b := range sentBatches(t, s) {
		for _, pl := range b.Payloads {
			seen++
			if want[pl] != b.Partition {
				t.Fatalf("key %q went to partition %d, want %d", pl, b.Partition, want[pl])
			}
		}
	}
	if seen != 50 {
		t.Fatalf("%d messages sent", seen)
	}
}

func TestProducerBalanced(t *testing.T) {
	const parts = 3
	s := topicServer(t, parts, nil)
	c := dialFake(t, s)
	p := newTestProducer(t, c, WithLinger(time.Hour), WithBatchMessages(2))
	ctx := ctxTimeout(t)
	if err := p.Send(ctx, payloads("b", 12)...); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Sealing a batch of the balanced partition moves to the next one, so
	// six batches of two land twice on each partition (senders of
	// different partitions may reach the wire in any order).
	counts := map[uint32]int{}
	for _, b := range sentBatches(t, s) {
		if len(b.Payloads) != 2 {
			t.Fatalf("batch of %d", len(b.Payloads))
		}
		counts[b.Partition]++
	}
	if d := cmp.Diff(map[uint32]int{0: 2, 1: 2, 2: 2}, counts); d != "" {
		t.Fatalf("batches per partition (-want +got):\n%s", d)
	}
}

// TestProducerMessageIDs: zero ids become random UUIDv4s; given ids are kept.
func TestProducerMessageIDs(t *testing.T) {
	s := topicServer(t, 1, nil)
	c := dialFake(t, s)
	p := newTestProducer(t, c, WithPartition(0))
	ctx := ctxTimeout(t)
	given := wire.Uint128{Lo: 42, Hi: 7}
	if err := p.Send(ctx, Message{Payload: []byte("a")}, Message{ID: given, Payload: []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []wire.Uint128
	for _, b := range sentBatches(t, s) {
		ids = append(ids, b.IDs...)
	}
	if len(ids) != 2 || ids[1] != given || ids[0].IsZero() {
		t.Fatalf("ids %v", ids)
	}
	var raw [16]byte
	wire.PutUint128(raw[:], ids[0])
	if raw[6]>>4 != 4 || raw[8]>>6 != 2 {
		t.Fatalf("minted id % x is not a UUIDv4", raw)
	}
}

// TestProducerMemoryBound: while the server holds replies the producer
// accepts messages only up to its byte budget; with WithFailWhenFull the
// next Send fails, without it Send blocks until its context ends.
func TestProducerMemoryBound(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	s := topicServer(t, 1, func(fc *fakeConn, r fakeReq) bool {
		<-release
		return false
	})
	defer releaseOnce.Do(func() { close(release) })
	c := dialFake(t, s)
	const msgSize = wire.MessageHeaderSize + 100
	const limit = 10 * msgSize
	p := newTestProducer(t, c, WithPartition(0), WithLinger(0), WithBufferBytes(limit), WithBatchBytes(limit), WithFailWhenFull())
	ctx := ctxTimeout(t)
	msg := Message{Payload: make([]byte, 100)}
	accepted := 0
	for {
		err := p.Send(ctx, msg)
		if errors.Is(err, ErrBufferFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted++
		if p.BufferedBytes() > limit {
			t.Fatalf("buffered %d bytes over the %d budget", p.BufferedBytes(), limit)
		}
		if accepted > 10 {
			t.Fatal("accepted more than the budget holds")
		}
	}
	if accepted != 10 {
		t.Fatalf("accepted %d messages, want 10", accepted)
	}
	if err := p.Send(ctx, Message{Payload: make([]byte, limit)}); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("oversized message: %v", err)
	}

	blocking := newTestProducer(t, c, WithPartition(0), WithLinger(0), WithBufferBytes(limit), WithBatchBytes(limit))
	for range 10 {
		if err := blocking.Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := blocking.Send(short, msg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("blocked Send: %v", err)
	}
	releaseOnce.Do(func() { close(release) })
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := blocking.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if p.BufferedBytes() != 0 || blocking.BufferedBytes() != 0 {
		t.Fatal("budget not released after delivery")
	}
}

// TestProducerDeliveryErrors: a refused batch is reported to the handler
// and returned by Flush.
func TestProducerDeliveryErrors(t *testing.T) {
	s := topicServer(t, 1, func(fc *fakeConn, r fakeReq) bool {
		fc.reply(r, wire.ErrUnauthorized.Code, nil)
		return true
	})
	c := dialFake(t, s)
	var reports atomic.Int32
	p := newTestProducer(t, c, WithPartition(0), WithDeliveryHandler(func(r DeliveryReport) {
		if r.Err != nil && r.Messages == 2 {
			reports.Add(1)
		}
	}))
	ctx := ctxTimeout(t)
	if err := p.Send(ctx, payloads("e", 2)...); err != nil {
		t.Fatal(err)
	}
	err := p.Flush(ctx)
	de, ok := errors.AsType[*DeliveryError](err)
	if !ok || !errors.Is(err, wire.ErrUnauthorized) || de.Messages != 2 {
		t.Fatalf("flush: %v", err)
	}
	if reports.Load() != 1 {
		t.Fatalf("%d failure reports", reports.Load())
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("errors are reported once: %v", err)
	}
}

// TestProducerCloseAbandons: Close with an expired context gives up on
// unconfirmed batches and reports them.
func TestProducerCloseAbandons(t *testing.T) {
	release := make(chan struct{})
	s := topicServer(t, 1, func(fc *fakeConn, r fakeReq) bool {
		<-release
		return false
	})
	defer close(release)
	c := dialFake(t, s)
	p, err := c.NewProducer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), WithPartition(0), WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctxTimeout(t), payloads("c", 3)...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = p.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errAbandoned) {
		t.Fatalf("close: %v", err)
	}
	if err := p.Send(t.Context(), Message{Payload: []byte("late")}); !errors.Is(err, ErrProducerClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

// TestProducerConcurrentSend: many goroutines share a producer; every
// message is sent exactly once.
func TestProducerConcurrentSend(t *testing.T) {
	s := topicServer(t, 4, nil)
	c := dialFake(t, s)
	p := newTestProducer(t, c, WithLinger(time.Millisecond), WithBatchMessages(50))
	ctx := ctxTimeout(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if err := p.Send(ctx, Message{Payload: []byte(strconv.Itoa(g*1000 + i))}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, b := range sentBatches(t, s) {
		for _, pl := range b.Payloads {
			seen[pl]++
		}
	}
	if len(seen) != 1600 {
		t.Fatalf("%d distinct messages, want 1600", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("message %s sent %d times", k, n)
		}
	}
}

// TestProducerBudgetSealsOpenBatches: when Send needs budget held by open
// batches whose linger is far off, those batches are sent so the budget
// comes back instead of blocking forever.
func TestProducerBudgetSealsOpenBatches(t *testing.T) {
	s := topicServer(t, 4, nil)
	c := dialFake(t, s)
	const msgSize = wire.MessageHeaderSize + 10
	p := newTestProducer(t, c, WithLinger(time.Hour), WithBatchBytes(4*msgSize), WithBufferBytes(4*msgSize))
	ctx := ctxTimeout(t)
	for i := range 20 {
		// Keys spread the messages over the partitions, so no batch fills.
		if err := p.Send(ctx, Message{Key: []byte{byte(i)}, Payload: make([]byte, 10)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range sentBatches(t, s) {
		n += len(b.Payloads)
	}
	if n != 20 {
		t.Fatalf("%d messages sent", n)
	}
}
