package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/zeebo/xxh3"
)

// Conformance checks for send, poll, consumer-offset and batch vectors.
var (
	messageRequestVectors = map[string]func(*testing.T, requestVector){
		"get_consumer_offset_consumer_partition": checkGetConsumerOffsetVector,
		"get_consumer_offset_group_no_partition": checkGetConsumerOffsetVector,
		"poll_messages_next":                     checkPollMessagesVector,
		"poll_messages_offset_no_partition":      checkPollMessagesVector,
		"store_consumer_offset": func(t *testing.T, v requestVector) {
			in := offsetInputs(t, v.Inputs)
			want := StoreConsumerOffset{Consumer: in.consumer, StreamID: in.stream, TopicID: in.topic, Partition: in.partition, Offset: in.Offset, Ack: OffsetAck(in.Ack)}
			checkBody(t, v.Body, &want, &StoreConsumerOffset{})
		},
		"delete_consumer_offset": func(t *testing.T, v requestVector) {
			in := offsetInputs(t, v.Inputs)
			want := DeleteConsumerOffset{Consumer: in.consumer, StreamID: in.stream, TopicID: in.topic, Partition: in.partition, Ack: OffsetAck(in.Ack)}
			checkBody(t, v.Body, &want, &DeleteConsumerOffset{})
		},
		"send_messages_3": func(t *testing.T, v requestVector) {
			in := offsetInputs(t, v.Inputs)
			var part struct {
				Partitioning struct {
					Kind        uint8  `json:"kind"`
					PartitionID uint32 `json:"partition_id"`
				} `json:"partitioning"`
			}
			if err := json.Unmarshal(v.Inputs, &part); err != nil {
				t.Fatal(err)
			}
			if part.Partitioning.Kind != uint8(PartitionByID) {
				t.Fatalf("partitioning kind %d", part.Partitioning.Kind)
			}
			src := findBatchVector(t, "send_3_messages")
			var want SendMessages
			want.StreamID, want.TopicID = in.stream, in.topic
			want.Partitioning = PartitioningByID(part.Partitioning.PartitionID)
			want.SetBatch(buildVectorBatch(t, src))
			checkBody(t, v.Body, &want, &SendMessages{})
			var s SendMessages
			batch, err := s.Admit(v.Body)
			if err != nil {
				t.Fatalf("admit: %v", err)
			}
			if batch.MessageCount() != 3 || !bytes.Equal(batch.Bytes(), mustHex(t, src.Batch.BatchHex)) {
				t.Errorf("admitted batch differs")
			}
		},
	}
	messageReplyVectors = map[string]func(*testing.T, replyVector){
		"send_messages_confirmation": func(t *testing.T, v replyVector) {
			var sdk struct {
				Confirmations []struct {
					StreamID    uint32 `json:"StreamId"`
					TopicID     uint32 `json:"TopicId"`
					PartitionID uint32 `json:"PartitionId"`
					BaseOffset  uint64
				}
			}
			if err := json.Unmarshal(v.SDKDecoded, &sdk); err != nil {
				t.Fatal(err)
			}
			var want SendMessagesReply
			for _, c := range sdk.Confirmations {
				want.Confirmations = append(want.Confirmations, SendConfirmation(c))
			}
			if len(want.Confirmations) != 1 {
				t.Fatalf("sdk decoded %d confirmations", len(want.Confirmations))
			}
			checkBody(t, v.Body, &want, &SendMessagesReply{})
		},
		"store_consumer_offset_ok": func(t *testing.T, v replyVector) {
			payload, err := SplitResult(v.Body)
			if err != nil || len(payload) != 0 {
				t.Fatalf("result section: payload %x, err %v", payload, err)
			}
			if got := AppendResultOK(nil); !bytes.Equal(got, v.Body) {
				t.Errorf("AppendResultOK = %x, want %x", got, v.Body)
			}
			checkBody(t, v.Payload, &Empty{}, &Empty{})
		},
		"get_consumer_offset": func(t *testing.T, v replyVector) {
			var sdk struct {
				PartitionID   uint32 `json:"partitionId"`
				CurrentOffset uint64 `json:"currentOffset"`
				StoredOffset  uint64 `json:"storedOffset"`
			}
			if err := json.Unmarshal(v.SDKDecoded, &sdk); err != nil {
				t.Fatal(err)
			}
			want := ConsumerOffset(sdk)
			checkBody(t, v.Payload, &want, &ConsumerOffset{})
			got, found, err := DecodeConsumerOffsetReply(v.Payload)
			if err != nil || !found || got != want {
				t.Errorf("DecodeConsumerOffsetReply = %+v, %v, %v", got, found, err)
			}
		},
	}
	messageBatchVectors = map[string]func(*testing.T, batchVector){
		"send_3_messages": func(t *testing.T, v batchVector) {
			bv := parseBatchVector(t, v)
			checkProducerBatchVector(t, bv, buildVectorBatch(t, bv))
		},
		"send_1_message_balanced_string_ids": func(t *testing.T, v batchVector) {
			bv := parseBatchVector(t, v)
			// The vector has no inputs; its description fixes them: one
			// message with id first byte 0xAA, payload "A", origin
			// timestamp 0, stream "s", topic "t", Balanced.
			batch, err := AppendBatch(nil, []Message{{ID: Uint128{Lo: 0xaa}, Payload: []byte("A")}})
			if err != nil {
				t.Fatal(err)
			}
			bv.stream, bv.topic, bv.part = NamedID("s"), NamedID("t"), BalancedPartitioning()
			checkProducerBatchVector(t, bv, batch)
		},
		"send_3_messages_stamped":            checkStampedBatchVector,
		"send_3_messages_stamped_partition3": checkStampedBatchVector,
		"poll_reply_body":                    checkPollReplyVector,
	}
)

// vectorInputs are the shared logical inputs of the consumer-offset, poll
// and send request vectors.
type vectorInputs struct {
	Consumer struct {
		ID   json.RawMessage `json:"id"`
		Kind uint8           `json:"kind"`
	} `json:"consumer"`
	StreamID    json.RawMessage `json:"stream_id"`
	TopicID     json.RawMessage `json:"topic_id"`
	PartitionID *uint32         `json:"partition_id"`
	Offset      uint64          `json:"offset"`
	Ack         uint8           `json:"ack"`
	Count       uint32          `json:"count"`
	AutoCommit  bool            `json:"auto_commit"`
	Strategy    struct {
		Kind  uint8  `json:"kind"`
		Value uint64 `json:"value"`
	} `json:"strategy"`

	consumer      Consumer
	stream, topic Identifier
	partition     OptPartition
}

func offsetInputs(t *testing.T, raw json.RawMessage) vectorInputs {
	t.Helper()
	var in vectorInputs
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("inputs: %v", err)
	}
	if len(in.Consumer.ID) > 0 {
		in.consumer = Consumer{Kind: ConsumerKind(in.Consumer.Kind), ID: vectorIdentifier(t, in.Consumer.ID)}
	}
	in.stream = vectorIdentifier(t, in.StreamID)
	in.topic = vectorIdentifier(t, in.TopicID)
	if in.PartitionID != nil {
		in.partition = SomePartition(*in.PartitionID)
	}
	return in
}

// vectorIdentifier turns a JSON number into a numeric identifier and a JSON
// string into a named one.
func vectorIdentifier(t *testing.T, raw json.RawMessage) Identifier {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return NamedID(s)
	}
	var n uint32
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("identifier %s: %v", raw, err)
	}
	return NumericID(n)
}

func checkGetConsumerOffsetVector(t *testing.T, v requestVector) {
	in := offsetInputs(t, v.Inputs)
	want := GetConsumerOffset{Consumer: in.consumer, StreamID: in.stream, TopicID: in.topic, Partition: in.partition}
	checkBody(t, v.Body, &want, &GetConsumerOffset{})
}

func checkPollMessagesVector(t *testing.T, v requestVector) {
	in := offsetInputs(t, v.Inputs)
	want := PollMessages{
		Consumer: in.consumer, StreamID: in.stream, TopicID: in.topic, Partition: in.partition,
		Strategy: PollingStrategy{Kind: PollingKind(in.Strategy.Kind), Value: in.Strategy.Value},
		Count:    in.Count, AutoCommit: in.AutoCommit,
	}
	checkBody(t, v.Body, &want, &PollMessages{})
}

// batchVectorData is the decoded form of a batches.json entry.
type batchVectorData struct {
	Name  string `json:"name"`
	Batch struct {
		ChecksumInputHex string `json:"batch_checksum_input_hex"`
		BatchHex         string `json:"batch_hex"`
		Frames           []struct {
			Index             int    `json:"index"`
			OffsetInBlob      int    `json:"frame_offset_in_blob"`
			Length            int    `json:"frame_length"`
			ChecksumHex       string `json:"checksum_u64_hex"`
			ChecksumInputHex  string `json:"checksum_input_hex"`
			IDHex             string `json:"id_hex"`
			OffsetDelta       uint32 `json:"offset_delta"`
			TimestampDelta    uint32 `json:"timestamp_delta"`
			PayloadLength     uint32 `json:"payload_length"`
			UserHeadersLength uint32 `json:"user_headers_length"`
			PayloadHex        string `json:"payload_hex"`
			UserHeadersHex    string `json:"user_headers_hex"`
		} `json:"frames"`
		Header struct {
			BaseOffset      uint64 `json:"base_offset"`
			BaseTimestamp   uint64 `json:"base_timestamp"`
			ChecksumHex     string `json:"batch_checksum_u64_hex"`
			BatchLength     uint64 `json:"batch_length"`
			MessageCount    uint32 `json:"message_count"`
			OriginTimestamp uint64 `json:"origin_timestamp"`
			PartitionID     uint64 `json:"partition_id"`
		} `json:"header"`
	} `json:"batch"`
	Inputs struct {
		Messages []struct {
			IDFirstByte     uint8  `json:"id_first_byte"`
			OriginTimestamp uint64 `json:"origin_timestamp"`
			Payload         string `json:"payload"`
			UserHeaders     []struct {
				Key       string `json:"key"`
				KeyKind   uint8  `json:"key_kind"`
				Value     string `json:"value"`
				ValueKind uint8  `json:"value_kind"`
			} `json:"user_headers"`
		} `json:"messages"`
		Partitioning struct {
			Kind        uint8  `json:"kind"`
			PartitionID uint32 `json:"partition_id"`
		} `json:"partitioning"`
		StreamID json.RawMessage `json:"stream_id"`
		TopicID  json.RawMessage `json:"topic_id"`
	} `json:"inputs"`
	MetadataHex     string `json:"metadata_hex"`
	MetadataLength  int    `json:"metadata_length"`
	SendBodyHex     string `json:"send_messages_body_hex"`
	PollBodyHex     string `json:"poll_body_hex"`
	DecodedMessages []struct {
		ChecksumHex     string `json:"checksum_u64_hex"`
		IDHex           string `json:"id_hex"`
		Offset          uint64 `json:"offset"`
		OriginTimestamp uint64 `json:"origin_timestamp"`
		PayloadHex      string `json:"payload_hex"`
		Timestamp       uint64 `json:"timestamp"`
		UserHeadersHex  string `json:"user_headers_hex"`
	} `json:"decoded_messages"`

	// Send metadata for producer vectors.
	stream, topic Identifier
	part          Partitioning
}

func parseBatchVector(t *testing.T, v batchVector) *batchVectorData {
	t.Helper()
	var d batchVectorData
	if err := json.Unmarshal(v.Raw, &d); err != nil {
		t.Fatalf("parse %s: %v", v.Name, err)
	}
	if len(d.Inputs.StreamID) > 0 {
		d.stream = vectorIdentifier(t, d.Inputs.StreamID)
		d.topic = vectorIdentifier(t, d.Inputs.TopicID)
		if d.Inputs.Partitioning.Kind != uint8(PartitionByID) {
			t.Fatalf("unexpected partitioning kind %d", d.Inputs.Partitioning.Kind)
		}
		d.part = PartitioningByID(d.Inputs.Partitioning.PartitionID)
	}
	return &d
}

// findBatchVector loads batches.json and returns the named entry.
func findBatchVector(t *testing.T, name string) *batchVectorData {
	t.Helper()
	var file struct {
		Vectors []json.RawMessage `json:"vectors"`
	}
	loadVectors(t, "batches.json", &file)
	for _, raw := range file.Vectors {
		var v batchVector
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if v.Name == name {
			v.Raw = raw
			return parseBatchVector(t, v)
		}
	}
	t.Fatalf("batch vector %s not found", name)
	return nil
}

// buildVectorBatch runs the producer builder on a vector's inputs.
func buildVectorBatch(t *testing.T, d *batchVectorData) []byte {
	t.Helper()
	var msgs []Message
	for _, m := range d.Inputs.Messages {
		var hdrs UserHeaders
		for _, h := range m.UserHeaders {
			hdrs = append(hdrs, UserHeader{
				Key:   HeaderField{Kind: HeaderKind(h.KeyKind), Data: []byte(h.Key)},
				Value: HeaderField{Kind: HeaderKind(h.ValueKind), Data: []byte(h.Value)},
			})
		}
		if err := hdrs.Validate(); err != nil {
			t.Fatalf("vector headers: %v", err)
		}
		msgs = append(msgs, Message{ID: Uint128{Lo: uint64(m.IDFirstByte)}, OriginTimestamp: m.OriginTimestamp, Payload: []byte(m.Payload), UserHeaders: hdrs.AppendTo(nil)})
	}
	if len(msgs) == 0 {
		t.Fatalf("vector %s has no messages", d.Name)
	}
	// Build twice into the same buffer: reuse must give identical bytes.
	buf, err := AppendBatch(make([]byte, 0, 16), msgs)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	again, err := AppendBatch(buf[:0], msgs)
	if err != nil || !bytes.Equal(again, buf) {
		t.Fatalf("rebuild into the same buffer differs (%v)", err)
	}
	return append([]byte(nil), again...)
}

func hexU64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		t.Fatalf("checksum hex %q: %v", s, err)
	}
	return v
}

// checkBatchBytes compares a batch to the vector's batch_hex and checks
// every documented field, checksum input and the view's decoded fields.
func checkBatchBytes(t *testing.T, d *batchVectorData, batch []byte) {
	t.Helper()
	want := mustHex(t, d.Batch.BatchHex)
	if !bytes.Equal(batch, want) {
		t.Fatalf("batch bytes:\n got %x\nwant %x", batch, want)
	}
	v, err := ValidateBatch(batch)
	if err != nil {
		t.Fatalf("ValidateBatch: %v", err)
	}
	vh := d.Batch.Header
	wantHdr := BatchHeader{
		PartitionID: vh.PartitionID, BaseOffset: vh.BaseOffset, BaseTimestamp: vh.BaseTimestamp,
		OriginTimestamp: vh.OriginTimestamp, BatchLength: vh.BatchLength,
		Checksum: hexU64(t, vh.ChecksumHex), MessageCount: vh.MessageCount,
	}
	if diff := cmpDiff(wantHdr, v.Header()); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	var dh BatchHeader
	if err := dh.Decode(batch[:BatchHeaderSize]); err != nil || dh != wantHdr {
		t.Errorf("BatchHeader.Decode = %+v, %v", dh, err)
	}
	if enc := wantHdr.AppendTo(nil); !bytes.Equal(enc, batch[:BatchHeaderSize]) {
		t.Errorf("BatchHeader.AppendTo differs")
	}
	// Batch checksum input: header fields then frame checksum fields.
	input := append(append([]byte(nil), batch[:40]...), batch[48:52]...)
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		input = append(input, m.Bytes()[:8]...)
	}
	if want := mustHex(t, d.Batch.ChecksumInputHex); !bytes.Equal(input, want) {
		t.Errorf("batch checksum input:\n got %x\nwant %x", input, want)
	}
	if got := BatchChecksum(batch); got != wantHdr.Checksum || xxh3.Hash(input) != got || v.ComputeChecksum() != got {
		t.Errorf("batch checksum %x, want %x", got, wantHdr.Checksum)
	}
	it = v.Messages()
	for i, f := range d.Batch.Frames {
		m, ok := it.Next()
		if !ok {
			t.Fatalf("view ends before frame %d", i)
		}
		if m.Index() != f.Index || m.Position() != f.OffsetInBlob || len(m.Bytes()) != f.Length {
			t.Errorf("frame %d: index %d position %d length %d", i, m.Index(), m.Position(), len(m.Bytes()))
		}
		if in := mustHex(t, f.ChecksumInputHex); !bytes.Equal(m.Bytes()[8:], in) {
			t.Errorf("frame %d checksum input differs", i)
		}
		sum := hexU64(t, f.ChecksumHex)
		if m.Checksum() != sum || m.ComputeChecksum() != sum || MessageChecksum(m.Bytes()) != sum {
			t.Errorf("frame %d checksum %x, want %x", i, m.Checksum(), sum)
		}
		id := mustHex(t, f.IDHex)
		wantMH := MessageHeader{
			Checksum: sum, ID: GetUint128(id), OffsetDelta: f.OffsetDelta, TimestampDelta: f.TimestampDelta,
			UserHeadersLength: f.UserHeadersLength, PayloadLength: f.PayloadLength,
		}
		if diff := cmpDiff(wantMH, m.Header()); diff != "" {
			t.Errorf("frame %d header (-want +got):\n%s", i, diff)
		}
		var mh MessageHeader
		if err := mh.Decode(m.Bytes()[:MessageHeaderSize]); err != nil || mh != wantMH || mh.FrameLen() != uint64(f.Length) {
			t.Errorf("frame %d MessageHeader.Decode = %+v, %v", i, mh, err)
		}
		if enc := wantMH.AppendTo(nil); !bytes.Equal(enc, m.Bytes()[:MessageHeaderSize]) {
			t.Errorf("frame %d MessageHeader.AppendTo differs", i)
		}
		if m.ID() != wantMH.ID || m.OffsetDelta() != f.OffsetDelta || m.TimestampDelta() != f.TimestampDelta {
			t.Errorf("frame %d accessors: id %v deltas %d/%d", i, m.ID(), m.OffsetDelta(), m.TimestampDelta())
		}
		if !bytes.Equal(m.Payload(), mustHex(t, f.PayloadHex)) || !bytes.Equal(m.UserHeaders(), mustHex(t, f.UserHeadersHex)) {
			t.Errorf("frame %d payload %x headers %x", i, m.Payload(), m.UserHeaders())
		}
		var uh UserHeaders
		if err := uh.Decode(m.UserHeaders()); err != nil || !bytes.Equal(uh.AppendTo(nil), m.UserHeaders()) {
			t.Errorf("frame %d user headers do not round-trip: %v", i, err)
		}
	}
	if _, ok := it.Next(); ok {
		t.Errorf("view has more frames than the vector")
	}
}

// checkProducerBatchVector checks a producer batch built from the
// vector's inputs and the SendMessages body carrying it.
func checkProducerBatchVector(t *testing.T, d *batchVectorData, built []byte) {
	t.Helper()
	checkBatchBytes(t, d, built)
	var s SendMessages
	s.StreamID, s.TopicID, s.Partitioning = d.stream, d.topic, d.part
	s.SetBatch(built)
	body := mustHex(t, d.SendBodyHex)
	checkBody(t, body, &s, &SendMessages{})
	if s.MetadataLen() != d.MetadataLength || !bytes.Equal(body[4:4+d.MetadataLength], mustHex(t, d.MetadataHex)) {
		t.Errorf("metadata length %d", s.MetadataLen())
	}
	var got SendMessages
	v, err := got.Admit(body)
	if err != nil {
		t.Fatalf("admit: %v", err)
	}
	if !bytes.Equal(v.Bytes(), built) || &v.Bytes()[0] != &body[4+d.MetadataLength] {
		t.Errorf("admitted batch is not a view of the body")
	}
}

// checkStampedBatchVector stamps the producer batch of send_3_messages
// with the vector's header values and compares the result.
func checkStampedBatchVector(t *testing.T, v batchVector) {
	d := parseBatchVector(t, v)
	batch := buildVectorBatch(t, findBatchVector(t, "send_3_messages"))
	view, err := ValidateBatch(batch)
	if err != nil {
		t.Fatal(err)
	}
	h := d.Batch.Header
	view.Stamp(h.PartitionID, h.BaseOffset, h.BaseTimestamp)
	checkBatchBytes(t, d, batch)
	// A stamped batch still passes admission checks with its stamped header.
	var s SendMessages
	s.StreamID, s.TopicID, s.Partitioning = NumericID(1), NumericID(2), PartitioningByID(uint32(h.PartitionID))
	s.SetBatch(batch)
	if _, err := s.Admit(s.AppendTo(nil)); err != nil {
		t.Errorf("admit stamped: %v", err)
	}
}

func checkPollReplyVector(t *testing.T, v batchVector) {
	d := parseBatchVector(t, v)
	body := mustHex(t, d.PollBodyHex)
	var p PolledMessages
	if err := p.Decode(body); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if p.PartitionID != 0 || p.CurrentOffset != 102 || p.Count != uint32(len(d.DecodedMessages)) {
		t.Errorf("head = %d/%d/%d", p.PartitionID, p.CurrentOffset, p.Count)
	}
	if got := p.AppendTo(nil); !bytes.Equal(got, body) {
		t.Errorf("re-encode differs")
	}
	stamped := findBatchVector(t, "send_3_messages_stamped")
	if !bytes.Equal(p.Records, mustHex(t, stamped.Batch.BatchHex)) {
		t.Errorf("records are not the stamped batch")
	}
	built := AppendPollReplyHead(nil, 0, 102, 3)
	if !bytes.Equal(append(built, p.Records...), body) {
		t.Errorf("AppendPollReplyHead differs")
	}
	it := p.Messages()
	for i, w := range d.DecodedMessages {
		m, ok := it.Next()
		if !ok {
			t.Fatalf("iterator ends at message %d", i)
		}
		want := PolledMessage{
			Offset: w.Offset, Timestamp: w.Timestamp, OriginTimestamp: w.OriginTimestamp,
			ID: GetUint128(mustHex(t, w.IDHex)), Checksum: hexU64(t, w.ChecksumHex),
			Payload: mustHex(t, w.PayloadHex), UserHeaders: mustHex(t, w.UserHeadersHex),
		}
		if diff := cmpDiff(want, m); diff != "" {
			t.Errorf("message %d (-want +got):\n%s", i, diff)
		}
	}
	if _, ok := it.Next(); ok {
		t.Errorf("iterator yields more messages than decoded_messages")
	}
	if binary.LittleEndian.Uint32(body[12:]) != 3 {
		t.Errorf("messages_count field")
	}
}
