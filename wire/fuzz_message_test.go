package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// fuzzBody decodes data into a fresh value and, when it decodes, checks
// that encoding it and decoding again gives an equal value and the same
// bytes; for a request body that ignores trailing bytes, the consumed
// prefix of data (as long as the encoding) must decode to the same value
// on its own. It returns the decoded value and whether data decoded.
func fuzzBody[B Body](t *testing.T, data []byte, fresh func() B) (B, bool) {
	t.Helper()
	x := fresh()
	if err := x.Decode(data); err != nil {
		return x, false
	}
	enc := x.AppendTo(nil)
	if prefixDecoded(x) {
		p := fresh()
		if len(enc) > len(data) || p.Decode(data[:len(enc)]) != nil {
			t.Fatalf("the %d-byte prefix of %x does not decode alone", len(enc), data)
		}
		if d := cmpDiff(x, p); d != "" {
			t.Fatalf("the consumed prefix decodes differently (-whole +prefix):\n%s", d)
		}
	}
	y := fresh()
	if err := y.Decode(enc); err != nil {
		t.Fatalf("re-decode of %x: %v", enc, err)
	}
	if d := cmpDiff(x, y); d != "" {
		t.Fatalf("decode(encode(x)) != x (-x +y):\n%s", d)
	}
	if again := y.AppendTo(nil); !bytes.Equal(again, enc) {
		t.Fatalf("re-encode differs:\n%x\n%x", enc, again)
	}
	return x, true
}

// fuzzSeedBatches are producer and stamped batches of a few shapes.
func fuzzSeedBatches(f *testing.F) [][]byte {
	var out [][]byte
	for _, n := range []int{1, 3, 7} {
		b := testBatch(f, testMessages(n, 4))
		out = append(out, b)
		s := bytes.Clone(b)
		v, _ := ValidateBatch(s)
		v.Stamp(3, 100, 1700000000123456)
		out = append(out, s)
	}
	return out
}

func FuzzValidateBatch(f *testing.F) {
	for _, b := range fuzzSeedBatches(f) {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add(make([]byte, BatchHeaderSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkValidatedBatch(t, data)
		if len(data) >= BatchHeaderSize {
			// Re-sign so the fuzzer explores layouts past the checksums.
			b := bytes.Clone(data)
			resign(b)
			checkValidatedBatch(t, b)
		}
	})
}

// checkValidatedBatch validates data and, when it passes, checks every
// property a valid batch must have.
func checkValidatedBatch(t *testing.T, data []byte) {
	v, err := ValidateBatch(data)
	if err != nil {
		if v.Len() != 0 {
			t.Fatalf("error %v with a view", err)
		}
		return
	}
	p, rest, err := ParseBatch(data)
	if err != nil || len(rest) != 0 || p.Len() != v.Len() {
		t.Fatalf("ParseBatch disagrees: %v", err)
	}
	if BatchChecksum(data) != v.Checksum() {
		t.Fatalf("stored checksum differs from BatchChecksum")
	}
	n := 0
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		if m.ComputeChecksum() != m.Checksum() {
			t.Fatalf("frame %d checksum", n)
		}
		if MessageHeaderSize+len(m.Payload())+len(m.UserHeaders()) != len(m.Bytes()) {
			t.Fatalf("frame %d lengths", n)
		}
		n++
	}
	if n == 0 || uint32(n) != v.MessageCount() {
		t.Fatalf("walked %d frames, count %d", n, v.MessageCount())
	}
	for _, r := range [][2]int{{0, n}, {0, 1}, {n - 1, 1}, {n / 2, n}} {
		s, err := ValidateBatch(v.AppendSlice(nil, r[0], r[1]))
		if err != nil {
			t.Fatalf("slice %v: %v", r, err)
		}
		if want := min(r[1], n-r[0]); s.MessageCount() != uint32(want) {
			t.Fatalf("slice %v has %d frames", r, s.MessageCount())
		}
	}
	stamped := bytes.Clone(data)
	sv, _, _ := ParseBatch(stamped)
	sv.Stamp(1, 2, 3)
	if _, err := ValidateBatch(stamped); err != nil {
		t.Fatalf("stamped batch: %v", err)
	}
	body := (&SendMessages{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: BalancedPartitioning(), MessagesCount: v.MessageCount(), Batch: data}).AppendTo(nil)
	var s SendMessages
	if _, err := s.Admit(body); err != nil {
		t.Fatalf("Admit of a valid batch: %v", err)
	}
}

func FuzzParseBatch(f *testing.F) {
	for _, b := range fuzzSeedBatches(f) {
		f.Add(b)
		f.Add(append(bytes.Clone(b), b...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Views over arbitrary bytes never panic.
		raw := Batch{b: bytes.Clone(data)}
		it := raw.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			_ = m.Header()
			_, _ = m.Payload(), m.UserHeaders()
		}
		_ = raw.ComputeChecksum()
		_, _ = raw.Select(0, 10)
		_ = raw.AppendSlice(nil, 1, 2)
		raw.Stamp(1, 2, 3)

		v, rest, err := ParseBatch(data)
		if err != nil {
			return
		}
		if v.Len()+len(rest) != len(data) || !bytes.Equal(v.Bytes(), data[:v.Len()]) {
			t.Fatalf("view/rest split")
		}
		var h BatchHeader
		if err := h.Decode(v.Bytes()[:BatchHeaderSize]); err != nil || h != v.Header() {
			t.Fatalf("header decode: %v", err)
		}
		rebuilt := h.AppendTo(nil)
		n := 0
		it = v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			var mh MessageHeader
			if err := mh.Decode(m.Bytes()[:MessageHeaderSize]); err != nil || mh != m.Header() || mh.FrameLen() != uint64(len(m.Bytes())) {
				t.Fatalf("frame %d header: %v", n, err)
			}
			rebuilt = mh.AppendTo(rebuilt)
			rebuilt = append(rebuilt, m.Payload()...)
			rebuilt = append(rebuilt, m.UserHeaders()...)
			n++
		}
		if uint32(n) != v.MessageCount() || !bytes.Equal(rebuilt, v.Bytes()) {
			t.Fatalf("walk of %d frames does not rebuild the batch", n)
		}
	})
}

func FuzzUserHeaders(f *testing.F) {
	f.Add(mustHexF(f, contentTypeHex))
	f.Add([]byte{})
	f.Add(UserHeaders{{Key: Int32Header(1), Value: Float64Header(2)}, {Key: HeaderField{Kind: 99, Data: []byte{1}}, Value: BoolHeader(true)}}.AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, ok := fuzzBody(t, data, func() *UserHeaders { return &UserHeaders{} })
		pairs, verr := ValidateUserHeaders(data)
		if ok != (verr == nil) {
			t.Fatalf("Decode ok %v, ValidateUserHeaders %v", ok, verr)
		}
		it := IterUserHeaders(data)
		n := 0
		for p, more := it.Next(); more; p, more = it.Next() {
			_ = p.Key.Validate()
			_ = p.Value.Validate()
			_, _ = p.Value.Uint64()
			_, _ = p.Value.Int64()
			_, _ = p.Value.Float64()
			_, _ = p.Value.Bool()
			_, _ = p.Value.Text()
			n++
		}
		if !ok {
			if it.Err() == nil {
				t.Fatalf("iterator accepted a malformed block")
			}
			return
		}
		if it.Err() != nil || n != pairs || len(*h) != pairs {
			t.Fatalf("pairs %d, iterated %d, decoded %d, err %v", pairs, n, len(*h), it.Err())
		}
		if !bytes.Equal(h.AppendTo(nil), data) || h.EncodedLen() != len(data) {
			t.Fatalf("not byte exact")
		}
	})
}

func FuzzSendMessages(f *testing.F) {
	for _, part := range []Partitioning{BalancedPartitioning(), PartitioningByID(1), PartitioningByKey([]byte("k"))} {
		f.Add(testSend(f, part, testMessages(2, 3)).AppendTo(nil))
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var meta SendMessages
		_ = meta.DecodeMetadata(data)
		var adm SendMessages
		v, aerr := adm.Admit(data)
		s, ok := fuzzBody(t, data, func() *SendMessages { return &SendMessages{} })
		if aerr == nil {
			if !ok || !bytes.Equal(v.Bytes(), s.Batch) {
				t.Fatalf("Admit accepted what Decode refused")
			}
		}
		if ok && !bytes.Equal(s.AppendTo(nil), data) {
			t.Fatalf("not byte exact")
		}
	})
}

func FuzzSendMessagesReply(f *testing.F) {
	f.Add((&SendMessagesReply{Confirmations: []SendConfirmation{{1, 2, 0, 100}}}).AppendTo(nil))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := fuzzBody(t, data, func() *SendMessagesReply { return &SendMessagesReply{} })
		if ok && !bytes.Equal(r.AppendTo(nil), data) {
			t.Fatalf("not byte exact")
		}
	})
}

func FuzzPollMessages(f *testing.F) {
	f.Add((&PollMessages{Consumer: SingleConsumer(NumericID(9)), StreamID: NumericID(1), TopicID: NumericID(2), Partition: SomePartition(0), Strategy: NextStrategy(), Count: 10, AutoCommit: true}).AppendTo(nil))
	f.Add((&PollMessages{Consumer: GroupConsumer(NamedID("g")), StreamID: NamedID("orders"), TopicID: NamedID("events"), Strategy: OffsetStrategy(1000), Count: 100}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() *PollMessages { return &PollMessages{} })
	})
}

func FuzzPolledMessages(f *testing.F) {
	body, _ := testPollBody(f)
	f.Add(body)
	f.Add(AppendPollReplyHead(nil, 0, 0, 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := fuzzBody(t, data, func() *PolledMessages { return &PolledMessages{} })
		if !ok {
			return
		}
		if len(data) > 0 && !bytes.Equal(p.AppendTo(nil), data) {
			t.Fatalf("not byte exact")
		}
		n := 0
		it := p.Messages()
		for m, more := it.Next(); more; m, more = it.Next() {
			if len(m.Payload) > len(data) {
				t.Fatalf("payload longer than body")
			}
			n++
		}
		if uint32(n) != p.Count {
			t.Fatalf("iterated %d messages, count %d", n, p.Count)
		}
	})
}

func FuzzConsumerOffsets(f *testing.F) {
	c, s, tp := SingleConsumer(NumericID(9)), NumericID(1), NamedID("t")
	f.Add((&GetConsumerOffset{Consumer: c, StreamID: s, TopicID: tp, Partition: SomePartition(0)}).AppendTo(nil))
	f.Add((&StoreConsumerOffset{Consumer: c, StreamID: s, TopicID: tp, Offset: 41, Ack: AckQuorum}).AppendTo(nil))
	f.Add((&DeleteConsumerOffset{Consumer: GroupConsumer(NamedID("g1")), StreamID: s, TopicID: tp, Ack: AckQuorum}).AppendTo(nil))
	f.Add((&ConsumerOffset{PartitionID: 0, CurrentOffset: 102, StoredOffset: 41}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() *GetConsumerOffset { return &GetConsumerOffset{} })
		fuzzBody(t, data, func() *StoreConsumerOffset { return &StoreConsumerOffset{} })
		fuzzBody(t, data, func() *DeleteConsumerOffset { return &DeleteConsumerOffset{} })
		o, ok := fuzzBody(t, data, func() *ConsumerOffset { return &ConsumerOffset{} })
		got, found, err := DecodeConsumerOffsetReply(data)
		if (err == nil) != (ok || len(data) == 0) || found != ok || (ok && got != *o) {
			t.Fatalf("DecodeConsumerOffsetReply = %+v %v %v", got, found, err)
		}
	})
}

func FuzzPartitioning(f *testing.F) {
	f.Add([]byte{1, 0})
	f.Add([]byte{2, 4, 1, 0, 0, 0})
	f.Add([]byte{3, 3, 'k', 'e', 'y'})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := fuzzBody(t, data, func() *Partitioning { return &Partitioning{} })
		if ok {
			if err := p.Validate(); err != nil {
				t.Fatalf("decoded partitioning does not validate: %v", err)
			}
			if !bytes.Equal(p.AppendTo(nil), data) || p.EncodedLen() != len(data) {
				t.Fatalf("not byte exact")
			}
		}
	})
}

func FuzzPollingStrategy(f *testing.F) {
	f.Add(OffsetStrategy(1000).AppendTo(nil))
	f.Add(NextStrategy().AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := fuzzBody(t, data, func() *PollingStrategy { return &PollingStrategy{} })
		if ok && (s.Validate() != nil || !bytes.Equal(s.AppendTo(nil), data)) {
			t.Fatalf("decoded strategy not valid or not byte exact")
		}
	})
}

func FuzzConsumer(f *testing.F) {
	f.Add(SingleConsumer(NumericID(9)).AppendTo(nil))
	f.Add(GroupConsumer(NamedID("g1")).AppendTo(nil))
	f.Add(SomePartition(3).AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := fuzzBody(t, data, func() *Consumer { return &Consumer{} })
		if ok && (c.Validate() != nil || !bytes.Equal(c.AppendTo(nil), data) || c.EncodedLen() != len(data)) {
			t.Fatalf("decoded consumer not valid or not byte exact")
		}
		fuzzBody(t, data, func() *OptPartition { return &OptPartition{} })
	})
}

func FuzzFlushUnsavedBuffer(f *testing.F) {
	f.Add((&FlushUnsavedBuffer{StreamID: NumericID(1), TopicID: NamedID("t"), PartitionID: 3, Fsync: true}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzBody(t, data, func() *FlushUnsavedBuffer { return &FlushUnsavedBuffer{} })
	})
}

func FuzzBatchHeaders(f *testing.F) {
	b := testBatch(f, testMessages(1, 1))
	f.Add(b[:BatchHeaderSize])
	f.Add(b[BatchHeaderSize : BatchHeaderSize+MessageHeaderSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, ok := fuzzBody(t, data, func() *BatchHeader { return &BatchHeader{} }); ok && !bytes.Equal(h.AppendTo(nil), data) {
			t.Fatalf("batch header not byte exact")
		}
		if h, ok := fuzzBody(t, data, func() *MessageHeader { return &MessageHeader{} }); ok {
			if !bytes.Equal(h.AppendTo(nil), data) || binary.LittleEndian.Uint64(data[MessageOffReserved:]) != 0 {
				t.Fatalf("message header not byte exact")
			}
		}
	})
}

func mustHexF(f *testing.F, s string) []byte {
	f.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
