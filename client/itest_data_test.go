package client_test

import (
	"bytes"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
)

// Integration tests of the data plane (SEND, POLL, consumer offsets)
// against the real broker, on a stream and topic created through the SDK.

var (
	streamID = wire.NamedID("s")
	topicID  = wire.NamedID("t")
)

// dataBroker starts a broker with stream "s" holding topic "t" of parts
// partitions.
func dataBroker(t testing.TB, parts uint32, opts ...itest.Option) *itest.Server {
	t.Helper()
	s := itest.Start(t, opts...)
	c, err := client.Dial(t.Context(), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword), client.WithTLS(s.ClientTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(t.Context(), streamID, "t", parts); err != nil {
		t.Fatal(err)
	}
	return s
}

// pollAll returns the payloads of partition p from offset 0.
func pollAll(t *testing.T, c *client.Client, p uint32) []string {
	t.Helper()
	var out []string
	next := uint64(0)
	for {
		res, err := c.PollMessages(testCtx(t), wire.PollMessages{
			Consumer: wire.SingleConsumer(wire.NumericID(999)), StreamID: streamID, TopicID: topicID,
			Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(next), Count: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Count == 0 {
			return out
		}
		it := res.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			out = append(out, string(m.Payload))
			next = m.Offset + 1
		}
	}
}

func TestBrokerSendPoll(t *testing.T) {
	s := dataBroker(t, 3)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("k"), Value: wire.Uint32Header(7)}}
	block := hdrs.AppendTo(nil)
	var msgs []wire.Message
	for i := range 10 {
		msgs = append(msgs, wire.Message{Payload: []byte("m" + strconv.Itoa(i)), UserHeaders: block})
	}
	for round, want := range []uint64{0, 10} {
		conf, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByID(1), msgs)
		if err != nil {
			t.Fatalf("send %d: %v", round, err)
		}
		if len(conf) != 1 || conf[0].PartitionID != 1 || conf[0].BaseOffset != want {
			t.Fatalf("confirmations %+v", conf)
		}
	}
	poll := func(strategy wire.PollingStrategy, count uint32) []uint64 {
		t.Helper()
		res, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NamedID("r")), StreamID: streamID, TopicID: topicID,
			Partition: wire.SomePartition(1), Strategy: strategy, Count: count})
		if err != nil {
			t.Fatal(err)
		}
		var offs []uint64
		it := res.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			offs = append(offs, m.Offset)
			if !bytes.Equal(m.UserHeaders, block) || string(m.Payload) != "m"+strconv.Itoa(int(m.Offset%10)) {
				t.Fatalf("message %d: payload %q headers % x", m.Offset, m.Payload, m.UserHeaders)
			}
		}
		return offs
	}
	if got := poll(wire.FirstStrategy(), 100); len(got) != 20 || got[19] != 19 {
		t.Fatalf("first: %v", got)
	}
	if d := cmp.Diff([]uint64{15, 16, 17}, poll(wire.OffsetStrategy(15), 3)); d != "" {
		t.Fatalf("offset: %s", d)
	}
	if d := cmp.Diff([]uint64{18, 19}, poll(wire.LastStrategy(), 2)); d != "" {
		t.Fatalf("last: %s", d)
	}
	if d := cmp.Diff([]uint64{0, 1}, poll(wire.NextStrategy(), 2)); d != "" {
		t.Fatalf("next without offset: %s", d)
	}
	// Consumer offsets.
	me := wire.SingleConsumer(wire.NamedID("r"))
	if off, err := c.GetConsumerOffset(ctx, me, streamID, topicID, wire.SomePartition(1)); err != nil || off != nil {
		t.Fatalf("offset before store: %+v, %v", off, err)
	}
	if err := c.StoreConsumerOffset(ctx, me, streamID, topicID, wire.SomePartition(1), 5); err != nil {
		t.Fatal(err)
	}
	off, err := c.GetConsumerOffset(ctx, me, streamID, topicID, wire.SomePartition(1))
	if err != nil || off == nil || off.StoredOffset != 5 || off.CurrentOffset != 19 || off.PartitionID != 1 {
		t.Fatalf("stored offset %+v, %v", off, err)
	}
	if d := cmp.Diff([]uint64{6, 7}, poll(wire.NextStrategy(), 2)); d != "" {
		t.Fatalf("next after store: %s", d)
	}
	if err := c.DeleteConsumerOffset(ctx, me, streamID, topicID, wire.SomePartition(1)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteConsumerOffset(ctx, me, streamID, topicID, wire.SomePartition(1)); !errors.Is(err, wire.ErrConsumerOffsetNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// Server-side partitioning: by key (XXH32 % 3) and balanced.
	key := []byte("user-42")
	if conf, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByKey(key), msgs[:1]); err != nil || conf[0].PartitionID != xhash.XXH32(key, 0)%3 {
		t.Fatalf("send by key: %+v, %v", conf, err)
	}
	if _, err := c.SendMessages(ctx, streamID, topicID, wire.BalancedPartitioning(), msgs[:1]); err != nil {
		t.Fatal(err)
	}
	// Errors.
	if _, err := c.SendMessages(ctx, streamID, wire.NumericID(9), wire.PartitioningByID(0), msgs[:1]); err == nil {
		t.Fatal("send to a missing topic succeeded")
	}
	if _, err := c.PollMessages(ctx, wire.PollMessages{Consumer: me, StreamID: streamID, TopicID: topicID, Partition: wire.SomePartition(7), Strategy: wire.FirstStrategy(), Count: 1}); !errors.Is(err, wire.ErrPartitionNotFound) {
		t.Fatalf("poll of a missing partition: %v", err)
	}
}

// TestBrokerSendRetriedOnce loses the reply of a SendMessages the broker
// already stored: the client reconnects, logs in again under the same
// client id and resends the request with the same number, and the
// partition's duplicate window stores it only once.
func TestBrokerSendRetriedOnce(t *testing.T) {
	s := dataBroker(t, 1)
	var dropped atomic.Bool
	px := newProxy(t, s.Addr, func(h wire.ReplyHeader) bool {
		return h.Operation == wire.OpSendMessages && dropped.CompareAndSwap(false, true)
	})
	c, err := client.Dial(testCtx(t), px.Addr(), client.WithCredentials(itest.RootUsername, itest.RootPassword),
		client.WithReconnect(client.ReconnectPolicy{InitialBackoff: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	conf, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByID(0), []wire.Message{{Payload: []byte("exactly once")}})
	if err != nil {
		t.Fatalf("send across a dropped connection: %v", err)
	}
	if !dropped.Load() {
		t.Fatal("the reply was not dropped")
	}
	if len(conf) != 0 {
		t.Fatalf("a recognized duplicate has no confirmations, got %+v", conf)
	}
	if got := pollAll(t, c, 0); len(got) != 1 || got[0] != "exactly once" {
		t.Fatalf("partition holds %q", got)
	}
	var sends []proxied
	for _, r := range px.requests() {
		if r.Hdr.Operation == wire.OpSendMessages {
			sends = append(sends, r)
		}
	}
	if len(sends) != 2 || sends[0].Conn == sends[1].Conn || sends[0].Hdr.Client != sends[1].Hdr.Client ||
		sends[0].Hdr.Request != sends[1].Hdr.Request || !bytes.Equal(sends[0].Body, sends[1].Body) || sends[1].Hdr.Session <= sends[0].Hdr.Session {
		t.Fatalf("attempts: %+v", sends)
	}
	// The next send is a new request and is stored.
	if conf, err := c.SendMessages(ctx, streamID, topicID, wire.PartitioningByID(0), []wire.Message{{Payload: []byte("next")}}); err != nil || len(conf) != 1 || conf[0].BaseOffset != 1 {
		t.Fatalf("next send: %+v, %v", conf, err)
	}
}

// TestBrokerProducer: batching and client-side key partitioning end to
// end; every message is stored once, on XXH32(key) % partitions, in send
// order per key.
func TestBrokerProducer(t *testing.T) {
	const parts, n = 3, 5000
	s := dataBroker(t, parts)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	var batches atomic.Int32
	p, err := c.NewProducer(ctx, streamID, topicID, client.WithPartitionCount(parts), client.WithBatchMessages(100),
		client.WithLinger(time.Millisecond), client.WithDeliveryHandler(func(r client.DeliveryReport) {
			if r.Err == nil && r.HasOffset {
				batches.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		key := "key-" + strconv.Itoa(i%17)
		if err := p.Send(ctx, client.Message{Key: []byte(key), Payload: []byte(key + "/" + strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if b := batches.Load(); b < n/100 || b >= n {
		t.Fatalf("%d batches for %d messages", b, n)
	}
	total := 0
	last := map[string]int{}
	for part := range uint32(parts) {
		for _, pl := range pollAll(t, c, part) {
			total++
			key, seqStr, _ := bytes.Cut([]byte(pl), []byte("/"))
			if want := xhash.XXH32(key, 0) % parts; want != part {
				t.Fatalf("%s stored on partition %d, want %d", pl, part, want)
			}
			seq, _ := strconv.Atoi(string(seqStr))
			if prev, ok := last[string(key)]; ok && seq <= prev {
				t.Fatalf("key %s out of order: %d after %d", key, seq, prev)
			}
			last[string(key)] = seq
		}
	}
	if total != n {
		t.Fatalf("%d messages stored, want %d", total, n)
	}
}

// TestBrokerConsumer: a single consumer reads every partition once,
// stores its offsets, and a new consumer of the same name resumes.
func TestBrokerConsumer(t *testing.T) {
	const parts = 3
	s := dataBroker(t, parts)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	p, err := c.NewProducer(ctx, streamID, topicID, client.WithPartitionCount(parts))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := p.Send(ctx, client.Message{Payload: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	me := wire.SingleConsumer(wire.NamedID("reader"))
	consume := func(n int) map[string]int {
		co, err := c.NewConsumer(ctx, streamID, topicID, me, client.WithConsumerPartitions(0, 1, 2),
			client.WithPollCount(50), client.WithPollInterval(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		got := 0
		for m, err := range co.Messages(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			seen[string(m.Payload)]++
			if got++; got == n {
				break
			}
		}
		if err := co.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return seen
	}
	first := consume(300)
	for i := range 300 {
		if first[strconv.Itoa(i)] != 1 {
			t.Fatalf("message %d seen %d times", i, first[strconv.Itoa(i)])
		}
	}
	for i := 300; i < 330; i++ {
		if err := p.Send(ctx, client.Message{Payload: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := consume(30)
	for i := 300; i < 330; i++ {
		if second[strconv.Itoa(i)] != 1 {
			t.Fatalf("resumed consumer: message %d seen %d times (%v)", i, second[strconv.Itoa(i)], second)
		}
	}
}
