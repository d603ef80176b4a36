package itest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/catalog/catalogtest"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

func TestConsumerOffsets(t *testing.T) {
	s := startWithTopic(t, 2, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(10, 8, "o")...))
	named := wire.SingleConsumer(wire.NamedID("reader"))
	store := func(cons wire.Consumer, p uint32, off uint64, ack wire.OffsetAck) Frame {
		return c.StoreOffset(wire.StoreConsumerOffset{Consumer: cons, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(p), Offset: off, Ack: ack})
	}
	get := func(cons wire.Consumer, p wire.OptPartition) (wire.ConsumerOffset, bool, Frame) {
		return c.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: stream1, TopicID: topic1, Partition: p})
	}
	del := func(cons wire.Consumer, p uint32) Frame {
		return c.DeleteOffset(wire.DeleteConsumerOffset{Consumer: cons, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(p), Ack: wire.AckQuorum})
	}
	if _, found, f := get(named, wire.SomePartition(0)); found || f.Reply.Status != 0 || len(f.Body) != 0 {
		t.Fatalf("nothing stored yet: found %v %v", found, f)
	}
	ExpectResultOK(t, store(named, 0, 4, wire.AckQuorum))
	// An omitted partition is partition 0 for a plain consumer.
	if off, found, _ := get(named, wire.OptPartition{}); !found || off.StoredOffset != 4 || off.CurrentOffset != 9 {
		t.Fatalf("stored %+v found %v", off, found)
	}
	// Explicit stores may move backwards; NoAck stores work too.
	ExpectResultOK(t, store(named, 0, 2, wire.AckNone))
	if off, _, _ := get(named, wire.SomePartition(0)); off.StoredOffset != 2 {
		t.Fatalf("stored %d, want 2", off.StoredOffset)
	}
	// Next continues after the stored offset.
	p := c.MustPoll(wire.PollMessages{Consumer: named, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(0), Strategy: wire.NextStrategy(), Count: 2})
	if msgs := collect(p); len(msgs) != 2 || msgs[0] != 3 {
		t.Fatalf("next after 2 polled %v", msgs)
	}
	t.Run("errors", func(t *testing.T) {
		ExpectStatus(t, store(named, 0, 10, wire.AckQuorum), wire.ErrInvalidOffset.Code)
		ExpectStatus(t, store(named, 1, 0, wire.AckQuorum), wire.ErrInvalidOffset.Code) // empty partition
		ExpectStatus(t, store(named, 5, 0, wire.AckQuorum), wire.ErrResourceNotFound.Code)
		ExpectStatus(t, del(wire.SingleConsumer(wire.NumericID(99)), 0), wire.ErrConsumerOffsetNotFound.Code)
		_, _, f := get(named, wire.SomePartition(5))
		ExpectStatus(t, f, wire.ErrPartitionNotFound.Code)
		// Unknown stream or topic: no offset (status 0, empty body).
		_, _, f = c.GetOffset(wire.GetConsumerOffset{Consumer: named, StreamID: wire.NumericID(5), TopicID: topic1})
		ExpectStatus(t, f, 0)
		_, _, f = c.GetOffset(wire.GetConsumerOffset{Consumer: named, StreamID: stream1, TopicID: wire.NumericID(5)})
		ExpectStatus(t, f, 0)
		ExpectStatus(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: named, StreamID: wire.NumericID(5), TopicID: topic1, Ack: wire.AckQuorum}), wire.ErrResourceNotFound.Code)
		// A missing ack byte does not decode.
		body := (&wire.StoreConsumerOffset{Consumer: named, StreamID: stream1, TopicID: topic1}).AppendTo(nil)
		ExpectStatus(t, c.Do(c.SendHeader(wire.OpStoreConsumerOffset), body[:len(body)-1]), wire.ErrInvalidCommand.Code)
		// Unknown group: poll 5000, offset read empty.
		group := wire.GroupConsumer(wire.NumericID(77))
		_, f = c.Poll(wire.PollMessages{Consumer: group, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(0), Strategy: wire.FirstStrategy(), Count: 1})
		ExpectStatus(t, f, wire.ErrConsumerGroupIDNotFound.Code)
		if _, found, f := get(group, wire.SomePartition(0)); found || f.Reply.Status != 0 {
			t.Fatalf("unknown group offset: %v", f)
		}
		// Undecodable poll: the 16-byte empty head, status 0.
		f = c.Call(wire.CmdPollMessages, []byte{1, 2, 3})
		if f.Reply.Status != 0 || len(f.Body) != wire.PollReplyHeadSize {
			t.Fatalf("undecodable poll: %v", f)
		}
	})
	ExpectResultOK(t, del(named, 0))
	if _, found, _ := get(named, wire.SomePartition(0)); found {
		t.Fatal("offset still stored after delete")
	}
}

func collect(p wire.PolledMessages) []uint64 {
	var out []uint64
	it := p.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		out = append(out, m.Offset)
	}
	return out
}

func TestGroupPolling(t *testing.T) {
	s := startWithTopic(t, 2, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	outsider := s.Dial(t)
	outsider.LoginRoot()
	s.Catalog.AddGroup(1, 1, 3, "g", map[wire.Uint128][]uint32{c.ID: {1}})
	c.MustSend(stream1, topic1, wire.PartitioningByID(1), Batch(t, 1, Payloads(4, 8, "g")...))
	group := wire.GroupConsumer(wire.NamedID("g"))
	req := wire.PollMessages{Consumer: group, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(1), Strategy: wire.NextStrategy(), Count: 3, AutoCommit: true}
	if got := collect(c.MustPoll(req)); !equalU64(got, span(0, 2)) {
		t.Fatalf("group poll %v", got)
	}
	if got := collect(c.MustPoll(req)); !equalU64(got, span(3, 3)) {
		t.Fatalf("group poll continues at %v", got)
	}
	// The group's offset is per (group, partition) and readable by non-members.
	off, found, _ := outsider.GetOffset(wire.GetConsumerOffset{Consumer: group, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(1)})
	if !found || off.StoredOffset != 3 {
		t.Fatalf("group offset %+v %v", off, found)
	}
	// Polls and auto-commits are reported to the catalog (in-flight marks).
	want := []catalogtest.GroupEvent{
		{Polled: true, Group: 3, Client: c.ID, Partition: 1, Offset: 2},
		{Group: 3, Client: c.ID, Partition: 1, Offset: 2},
		{Polled: true, Group: 3, Client: c.ID, Partition: 1, Offset: 3},
		{Group: 3, Client: c.ID, Partition: 1, Offset: 3},
	}
	if diff := cmp.Diff(want, s.Catalog.Events()); diff != "" {
		t.Fatalf("group events (-want +got):\n%s", diff)
	}
	// Omitted partition: the server picks none for a group (semantics.md
	// §4.2): the empty poll; offset writes are refused with 20.
	req.Partition = wire.OptPartition{}
	req.Strategy = wire.FirstStrategy()
	if p := c.MustPoll(req); p.PartitionID != 0 || p.Count != 0 || p.CurrentOffset != 0 {
		t.Fatalf("poll without partition: %+v", p)
	}
	ExpectStatus(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: group, StreamID: stream1, TopicID: topic1, Offset: 0, Ack: wire.AckQuorum}), wire.ErrResourceNotFound.Code)
	// Pending revocation: the owner may commit (reported) but not poll.
	s.Catalog.SetPending(1, 1, 3, 1, true)
	req.Partition = wire.SomePartition(1)
	if p := c.MustPoll(req); p.PartitionID != wire.PollResyncPartition || p.Count != 0 {
		t.Fatalf("poll of a pending partition: %+v", p)
	}
	ExpectResultOK(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: group, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(1), Offset: 1, Ack: wire.AckQuorum}))
	if diff := cmp.Diff([]catalogtest.GroupEvent{{Group: 3, Client: c.ID, Partition: 1, Offset: 1}}, s.Catalog.Events()); diff != "" {
		t.Fatalf("commit event (-want +got):\n%s", diff)
	}
	s.Catalog.SetPending(1, 1, 3, 1, false)
	// Not owned / not a member: the RESYNC head.
	for _, tc := range []struct {
		name string
		cl   *Client
		part wire.OptPartition
	}{{"not owned", c, wire.SomePartition(0)}, {"not a member", outsider, wire.SomePartition(1)}} {
		req.Partition = tc.part
		p := tc.cl.MustPoll(req)
		if p.PartitionID != wire.PollResyncPartition || p.Count != 0 {
			t.Fatalf("%s: head partition %#x count %d", tc.name, p.PartitionID, p.Count)
		}
	}
	// Offset writes by a non-owner are refused with 20.
	ExpectStatus(t, outsider.StoreOffset(wire.StoreConsumerOffset{Consumer: group, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(1), Offset: 0, Ack: wire.AckQuorum}), wire.ErrResourceNotFound.Code)
}

// TestRestartKeepsMessagesAndOffsets: a second broker on the same data
// directory serves the same messages and consumer offsets, and continues
// offsets after the last stored message.
func TestRestartKeepsMessagesAndOffsets(t *testing.T) {
	dir := t.TempDir()
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = 4096
	sent := sentLog{}
	consumer := wire.SingleConsumer(wire.NumericID(5))
	func() {
		s := startWithTopic(t, 1, settings, WithDir(dir))
		c := s.Dial(t)
		c.LoginRoot()
		for i := range 8 {
			b := Batch(t, uint64(i*10), Payloads(3, 700, "r")...)
			sent.add(t, c.MustSend(stream1, topic1, wire.PartitioningByID(0), b).BaseOffset, b)
		}
		ExpectResultOK(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: consumer, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(0), Offset: 11, Ack: wire.AckQuorum}))
		ctx, cancel := contextWithTimeout(10 * time.Second)
		defer cancel()
		if err := s.Broker.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	s := startWithTopic(t, 1, settings, WithDir(dir))
	c := s.Dial(t)
	c.LoginRoot()
	if st := s.Broker.Partitions().PartitionStats(s.Catalog.Ref(1, 1), 0); st.Messages != 24 || st.CurrentOffset != 23 || st.Segments < 2 {
		t.Fatalf("stats after restart %+v", st)
	}
	p := c.MustPoll(pollReq(consumer, 0, wire.NextStrategy(), 100, false))
	if got := sent.checkPolled(t, p, 0); !equalU64(got, span(12, 23)) {
		t.Fatalf("next after restart %v", got)
	}
	b := Batch(t, 500, Payloads(1, 10, "after")...)
	if conf := c.MustSend(stream1, topic1, wire.PartitioningByID(0), b); conf.BaseOffset != 24 {
		t.Fatalf("offset after restart %d, want 24", conf.BaseOffset)
	}
}

// TestRetention: expired sealed segments are removed on the injected
// clock, the active segment and younger segments stay.
func TestRetention(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = 4096
	settings.MessageExpiry = uint64(time.Hour / time.Microsecond)
	s := startWithTopic(t, 1, settings, WithBrokerOptions(broker.WithClock(clock), broker.WithRetentionInterval(-1)))
	c := s.Dial(t)
	c.LoginRoot()
	send := func(n int) {
		for range n {
			c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(2, 1500, "x")...))
		}
	}
	ref := s.Catalog.Ref(1, 1)
	plane := s.Broker.Partitions()
	send(6) // ~6 KB per 2 batches: segments of 2 batches
	old := plane.PartitionStats(ref, 0)
	now.Add(int64(30 * time.Minute))
	send(4)
	if rm := plane.RunRetention(); rm.Segments != 0 {
		t.Fatalf("removed %+v before expiry", rm)
	}
	now.Add(int64(45 * time.Minute)) // first segments 75 min old, later ones 45
	rm := plane.RunRetention()
	// old.Segments counts the (then empty) active segment.
	if rm.Segments != int(old.Segments)-1 || rm.Messages != old.Messages {
		t.Fatalf("removed %+v, want the %d sealed segments / %d messages written before", rm, old.Segments-1, old.Messages)
	}
	p := c.MustPoll(pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 100, false))
	if got := collect(p); len(got) != 8 || got[0] != 12 {
		t.Fatalf("after retention First polls %v", got)
	}
	now.Add(int64(2 * time.Hour))
	plane.RunRetention()
	st := plane.PartitionStats(ref, 0)
	if st.Segments != 1 || st.CurrentOffset != 19 {
		t.Fatalf("after everything expired: %+v (the active segment must stay)", st)
	}
}

// TestRetentionBySize: max_topic_size removes the oldest sealed segments
// while the partition is over its budget.
func TestRetentionBySize(t *testing.T) {
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = 4096
	settings.MaxTopicSize = 8 << 10
	s := startWithTopic(t, 1, settings, WithBrokerOptions(broker.WithRetentionInterval(-1)),
		WithConfig(func(c *config.Config) { c.MessageBus.MaxMessageSize = 4 << 10 }))
	c := s.Dial(t)
	c.LoginRoot()
	for range 12 {
		c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(1, 1500, "x")...))
	}
	plane := s.Broker.Partitions()
	before := plane.PartitionStats(s.Catalog.Ref(1, 1), 0)
	plane.RunRetention()
	after := plane.PartitionStats(s.Catalog.Ref(1, 1), 0)
	// Budget: max(8 KiB / 1, 4 KiB + 4 KiB) = 8 KiB.
	if after.SizeBytes > 8<<10 || after.SizeBytes+4096 < 8<<10 || after.Segments >= before.Segments || after.CurrentOffset != before.CurrentOffset {
		t.Fatalf("before %+v after %+v", before, after)
	}
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

var _ = catalogtest.New
