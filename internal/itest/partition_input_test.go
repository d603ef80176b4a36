package itest

import (
	"encoding/binary"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/xhash"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// corrupt returns a copy of a SEND_MESSAGES body changed by f, where f
// gets the batch part of the copy.
func corrupt(body []byte, f func(batch []byte)) []byte {
	out := append([]byte(nil), body...)
	ml := binary.LittleEndian.Uint32(out)
	f(out[4+ml:])
	return out
}

// refreshBatchChecksum recomputes the producer batch checksum after an
// edit, so the test reaches the check it aims at.
func refreshBatchChecksum(batch []byte) {
	binary.LittleEndian.PutUint64(batch[wire.BatchOffChecksum:], wire.BatchChecksum(batch))
}

func refreshFrameChecksum(batch []byte) {
	f := batch[wire.BatchHeaderSize:]
	n := wire.MessageHeaderSize + int(binary.LittleEndian.Uint32(f[wire.MessageOffPayloadLength:])) + int(binary.LittleEndian.Uint32(f[wire.MessageOffUserHeadersLength:]))
	binary.LittleEndian.PutUint64(f, xxh3.Hash(f[8:n]))
}

func TestSendBadInput(t *testing.T) {
	s := startWithTopic(t, 2, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	good := SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(3, 32, "g")...))
	metadata := func(stream, topic wire.Identifier, p wire.Partitioning, count uint32, batch []byte) []byte {
		sm := wire.SendMessages{StreamID: stream, TopicID: topic, Partitioning: p, MessagesCount: count, Batch: batch}
		return sm.AppendTo(nil)
	}
	batch3 := Batch(t, 1, Payloads(3, 32, "g")...)
	tests := []struct {
		name string
		body []byte
		code uint32
	}{
		{"empty body", nil, wire.ErrInvalidCommand.Code},
		{"metadata length past the body", []byte{200, 0, 0, 0, 1, 2, 3}, wire.ErrInvalidCommand.Code},
		{"bad frame checksum", corrupt(good, func(b []byte) { b[wire.BatchHeaderSize+wire.MessageHeaderSize] ^= 1 }), wire.ErrInvalidMessageChecksum.Code},
		{"bad batch checksum", corrupt(good, func(b []byte) { b[wire.BatchOffChecksum] ^= 1 }), wire.ErrInvalidBatchChecksum.Code},
		{"frame length past the batch", corrupt(good, func(b []byte) {
			binary.LittleEndian.PutUint32(b[wire.BatchHeaderSize+wire.MessageOffPayloadLength:], 1<<20)
		}), wire.ErrInvalidCommand.Code},
		{"non-zero batch reserved byte", corrupt(good, func(b []byte) { b[200] = 1; refreshBatchChecksum(b) }), wire.ErrInvalidCommand.Code},
		{"non-zero frame reserved field", corrupt(good, func(b []byte) {
			b[wire.BatchHeaderSize+wire.MessageOffReserved] = 1
			refreshFrameChecksum(b)
			refreshBatchChecksum(b)
		}), wire.ErrInvalidCommand.Code},
		{"header count differs from frames", corrupt(good, func(b []byte) {
			binary.LittleEndian.PutUint32(b[wire.BatchOffMessageCount:], 4)
			refreshBatchChecksum(b)
		}), wire.ErrInvalidCommand.Code},
		{"metadata count differs", metadata(stream1, topic1, wire.PartitioningByID(0), 2, batch3), wire.ErrInvalidCommand.Code},
		{"empty batch", metadata(stream1, topic1, wire.PartitioningByID(0), 0, func() []byte {
			h := wire.BatchHeader{BatchLength: wire.BatchHeaderSize}
			b := h.AppendTo(nil)
			refreshBatchChecksum(b)
			return b
		}()), wire.ErrInvalidCommand.Code},
		{"trailing bytes after the batch", append(append([]byte(nil), good...), 0), wire.ErrInvalidCommand.Code},
		{"batch shorter than its header", good[:len(good)-len(batch3)+100], wire.ErrInvalidCommand.Code},
		{"unknown stream", metadata(wire.NumericID(9), topic1, wire.PartitioningByID(0), 3, batch3), wire.ErrResourceNotFound.Code},
		{"unknown topic", metadata(stream1, wire.NamedID("nope"), wire.PartitioningByID(0), 3, batch3), wire.ErrResourceNotFound.Code},
		{"unknown partition", metadata(stream1, topic1, wire.PartitioningByID(2), 3, batch3), wire.ErrResourceNotFound.Code},
		{"empty message key", func() []byte {
			b := metadata(stream1, topic1, wire.PartitioningByID(0), 3, batch3)
			// Turn the 6-byte PartitionId partitioning into kind 3 with
			// length 0 followed by 4 stray bytes: undecodable.
			b[4+6+6] = byte(wire.PartitionByKey)
			b[4+6+6+1] = 0
			return b
		}(), wire.ErrInvalidCommand.Code},
		{"key longer than the metadata", func() []byte {
			b := metadata(stream1, topic1, wire.PartitioningByKey([]byte("abcd")), 3, batch3)
			// Claim a 255-byte key: it runs past metadata_length.
			b[4+6+6+1] = 255
			return b
		}(), wire.ErrInvalidCommand.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ExpectStatus(t, c.SendMessages(tt.body), tt.code)
		})
	}
	// Nothing was appended: the next good send lands at offset 0, and a
	// second producer was never affected.
	other := s.Dial(t)
	other.LoginRoot()
	if conf := other.MustSend(stream1, topic1, wire.PartitioningByID(0), batch3); conf.BaseOffset != 0 {
		t.Fatalf("base offset %d after rejected sends, want 0", conf.BaseOffset)
	}
	if conf := c.MustSend(stream1, topic1, wire.PartitioningByID(0), Batch(t, 9, Payloads(1, 8, "x")...)); conf.BaseOffset != 3 {
		t.Fatalf("base offset %d, want 3", conf.BaseOffset)
	}
}

// TestSendFrameOverLimit: a frame past message_bus.max_message_size ends
// the connection with Eviction(6) before any byte is appended.
func TestSendFrameOverLimit(t *testing.T) {
	s := startWithTopic(t, 1, wire.DefaultTopicSettings(), WithConfig(func(c *config.Config) { c.MessageBus.MaxMessageSize = 64 << 10 }))
	c := s.Dial(t)
	c.LoginRoot()
	body := SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(1, 80<<10, "big")...))
	if err := c.Send(c.SendHeader(wire.OpSendMessages), body); err != nil {
		t.Fatal(err)
	}
	frames := c.ExpectClosed()
	if len(frames) != 1 {
		t.Fatalf("frames %v", frames)
	}
	ExpectEviction(t, frames[0], wire.EvictInvalidRequestBodySize)
	d := s.Dial(t)
	d.LoginRoot()
	p := d.MustPoll(pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 10, false))
	if p.Count != 0 {
		t.Fatalf("polled %d messages", p.Count)
	}
}

func TestSendPartitioningKinds(t *testing.T) {
	const parts = 4
	s := startWithTopic(t, parts, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	batch := Batch(t, 1, Payloads(1, 16, "p")...)
	t.Run("balanced round robin", func(t *testing.T) {
		var got []uint32
		for range 2 * parts {
			got = append(got, c.MustSend(stream1, topic1, wire.BalancedPartitioning(), batch).PartitionID)
		}
		for i, p := range got {
			if want := uint32(i+1) % parts; p != want {
				t.Fatalf("balanced partitions %v: position %d got %d want %d", got, i, p, want)
			}
		}
	})
	t.Run("message key", func(t *testing.T) {
		for _, key := range []string{"a", "order-17", "user/42", "ключ"} {
			want := xhash.XXH32([]byte(key), 0) % parts
			for range 2 {
				if p := c.MustSend(stream1, topic1, wire.PartitioningByKey([]byte(key)), batch).PartitionID; p != want {
					t.Fatalf("key %q went to %d, want %d", key, p, want)
				}
			}
		}
	})
	t.Run("named stream and topic", func(t *testing.T) {
		conf := c.MustSend(wire.NamedID("s1"), wire.NamedID("t1"), wire.PartitioningByID(3), batch)
		if conf.StreamID != 1 || conf.TopicID != 1 || conf.PartitionID != 3 {
			t.Fatalf("confirmation %+v", conf)
		}
	})
	t.Run("permission", func(t *testing.T) {
		s.Catalog.Deny(0, catalog.ActionSend)
		ExpectStatus(t, c.SendMessages(SendBody(stream1, topic1, wire.PartitioningByID(0), batch)), wire.ErrUnauthorized.Code)
		_, f := c.Poll(pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 1, false))
		if f.Reply.Status != 0 {
			t.Fatalf("poll denied by a send denial: %v", f)
		}
		s.Catalog.Deny(0, catalog.ActionPoll)
		ExpectStatus(t, f2(c.Poll(pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 1, false))), wire.ErrUnauthorized.Code)
	})
}

func f2(_ wire.PolledMessages, f Frame) Frame { return f }

// TestSendDuplicateWindow: a retried send (same client, request number and
// batch) is answered with zero confirmations and not appended; the same
// request number with another batch is a new request (older SDKs do not
// advance the counter for partition operations).
func TestSendDuplicateWindow(t *testing.T) {
	s := startWithTopic(t, 1, wire.DefaultTopicSettings())
	c := s.Dial(t)
	c.LoginRoot()
	body := SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 1, Payloads(2, 16, "w")...))
	c.Next = 7
	first := c.SendMessages(body)
	var r wire.SendMessagesReply
	if err := r.Decode(first.Body); err != nil || len(r.Confirmations) != 1 || r.Confirmations[0].BaseOffset != 0 {
		t.Fatalf("first send: %v %+v", err, r)
	}
	c.Next = 7
	retry := c.SendMessages(body)
	if retry.Reply.Status != 0 || len(retry.Body) != 4 || binary.LittleEndian.Uint32(retry.Body) != 0 {
		t.Fatalf("retry answered %v body % x, want zero confirmations", retry, retry.Body)
	}
	if err := r.Decode(retry.Body); err != nil || len(r.Confirmations) != 0 {
		t.Fatalf("retry reply does not decode as an SDK would: %v", err)
	}
	// Another client id sending the same bytes is appended.
	d := s.Dial(t)
	d.LoginRoot()
	d.Next = 7
	if got := d.SendMessages(body); len(got.Body) != 24 || binary.LittleEndian.Uint64(got.Body[16:]) != 2 {
		t.Fatalf("other client: %v % x", got, got.Body)
	}
	// Same request number, different batch: executed.
	other := SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 50, Payloads(1, 16, "o")...))
	c.Next = 7
	if got := c.SendMessages(other); len(got.Body) != 24 || binary.LittleEndian.Uint64(got.Body[16:]) != 4 {
		t.Fatalf("same number, new batch: %v % x", got, got.Body)
	}
	p := c.MustPoll(pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.FirstStrategy(), 100, false))
	if p.Count != 5 || p.CurrentOffset != 4 {
		t.Fatalf("stored %d messages (current %d), want 5", p.Count, p.CurrentOffset)
	}
	// A request 128 or more ids below the watermark counts as committed.
	c.Next = 7 + 200
	if got := c.SendMessages(other); len(got.Body) != 24 {
		t.Fatalf("new high request: %v", got)
	}
	c.Next = 7 + 200 - 128
	if got := c.SendMessages(SendBody(stream1, topic1, wire.PartitioningByID(0), Batch(t, 90, Payloads(1, 16, "z")...))); len(got.Body) != 4 {
		t.Fatalf("request below the window: %v % x", got, got.Body)
	}
}
