package itest

import (
	"bytes"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog/catalogtest"
	"github.com/iggo-dev/iggo/wire"
)

var (
	stream1 = wire.NumericID(1)
	topic1  = wire.NumericID(1)
)

// startWithTopic starts a broker with stream 1 ("s1") holding topic 1
// ("t1") of partitions partitions and settings s.
func startWithTopic(t testing.TB, partitions uint32, s wire.TopicSettings, opts ...Option) *Server {
	t.Helper()
	opts = append(opts, WithCatalog(func(c *catalogtest.Topics) {
		if _, err := c.AddTopic(1, "s1", 1, "t1", partitions, 1, s); err != nil {
			t.Fatalf("add topic: %v", err)
		}
	}))
	return Start(t, opts...)
}

// sentLog remembers the frames sent, by absolute offset.
type sentLog map[uint64][]byte

func (l sentLog) add(t testing.TB, base uint64, batch []byte) {
	t.Helper()
	v, _, err := wire.ParseBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		l[base+uint64(m.OffsetDelta())] = bytes.Clone(m.Bytes())
	}
}

// checkPolled verifies every record of p (stamped checksums valid, frames
// byte-identical to what was sent) and returns the offsets in order.
func (l sentLog) checkPolled(t testing.TB, p wire.PolledMessages, partition uint32) []uint64 {
	t.Helper()
	var offs []uint64
	it := p.Batches()
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		if _, err := wire.ValidateBatch(b.Bytes()); err != nil {
			t.Fatalf("polled record does not verify: %v", err)
		}
		if b.PartitionID() != uint64(partition) {
			t.Fatalf("record partition_id %d, want %d", b.PartitionID(), partition)
		}
		ms := b.Messages()
		for m, ok := ms.Next(); ok; m, ok = ms.Next() {
			off := b.BaseOffset() + uint64(m.OffsetDelta())
			if want, ok := l[off]; !ok || !bytes.Equal(want, m.Bytes()) {
				t.Fatalf("offset %d: frame differs from the one sent", off)
			}
			offs = append(offs, off)
		}
	}
	if uint32(len(offs)) != p.Count {
		t.Fatalf("messages_count %d, frames %d", p.Count, len(offs))
	}
	return offs
}

func span(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func pollReq(c wire.Consumer, partition uint32, s wire.PollingStrategy, count uint32, auto bool) wire.PollMessages {
	return wire.PollMessages{Consumer: c, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(partition), Strategy: s, Count: count, AutoCommit: auto}
}

func TestSendPollEveryStrategy(t *testing.T) {
	s := startWithTopic(t, 3, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	sent := sentLog{}
	var bases []uint64
	var stamps []uint64
	for i, n := range []int{5, 7, 4} {
		batch := Batch(t, uint64(100*i+1), Payloads(n, 64+i, "m")...)
		conf := c.MustSend(stream1, topic1, wire.PartitioningByID(0), batch)
		if conf.StreamID != 1 || conf.TopicID != 1 || conf.PartitionID != 0 {
			t.Fatalf("confirmation %+v", conf)
		}
		sent.add(t, conf.BaseOffset, batch)
		bases = append(bases, conf.BaseOffset)
	}
	if bases[0] != 0 || bases[1] != 5 || bases[2] != 12 {
		t.Fatalf("base offsets %v, want [0 5 12]", bases)
	}
	consumer := wire.SingleConsumer(wire.NumericID(7))
	all := c.MustPoll(pollReq(consumer, 0, wire.FirstStrategy(), 100, false))
	it := all.Batches()
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		stamps = append(stamps, b.BaseTimestamp())
	}
	if all.CurrentOffset != 15 || len(stamps) != 3 {
		t.Fatalf("current offset %d, %d records", all.CurrentOffset, len(stamps))
	}
	tests := []struct {
		name string
		req  wire.PollMessages
		want []uint64
	}{
		{"first all", pollReq(consumer, 0, wire.FirstStrategy(), 100, false), span(0, 15)},
		{"first count 3 (tail slice)", pollReq(consumer, 0, wire.FirstStrategy(), 3, false), span(0, 2)},
		{"offset inside both edges", pollReq(consumer, 0, wire.OffsetStrategy(3), 6, false), span(3, 8)},
		{"offset inside one record", pollReq(consumer, 0, wire.OffsetStrategy(6), 2, false), span(6, 7)},
		{"offset at a record start", pollReq(consumer, 0, wire.OffsetStrategy(5), 7, false), span(5, 11)},
		{"offset at the last message", pollReq(consumer, 0, wire.OffsetStrategy(15), 10, false), span(15, 15)},
		{"offset past the end", pollReq(consumer, 0, wire.OffsetStrategy(16), 10, false), nil},
		{"last 5", pollReq(consumer, 0, wire.LastStrategy(), 5, false), span(11, 15)},
		{"last more than stored", pollReq(consumer, 0, wire.LastStrategy(), 50, false), span(0, 15)},
		{"timestamp of the second record", pollReq(consumer, 0, wire.TimestampStrategy(stamps[1]), 100, false), span(5, 15)},
		{"timestamp after the last record", pollReq(consumer, 0, wire.TimestampStrategy(stamps[2]+1), 100, false), nil},
		{"count 0", pollReq(consumer, 0, wire.FirstStrategy(), 0, false), nil},
		{"next without stored offset", pollReq(consumer, 0, wire.NextStrategy(), 4, false), span(0, 3)},
		{"empty partition", pollReq(consumer, 1, wire.FirstStrategy(), 10, false), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := c.MustPoll(tt.req)
			got := sent.checkPolled(t, p, tt.req.Partition.ID)
			if !equalU64(got, tt.want) {
				t.Fatalf("offsets %v, want %v", got, tt.want)
			}
			if len(tt.want) == 0 && (p.PartitionID != tt.req.Partition.ID) {
				t.Fatalf("empty poll head partition %d", p.PartitionID)
			}
			wantCurrent := uint64(15)
			if tt.req.Partition.ID == 1 {
				wantCurrent = 0
			}
			if p.CurrentOffset != wantCurrent {
				t.Fatalf("current offset %d, want %d", p.CurrentOffset, wantCurrent)
			}
		})
	}
	t.Run("next with auto-commit walks the partition", func(t *testing.T) {
		var got []uint64
		for range 6 {
			p := c.MustPoll(pollReq(consumer, 0, wire.NextStrategy(), 3, true))
			got = append(got, sent.checkPolled(t, p, 0)...)
		}
		if !equalU64(got, span(0, 15)) {
			t.Fatalf("offsets %v", got)
		}
		off, found, f := c.GetOffset(wire.GetConsumerOffset{Consumer: consumer, StreamID: stream1, TopicID: topic1, Partition: wire.SomePartition(0)})
		if !found || off.StoredOffset != 15 || off.CurrentOffset != 15 || off.PartitionID != 0 {
			t.Fatalf("stored offset %+v found %v (%v)", off, found, f)
		}
	})
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPollOverTLS: poll replies carry file extents; under TLS they are
// copied through the TLS record layer instead of sendfile, and several
// pipelined replies keep their order.
func TestPollOverTLS(t *testing.T) {
	s := startWithTopic(t, 1, wire.DefaultTopicSettings(), WithTLS())
	c := s.Dial(t)
	c.LoginRoot()
	sent := sentLog{}
	for i := range 3 {
		b := Batch(t, uint64(i*10), Payloads(4, 3000, "tls")...)
		sent.add(t, c.MustSend(stream1, topic1, wire.PartitioningByID(0), b).BaseOffset, b)
	}
	consumer := wire.SingleConsumer(wire.NumericID(1))
	// Pipeline three polls, then read the three replies.
	reqs := []wire.PollMessages{
		pollReq(consumer, 0, wire.FirstStrategy(), 100, false),
		pollReq(consumer, 0, wire.OffsetStrategy(2), 5, false),
		pollReq(consumer, 0, wire.LastStrategy(), 1, false),
	}
	for _, r := range reqs {
		if err := c.Send(c.Header(wire.OpNonReplicated, wire.CmdPollMessages), r.AppendTo(nil)); err != nil {
			t.Fatal(err)
		}
	}
	wants := [][]uint64{span(0, 11), span(2, 6), span(11, 11)}
	for i, want := range wants {
		f := c.MustRecv()
		var p wire.PolledMessages
		if f.Reply.Status != 0 || p.Decode(f.Body) != nil {
			t.Fatalf("reply %d: %v", i, f)
		}
		if got := sent.checkPolled(t, p, 0); !equalU64(got, want) {
			t.Fatalf("reply %d: offsets %v, want %v", i, got, want)
		}
	}
}
