package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func testSend(t testing.TB, part Partitioning, msgs []Message) *SendMessages {
	t.Helper()
	s := &SendMessages{StreamID: NumericID(1), TopicID: NamedID("orders"), Partitioning: part}
	s.SetBatch(testBatch(t, msgs))
	return s
}

func TestSendMessagesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		part Partitioning
		n    int
	}{
		{"balanced", BalancedPartitioning(), 1},
		{"partition id", PartitioningByID(3), 5},
		{"key", PartitioningByKey([]byte("user-42")), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSend(t, tc.part, testMessages(tc.n, 8))
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			body := s.AppendTo(nil)
			if int(binary.LittleEndian.Uint32(body)) != s.MetadataLen() || s.MessagesCount != uint32(tc.n) {
				t.Errorf("metadata length %d, count %d", binary.LittleEndian.Uint32(body), s.MessagesCount)
			}
			checkBody(t, body, s, &SendMessages{})
			var got SendMessages
			if err := got.Decode(body); err != nil {
				t.Fatal(err)
			}
			if &got.Batch[0] != &body[4+s.MetadataLen()] {
				t.Errorf("decoded batch is a copy")
			}
			v, err := got.Admit(body)
			if err != nil || v.MessageCount() != uint32(tc.n) || &v.Bytes()[0] != &body[4+s.MetadataLen()] {
				t.Errorf("Admit = %v", err)
			}
		})
	}
	var s SendMessages
	s.SetBatch([]byte{1, 2, 3})
	if s.MessagesCount != 0 {
		t.Errorf("SetBatch on a short batch: count %d", s.MessagesCount)
	}
	for _, bad := range []SendMessages{
		{StreamID: NamedID(""), TopicID: NumericID(1), Partitioning: BalancedPartitioning()},
		{StreamID: NumericID(1), TopicID: Identifier{}, Partitioning: BalancedPartitioning()},
		{StreamID: NumericID(1), TopicID: NumericID(1), Partitioning: PartitioningByKey(nil)},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validates", bad)
		}
	}
}

func TestSendMessagesAdmitErrors(t *testing.T) {
	s := testSend(t, PartitioningByID(0), testMessages(3, 10))
	good := s.AppendTo(nil)
	ml := s.MetadataLen()
	batchAt := 4 + ml
	frame1 := batchAt + BatchHeaderSize + 48 + 10
	setML := func(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
	setCount := func(b []byte, v uint32) { binary.LittleEndian.PutUint32(b[batchAt-4:], v) }
	for _, tc := range []struct {
		name   string
		mutate func(b []byte) []byte
		want   error
		// layout is true when Decode (no checksums) must accept the body.
		layout bool
	}{
		{"ok", func(b []byte) []byte { return b }, nil, true},
		{"empty", func(b []byte) []byte { return nil }, ErrInvalidCommand, false},
		{"three bytes", func(b []byte) []byte { return b[:3] }, ErrInvalidCommand, false},
		{"metadata_length past body", func(b []byte) []byte { setML(b, uint32(len(b))); return b }, ErrInvalidCommand, false},
		{"metadata_length max", func(b []byte) []byte { setML(b, 0xffffffff); return b }, ErrInvalidCommand, false},
		{"metadata_length one short", func(b []byte) []byte { setML(b, uint32(ml-1)); return b }, ErrInvalidCommand, false},
		{"metadata_length one long", func(b []byte) []byte { setML(b, uint32(ml+1)); return b }, ErrInvalidCommand, false},
		{"bad stream identifier", func(b []byte) []byte { b[4] = 9; return b }, ErrInvalidCommand, false},
		{"bad partitioning", func(b []byte) []byte { b[4+6+8] = 7; return b }, ErrInvalidCommand, false},
		{"no batch", func(b []byte) []byte { return b[:batchAt] }, ErrInvalidCommand, false},
		{"batch header cut", func(b []byte) []byte { return b[:batchAt+100] }, ErrInvalidCommand, false},
		{"frame checksum", func(b []byte) []byte { b[frame1+MessageHeaderSize] ^= 1; return b }, ErrInvalidMessageChecksum, true},
		{"batch checksum", func(b []byte) []byte { b[batchAt+BatchOffChecksum] ^= 1; return b }, ErrInvalidBatchChecksum, true},
		{"metadata count differs", func(b []byte) []byte { setCount(b, 2); return b }, ErrInvalidCommand, false},
		{"batch checksum before metadata count", func(b []byte) []byte {
			setCount(b, 2)
			b[batchAt+BatchOffChecksum] ^= 1
			return b
		}, ErrInvalidBatchChecksum, false},
		{"zero messages", func(b []byte) []byte {
			b = b[:batchAt+BatchHeaderSize]
			setCount(b, 0)
			binary.LittleEndian.PutUint64(b[batchAt+BatchOffLength:], BatchHeaderSize)
			binary.LittleEndian.PutUint32(b[batchAt+BatchOffMessageCount:], 0)
			resignBatch(b[batchAt:])
			return b
		}, ErrInvalidCommand, false},
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }, ErrInvalidCommand, false},
		{"frame checksum before trailing bytes", func(b []byte) []byte {
			b[frame1+MessageHeaderSize] ^= 1
			return append(b, 0)
		}, ErrInvalidMessageChecksum, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.mutate(bytes.Clone(good))
			var got SendMessages
			_, err := got.Admit(body)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("Admit = %v, want %v", err, tc.want)
			}
			derr := got.Decode(body)
			if (derr == nil) != tc.layout {
				t.Errorf("Decode = %v, layout ok %v", derr, tc.layout)
			}
			if derr != nil && !errors.Is(derr, ErrInvalidCommand) {
				t.Errorf("Decode error %v is not InvalidCommand", derr)
			}
		})
	}
}

func TestSendMessagesAdmitZeroAlloc(t *testing.T) {
	s := testSend(t, PartitioningByID(0), testMessages(50, 100))
	s.TopicID = NumericID(2)
	body := s.AppendTo(nil)
	var got SendMessages
	if n := testing.AllocsPerRun(20, func() {
		if _, err := got.Admit(body); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Admit allocates %v", n)
	}
}

func TestSendMessagesReply(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    SendMessagesReply
	}{
		{"none", SendMessagesReply{}},
		{"one", SendMessagesReply{Confirmations: []SendConfirmation{{StreamID: 1, TopicID: 2, PartitionID: 0, BaseOffset: 100}}}},
		{"two", SendMessagesReply{Confirmations: []SendConfirmation{{1, 2, 3, 4}, {5, 6, 7, 1 << 60}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := tc.r.AppendTo(nil)
			if len(wire) != 4+SendConfirmationSize*len(tc.r.Confirmations) {
				t.Errorf("length %d", len(wire))
			}
			r := tc.r
			checkBody(t, wire, &r, &SendMessagesReply{})
		})
	}
	one := (&SendMessagesReply{Confirmations: []SendConfirmation{{1, 2, 3, 4}}}).AppendTo(nil)
	for _, tc := range []struct {
		name string
		wire []byte
	}{
		{"empty", nil},
		{"short count", []byte{1, 0}},
		{"count without entries", []byte{1, 0, 0, 0}},
		{"short entry", one[:len(one)-1]},
		{"trailing", append(bytes.Clone(one), 0)},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r SendMessagesReply
			if err := r.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
	r := SendMessagesReply{Confirmations: make([]SendConfirmation, 0, 2)}
	if n := testing.AllocsPerRun(20, func() { _ = r.Decode(one) }); n != 0 {
		t.Errorf("Decode into capacity allocates %v", n)
	}
}

func TestPollMessagesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    PollMessages
	}{
		{"next auto commit", PollMessages{Consumer: SingleConsumer(NumericID(9)), StreamID: NumericID(1), TopicID: NumericID(2), Partition: SomePartition(0), Strategy: NextStrategy(), Count: 10, AutoCommit: true}},
		{"group offset", PollMessages{Consumer: GroupConsumer(NamedID("g")), StreamID: NamedID("s"), TopicID: NamedID("t"), Strategy: OffsetStrategy(1000), Count: 100}},
		{"timestamp", PollMessages{Consumer: SingleConsumer(NamedID("c")), StreamID: NumericID(0), TopicID: NumericID(0), Partition: SomePartition(7), Strategy: TimestampStrategy(123), Count: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			wire := p.AppendTo(nil)
			checkBody(t, wire, &p, &PollMessages{})
		})
	}
	good := (&PollMessages{Consumer: SingleConsumer(NumericID(9)), StreamID: NumericID(1), TopicID: NumericID(2), Strategy: FirstStrategy(), Count: 1}).AppendTo(nil)
	t.Run("auto_commit non-zero is true", func(t *testing.T) {
		b := bytes.Clone(good)
		b[len(b)-1] = 2
		var p PollMessages
		if err := p.Decode(b); err != nil || !p.AutoCommit {
			t.Errorf("Decode = %v, auto commit %v", err, p.AutoCommit)
		}
	})
	for _, tc := range []struct {
		name string
		wire []byte
	}{
		{"empty", nil},
		{"no auto_commit", good[:len(good)-1]},
		{"bad consumer", append([]byte{5}, good[1:]...)},
		{"bad strategy", func() []byte { b := bytes.Clone(good); b[len(b)-14] = 9; return b }()},
		{"bad partition flag", func() []byte { b := bytes.Clone(good); b[len(b)-19] = 2; return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p PollMessages
			if err := p.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
}

// testPollBody builds a poll reply holding a whole stamped batch and a
// slice of another one.
func testPollBody(t testing.TB) (body []byte, msgs []Message) {
	t.Helper()
	msgs = testMessages(6, 7)
	b1 := testBatch(t, msgs[:3])
	v1, err := ValidateBatch(b1)
	if err != nil {
		t.Fatal(err)
	}
	v1.Stamp(4, 10, 111)
	b2 := testBatch(t, msgs[3:])
	v2, err := ValidateBatch(b2)
	if err != nil {
		t.Fatal(err)
	}
	v2.Stamp(4, 13, 222)
	body = AppendPollReplyHead(nil, 4, 15, 5)
	body = append(body, b1...)
	body = v2.AppendSlice(body, 1, 2)
	return body, msgs
}

func TestPolledMessages(t *testing.T) {
	body, msgs := testPollBody(t)
	var p PolledMessages
	if err := p.Decode(body); err != nil {
		t.Fatal(err)
	}
	if p.PartitionID != 4 || p.CurrentOffset != 15 || p.Count != 5 || &p.Records[0] != &body[PollReplyHeadSize] {
		t.Errorf("head %d/%d/%d", p.PartitionID, p.CurrentOffset, p.Count)
	}
	checkBody(t, body, &p, &PolledMessages{})
	type want struct {
		offset, ts uint64
		m          Message
	}
	wants := []want{{10, 111, msgs[0]}, {11, 111, msgs[1]}, {12, 111, msgs[2]}, {14, 222, msgs[4]}, {15, 222, msgs[5]}}
	it := p.Messages()
	for i, w := range wants {
		m, ok := it.Next()
		if !ok {
			t.Fatalf("iterator ends at %d", i)
		}
		if m.Offset != w.offset || m.Timestamp != w.ts || m.OriginTimestamp != w.m.OriginTimestamp || m.ID != w.m.ID ||
			!bytes.Equal(m.Payload, w.m.Payload) || !bytes.Equal(m.UserHeaders, w.m.UserHeaders) {
			t.Errorf("message %d = %+v", i, m)
		}
	}
	if _, ok := it.Next(); ok {
		t.Errorf("extra message")
	}
	bi := p.Batches()
	n := 0
	for b, ok := bi.Next(); ok; b, ok = bi.Next() {
		n++
		if _, err := ValidateBatch(b.Bytes()); err != nil {
			t.Errorf("record %d: %v", n, err)
		}
	}
	if n != 2 {
		t.Errorf("%d records", n)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := p.Decode(body); err != nil {
			t.Fatal(err)
		}
		it := p.Messages()
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
	}); a != 0 {
		t.Errorf("decode + iterate allocates %v", a)
	}
}

func TestPolledMessagesEmpty(t *testing.T) {
	p := PolledMessages{PartitionID: 9, Count: 1}
	if err := p.Decode(nil); err != nil || p.PartitionID != 0 || p.Count != 0 || p.Records != nil {
		t.Errorf("empty body = %+v, %v", p, err)
	}
	head := AppendPollReplyHead(nil, PollResyncPartition, 0, 0)
	checkBody(t, head, &PolledMessages{PartitionID: PollResyncPartition}, &PolledMessages{})
	it := p.Messages()
	if _, ok := it.Next(); ok {
		t.Errorf("empty reply yields a message")
	}
}

func TestPolledMessagesErrors(t *testing.T) {
	body, _ := testPollBody(t)
	first := PollReplyHeadSize + BatchHeaderSize
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
		want   error
	}{
		{"checksums pass through", func(b []byte) []byte {
			b[first+MessageHeaderSize] ^= 1
			b[PollReplyHeadSize+BatchOffChecksum] ^= 1
			return b
		}, nil},
		{"head cut", func(b []byte) []byte { return b[:15] }, ErrInvalidCommand},
		{"count too high", func(b []byte) []byte { b[12] = 6; return b }, ErrInvalidCommand},
		{"count too low", func(b []byte) []byte { b[12] = 4; return b }, ErrInvalidCommand},
		{"count without records", func(b []byte) []byte { return b[:PollReplyHeadSize] }, ErrInvalidCommand},
		{"partial record", func(b []byte) []byte { return append(b, make([]byte, 100)...) }, ErrInvalidCommand},
		{"record cut", func(b []byte) []byte { return b[:len(b)-1] }, ErrInvalidCommand},
		{"record reserved", func(b []byte) []byte { b[PollReplyHeadSize+100] = 1; return b }, ErrInvalidCommand},
		{"frame reserved", func(b []byte) []byte { b[first+MessageOffReserved] = 1; return b }, ErrInvalidCommand},
		{"record message_count", func(b []byte) []byte { b[PollReplyHeadSize+BatchOffMessageCount] = 2; b[12] = 4; return b }, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p PolledMessages
			err := p.Decode(tc.mutate(bytes.Clone(body)))
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFlushUnsavedBuffer(t *testing.T) {
	f := FlushUnsavedBuffer{StreamID: NumericID(1), TopicID: NamedID("t"), PartitionID: 3, Fsync: true}
	wire := mustHex(t, "010401000000"+"020174"+"03000000"+"01")
	checkBody(t, wire, &f, &FlushUnsavedBuffer{})
	g := FlushUnsavedBuffer{StreamID: NumericID(1), TopicID: NumericID(2)}
	checkBody(t, g.AppendTo(nil), &g, &FlushUnsavedBuffer{})
	b := bytes.Clone(wire)
	b[len(b)-1] = 7
	var d FlushUnsavedBuffer
	if err := d.Decode(b); err != nil || !d.Fsync {
		t.Errorf("fsync 7 = %v, %v", d.Fsync, err)
	}
	for _, bad := range [][]byte{nil, wire[:len(wire)-1]} {
		if err := d.Decode(bad); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("Decode(%x) = %v", bad, err)
		}
	}
	if err := d.Decode(append(bytes.Clone(wire), 0)); err != nil || d != f {
		t.Errorf("trailing byte: %+v, %v", d, err)
	}
}
