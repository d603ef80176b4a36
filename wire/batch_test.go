package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/zeebo/xxh3"
)

// testMessages returns n messages with distinct ids, payloads of
// payloadLen bytes (plus the index), user headers on every third message
// and out-of-order timestamps.
func testMessages(n, payloadLen int) []Message {
	hdrs := UserHeaders{{Key: StringHeader("k"), Value: Uint32Header(42)}}.AppendTo(nil)
	msgs := make([]Message, n)
	for i := range msgs {
		p := bytes.Repeat([]byte{byte(i)}, payloadLen+i%3)
		msgs[i] = Message{ID: Uint128{Lo: uint64(i + 1), Hi: 0xabc}, OriginTimestamp: 1_000_000 + uint64((i*7919)%1000), Payload: p}
		if i%3 == 1 {
			msgs[i].UserHeaders = hdrs
		}
	}
	return msgs
}

func testBatch(t testing.TB, msgs []Message) []byte {
	t.Helper()
	b, err := AppendBatch(nil, msgs)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return b
}

// resign recomputes every frame checksum and then the batch checksum, so
// a mutation reaches the check it targets.
func resign(b []byte) {
	blob := b[BatchHeaderSize:]
	for off := 0; ; {
		n, ok := frameLenAt(blob, off)
		if !ok {
			break
		}
		binary.LittleEndian.PutUint64(blob[off:], MessageChecksum(blob[off:off+n]))
		off += n
	}
	resignBatch(b)
}

func resignBatch(b []byte) { binary.LittleEndian.PutUint64(b[BatchOffChecksum:], BatchChecksum(b)) }

func TestBatchLayoutOffsets(t *testing.T) {
	h := BatchHeader{PartitionID: 1, BaseOffset: 2, BaseTimestamp: 3, OriginTimestamp: 4, BatchLength: 5, Checksum: 6, MessageCount: 7}
	b := h.AppendTo(nil)
	if len(b) != BatchHeaderSize {
		t.Fatalf("len %d", len(b))
	}
	for _, f := range []struct {
		off  int
		want uint64
	}{{0, 1}, {8, 2}, {16, 3}, {24, 4}, {32, 5}, {40, 6}} {
		if got := binary.LittleEndian.Uint64(b[f.off:]); got != f.want {
			t.Errorf("u64 at %d = %d, want %d", f.off, got, f.want)
		}
	}
	if binary.LittleEndian.Uint32(b[48:]) != 7 || !bytes.Equal(b[52:], make([]byte, 204)) {
		t.Errorf("count or reserved")
	}
	var d BatchHeader
	if err := d.Decode(b); err != nil || d != h {
		t.Errorf("decode = %+v, %v", d, err)
	}
	// Put clears reserved bytes of a reused buffer.
	dirty := bytes.Repeat([]byte{0xff}, BatchHeaderSize)
	h.Put(dirty)
	if !bytes.Equal(dirty, b) {
		t.Errorf("Put left stale bytes")
	}

	m := MessageHeader{Checksum: 1, ID: Uint128{Lo: 2, Hi: 3}, OffsetDelta: 4, TimestampDelta: 5, UserHeadersLength: 6, PayloadLength: 7}
	mb := m.AppendTo(nil)
	if len(mb) != MessageHeaderSize || m.FrameLen() != 48+13 {
		t.Fatalf("len %d framelen %d", len(mb), m.FrameLen())
	}
	want := "0100000000000000" + "0200000000000000" + "0300000000000000" + "04000000" + "05000000" + "06000000" + "07000000" + "0000000000000000"
	if !bytes.Equal(mb, mustHex(t, want)) {
		t.Errorf("message header %x", mb)
	}
	var md MessageHeader
	if err := md.Decode(mb); err != nil || md != m {
		t.Errorf("decode = %+v, %v", md, err)
	}
}

func TestBatchHeaderDecodeErrors(t *testing.T) {
	good := (&BatchHeader{}).AppendTo(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", good[:255]},
		{"long", append(append([]byte(nil), good...), 0)},
		{"reserved 52", func() []byte { b := bytes.Clone(good); b[52] = 1; return b }()},
		{"reserved 255", func() []byte { b := bytes.Clone(good); b[255] = 1; return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h BatchHeader
			if err := h.Decode(tc.b); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
	mgood := (&MessageHeader{}).AppendTo(nil)
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", mgood[:47]},
		{"long", append(bytes.Clone(mgood), 0)},
		{"reserved", func() []byte { b := bytes.Clone(mgood); b[47] = 1; return b }()},
	} {
		t.Run("message "+tc.name, func(t *testing.T) {
			var h MessageHeader
			if err := h.Decode(tc.b); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
}

func TestBuilderProducesValidBatch(t *testing.T) {
	msgs := testMessages(10, 20)
	b := testBatch(t, msgs)
	v, err := ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	minTS := msgs[0].OriginTimestamp
	for _, m := range msgs {
		minTS = min(minTS, m.OriginTimestamp)
	}
	h := v.Header()
	if h.PartitionID != 0 || h.BaseOffset != 0 || h.BaseTimestamp != 0 || h.OriginTimestamp != minTS ||
		h.BatchLength != uint64(len(b)) || h.MessageCount != 10 || h.Checksum != v.Checksum() {
		t.Errorf("header %+v", h)
	}
	it := v.Messages()
	for i := 0; ; i++ {
		m, ok := it.Next()
		if !ok {
			if i != len(msgs) {
				t.Errorf("walked %d frames", i)
			}
			break
		}
		w := msgs[i]
		if m.ID() != w.ID || m.OffsetDelta() != uint32(i) || uint64(m.TimestampDelta()) != w.OriginTimestamp-minTS ||
			!bytes.Equal(m.Payload(), w.Payload) || !bytes.Equal(m.UserHeaders(), w.UserHeaders) {
			t.Errorf("frame %d differs: %+v", i, m.Header())
		}
		if m.Checksum() != xxh3.Hash(m.Bytes()[8:]) {
			t.Errorf("frame %d checksum", i)
		}
	}
}

func TestBuilderIncrementalMatchesAppendBatch(t *testing.T) {
	msgs := testMessages(50, 100)
	want := testBatch(t, msgs)
	prefix := []byte("prefix")
	var bb BatchBuilder
	bb.Reset(append([]byte(nil), prefix...))
	for _, m := range msgs {
		if err := bb.Add(m.ID, m.OriginTimestamp, m.Payload, m.UserHeaders); err != nil {
			t.Fatal(err)
		}
	}
	if bb.Count() != 50 {
		t.Errorf("Count %d", bb.Count())
	}
	got, err := bb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], want) {
		t.Errorf("builder output differs from AppendBatch")
	}
	// The zero builder starts itself.
	var zero BatchBuilder
	if err := zero.Add(Uint128{Lo: 1}, 5, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if out, err := zero.Finish(); err != nil || len(out) != BatchHeaderSize+49 {
		t.Errorf("zero builder: %d bytes, %v", len(out), err)
	}
}

func TestBuilderReusesBuffer(t *testing.T) {
	msgs := testMessages(100, 64)
	buf := testBatch(t, msgs)
	if n := testing.AllocsPerRun(50, func() {
		var err error
		buf, err = AppendBatch(buf[:0], msgs)
		if err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendBatch into a large enough buffer allocates %v", n)
	}
}

func TestBuilderErrors(t *testing.T) {
	ok := Message{ID: Uint128{Lo: 1}, OriginTimestamp: 1 << 40, Payload: []byte("p")}
	for _, tc := range []struct {
		name string
		msgs []Message
		want error
	}{
		{"empty", nil, ErrInvalidMessagesCount},
		{"span over u32 µs", []Message{ok, {OriginTimestamp: ok.OriginTimestamp + MaxTimestampDelta + 1}}, ErrInvalidMessageTimestampDelta},
		{"span under u32 µs below", []Message{ok, {OriginTimestamp: ok.OriginTimestamp - MaxTimestampDelta - 1}}, ErrInvalidMessageTimestampDelta},
		{"payload too big", []Message{{Payload: make([]byte, MaxPayloadSize+1)}}, ErrTooBigMessagePayload},
		{"headers too big", []Message{{UserHeaders: make([]byte, MaxUserHeadersSize+1)}}, ErrTooBigUserHeaders},
		{"headers malformed", []Message{{UserHeaders: []byte{2, 1, 0, 0, 0, 'a'}}}, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := AppendBatch(dst, tc.msgs)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if !bytes.Equal(out, []byte("keep")) {
				t.Errorf("dst changed to %q", out)
			}
		})
	}
	t.Run("span exactly u32 µs", func(t *testing.T) {
		b, err := AppendBatch(nil, []Message{ok, {OriginTimestamp: ok.OriginTimestamp + MaxTimestampDelta}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := ValidateBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		it := v.Messages()
		it.Next()
		m, _ := it.Next()
		if m.TimestampDelta() != MaxTimestampDelta {
			t.Errorf("delta %d", m.TimestampDelta())
		}
	})
	t.Run("rejected message leaves batch intact", func(t *testing.T) {
		var bb BatchBuilder
		bb.Reset(nil)
		if err := bb.Add(ok.ID, ok.OriginTimestamp, ok.Payload, nil); err != nil {
			t.Fatal(err)
		}
		if err := bb.Add(ok.ID, 0, nil, nil); !errors.Is(err, ErrInvalidMessageTimestampDelta) {
			t.Fatalf("err = %v", err)
		}
		b, err := bb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if v, err := ValidateBatch(b); err != nil || v.MessageCount() != 1 {
			t.Errorf("after rejection: %v", err)
		}
	})
	t.Run("empty payload allowed", func(t *testing.T) {
		b, err := AppendBatch(nil, []Message{{ID: Uint128{Lo: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ValidateBatch(b); err != nil {
			t.Error(err)
		}
	})
}

func TestValidateBatchErrors(t *testing.T) {
	good := testBatch(t, testMessages(3, 10))
	frame1 := BatchHeaderSize + 48 + 10 // start of frame 1 (frame 0 payload is 10 bytes)
	for _, tc := range []struct {
		name   string
		mutate func(b []byte) []byte
		want   error
	}{
		{"ok", func(b []byte) []byte { return b }, nil},
		{"shorter than header", func(b []byte) []byte { return b[:255] }, ErrInvalidCommand},
		{"batch_length below 256", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[BatchOffLength:], 255)
			return b
		}, ErrInvalidCommand},
		{"reserved byte 52", func(b []byte) []byte { b[52] = 1; resign(b); return b }, ErrInvalidCommand},
		{"reserved byte 255", func(b []byte) []byte { b[255] = 1; resign(b); return b }, ErrInvalidCommand},
		{"batch_length past buffer", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[BatchOffLength:], uint64(len(b)+1))
			return b
		}, ErrInvalidCommand},
		{"batch_length huge", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[BatchOffLength:], 1<<63)
			return b
		}, ErrInvalidCommand},
		{"frame header does not fit", func(b []byte) []byte {
			b = append(b, make([]byte, 47)...)
			binary.LittleEndian.PutUint64(b[BatchOffLength:], uint64(len(b)))
			resign(b)
			return b
		}, ErrInvalidCommand},
		{"frame reserved non-zero", func(b []byte) []byte {
			b[frame1+MessageOffReserved] = 1
			resign(b)
			return b
		}, ErrInvalidCommand},
		{"payload past batch", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[frame1+MessageOffPayloadLength:], 1<<20)
			return b
		}, ErrInvalidCommand},
		{"user headers past batch", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[frame1+MessageOffUserHeadersLength:], 0xffffffff)
			return b
		}, ErrInvalidCommand},
		{"frame checksum", func(b []byte) []byte { b[frame1+MessageHeaderSize] ^= 1; return b }, ErrInvalidMessageChecksum},
		{"frame checksum field", func(b []byte) []byte { b[frame1] ^= 1; resignBatch(b); return b }, ErrInvalidMessageChecksum},
		{"offset_delta is covered", func(b []byte) []byte { b[frame1+MessageOffOffsetDelta] = 9; return b }, ErrInvalidMessageChecksum},
		{"frame checksum before batch checksum", func(b []byte) []byte {
			b[frame1+MessageHeaderSize] ^= 1
			b[BatchOffChecksum] ^= 1
			return b
		}, ErrInvalidMessageChecksum},
		{"message_count too small", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[BatchOffMessageCount:], 2)
			resign(b)
			return b
		}, ErrInvalidCommand},
		{"message_count too large", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[BatchOffMessageCount:], 4)
			return b
		}, ErrInvalidCommand},
		{"batch checksum", func(b []byte) []byte { b[BatchOffChecksum] ^= 1; return b }, ErrInvalidBatchChecksum},
		{"batch checksum covers partition_id", func(b []byte) []byte { b[BatchOffPartitionID] = 3; return b }, ErrInvalidBatchChecksum},
		{"batch checksum covers base_offset", func(b []byte) []byte { b[BatchOffBaseOffset] = 3; return b }, ErrInvalidBatchChecksum},
		{"batch checksum covers base_timestamp", func(b []byte) []byte { b[BatchOffBaseTimestamp] = 3; return b }, ErrInvalidBatchChecksum},
		{"batch checksum covers origin_timestamp", func(b []byte) []byte { b[BatchOffOriginTimestamp] ^= 1; return b }, ErrInvalidBatchChecksum},
		{"zero messages", func(b []byte) []byte {
			b = b[:BatchHeaderSize]
			binary.LittleEndian.PutUint64(b[BatchOffLength:], BatchHeaderSize)
			binary.LittleEndian.PutUint32(b[BatchOffMessageCount:], 0)
			resign(b)
			return b
		}, ErrInvalidCommand},
		{"trailing bytes", func(b []byte) []byte { return append(b, 0) }, ErrInvalidCommand},
		{"user headers are opaque", func(b []byte) []byte {
			// Frame 1 carries user headers: garbage there still passes.
			hl := binary.LittleEndian.Uint32(b[frame1+MessageOffUserHeadersLength:])
			pl := binary.LittleEndian.Uint32(b[frame1+MessageOffPayloadLength:])
			if hl == 0 {
				panic("test batch frame 1 has no user headers")
			}
			b[frame1+MessageHeaderSize+int(pl)] = 0
			resign(b)
			return b
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(bytes.Clone(good))
			v, err := ValidateBatch(b)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("ValidateBatch = %v, want %v", err, tc.want)
			}
			if err == nil && (v.Len() != len(b) || &v.Bytes()[0] != &b[0]) {
				t.Errorf("view does not alias the input")
			}
			if err != nil && v.Len() != 0 {
				t.Errorf("failed validation returned a view")
			}
			// ParseBatch agrees on layout (it ignores checksums and trailing bytes).
			_, rest, perr := ParseBatch(b)
			layoutOK := tc.want == nil || errors.Is(tc.want, ErrInvalidMessageChecksum) || errors.Is(tc.want, ErrInvalidBatchChecksum) || tc.name == "trailing bytes"
			if (perr == nil) != layoutOK {
				t.Errorf("ParseBatch = %v", perr)
			}
			if perr == nil && tc.name == "trailing bytes" && len(rest) != 1 {
				t.Errorf("rest %d", len(rest))
			}
		})
	}
}

func TestValidateBatchZeroAlloc(t *testing.T) {
	for _, n := range []int{1, 200} { // one-shot and streaming batch checksum
		b := testBatch(t, testMessages(n, 100))
		if a := testing.AllocsPerRun(20, func() {
			if _, err := ValidateBatch(b); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%d messages: %v allocs", n, a)
		}
	}
}

func TestBatchChecksumStreamingMatchesOneShot(t *testing.T) {
	for _, n := range []int{1, 122, 123, 124, 1000} {
		b := testBatch(t, testMessages(n, 1))
		input := append(append([]byte(nil), b[:40]...), b[48:52]...)
		v, _ := ValidateBatch(b)
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			input = append(input, m.Bytes()[:8]...)
		}
		if got, want := BatchChecksum(b), xxh3.Hash(input); got != want {
			t.Errorf("%d frames: %x, want %x", n, got, want)
		}
	}
}

func TestStamp(t *testing.T) {
	b := testBatch(t, testMessages(5, 3))
	frames := bytes.Clone(b[BatchHeaderSize:])
	v, err := ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	v.Stamp(7, 100, 1700000000123456)
	if v.PartitionID() != 7 || v.BaseOffset() != 100 || v.BaseTimestamp() != 1700000000123456 {
		t.Errorf("stamped header %+v", v.Header())
	}
	if !bytes.Equal(b[BatchHeaderSize:], frames) {
		t.Errorf("stamping changed frame bytes")
	}
	if _, err := ValidateBatch(b); err != nil {
		t.Errorf("stamped batch fails validation: %v", err)
	}
	Batch{}.Stamp(1, 2, 3) // no panic on the zero view
	if n := testing.AllocsPerRun(20, func() { v.Stamp(1, 2, 3) }); n != 0 {
		t.Errorf("Stamp allocates %v", n)
	}
}

func TestSelectAndSlice(t *testing.T) {
	msgs := testMessages(10, 5)
	b := testBatch(t, msgs)
	v, err := ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	v.Stamp(2, 100, 555)
	for _, tc := range []struct {
		name        string
		from        uint64
		max         uint32
		first, want int
	}{
		{"whole", 0, 100, 0, 10},
		{"whole exact", 100, 10, 0, 10},
		{"head", 100, 3, 0, 3},
		{"middle", 103, 4, 3, 4},
		{"tail", 107, 100, 7, 3},
		{"last", 109, 1, 9, 1},
		{"past end", 110, 5, 0, 0},
		{"count 0", 100, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, count := v.Select(tc.from, tc.max)
			if first != tc.first || count != tc.want {
				t.Fatalf("Select = %d,%d want %d,%d", first, count, tc.first, tc.want)
			}
			out := v.AppendSlice([]byte("x"), first, count)
			if count == 0 {
				if len(out) != 1 {
					t.Errorf("empty selection appended %d bytes", len(out)-1)
				}
				return
			}
			rec := out[1:]
			s, err := ValidateBatch(rec)
			if err != nil {
				t.Fatalf("slice fails validation: %v", err)
			}
			if count == 10 && !bytes.Equal(rec, b) {
				t.Errorf("whole batch not forwarded byte for byte")
			}
			h, orig := s.Header(), v.Header()
			if h.PartitionID != orig.PartitionID || h.BaseOffset != orig.BaseOffset || h.BaseTimestamp != orig.BaseTimestamp ||
				h.OriginTimestamp != orig.OriginTimestamp || h.MessageCount != uint32(count) || h.BatchLength != uint64(len(rec)) {
				t.Errorf("slice header %+v", h)
			}
			if !bytes.Equal(rec[BatchOffReserved:BatchHeaderSize], make([]byte, 204)) {
				t.Errorf("reserved bytes")
			}
			it := s.Messages()
			for i := 0; i < count; i++ {
				m, ok := it.Next()
				if !ok || m.OffsetDelta() != uint32(first+i) || m.ID() != msgs[first+i].ID || !bytes.Equal(m.Payload(), msgs[first+i].Payload) {
					t.Fatalf("slice frame %d differs", i)
				}
				if s.BaseOffset()+uint64(m.OffsetDelta()) != tc.from+uint64(i) && tc.from >= 100 {
					t.Errorf("absolute offset of frame %d", i)
				}
			}
			hdr, frames := v.AppendSliceHeader(nil, first, count)
			if !bytes.Equal(append(hdr, frames...), rec) {
				t.Errorf("AppendSliceHeader + frames differs from AppendSlice")
			}
		})
	}
	t.Run("clamps", func(t *testing.T) {
		if out := v.AppendSlice(nil, -5, 2); !bytes.Equal(out, v.AppendSlice(nil, 0, 2)) {
			t.Errorf("negative first not clamped")
		}
		if out := v.AppendSlice(nil, 8, 50); !bytes.Equal(out, v.AppendSlice(nil, 8, 2)) {
			t.Errorf("count not clamped")
		}
		if out := v.AppendSlice(nil, 10, 1); len(out) != 0 {
			t.Errorf("first past end appended %d bytes", len(out))
		}
		if out := (Batch{}).AppendSlice(nil, 0, 1); len(out) != 0 {
			t.Errorf("zero batch")
		}
	})
	t.Run("slice of a slice", func(t *testing.T) {
		s1, err := ValidateBatch(v.AppendSlice(nil, 2, 6))
		if err != nil {
			t.Fatal(err)
		}
		first, count := s1.Select(104, 2)
		if first != 2 || count != 2 {
			t.Fatalf("Select in slice = %d,%d", first, count)
		}
		s2, err := ValidateBatch(s1.AppendSlice(nil, first, count))
		if err != nil {
			t.Fatal(err)
		}
		it := s2.Messages()
		m, _ := it.Next()
		if s2.BaseOffset()+uint64(m.OffsetDelta()) != 104 {
			t.Errorf("first offset %d", s2.BaseOffset()+uint64(m.OffsetDelta()))
		}
	})
	dst := make([]byte, 0, len(b))
	if n := testing.AllocsPerRun(20, func() { dst = v.AppendSlice(dst[:0], 3, 4) }); n != 0 {
		t.Errorf("AppendSlice allocates %v", n)
	}
}

func TestBatchViewZeroValue(t *testing.T) {
	var v Batch
	if v.Len() != 0 || v.PartitionID() != 0 || v.MessageCount() != 0 || v.Header() != (BatchHeader{}) || v.Frames() != nil || v.ComputeChecksum() != 0 {
		t.Errorf("zero view")
	}
	it := v.Messages()
	if _, ok := it.Next(); ok {
		t.Errorf("zero view yields a frame")
	}
	if BatchChecksum(make([]byte, 255)) != 0 || MessageChecksum(make([]byte, 47)) != 0 {
		t.Errorf("short inputs hash to non-zero")
	}
}

func TestMessageIterZeroAlloc(t *testing.T) {
	b := testBatch(t, testMessages(100, 10))
	v, _ := ValidateBatch(b)
	n := testing.AllocsPerRun(20, func() {
		total := 0
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			total += len(m.Payload()) + len(m.UserHeaders())
		}
		if total == 0 {
			t.Fatal("no payload")
		}
	})
	if n != 0 {
		t.Errorf("walk allocates %v", n)
	}
}
