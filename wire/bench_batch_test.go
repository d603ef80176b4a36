package wire

import (
	"crypto/rand"
	"testing"

	"github.com/zeebo/xxh3"
)

// benchBatchMessages is the benchmark workload: 1000 messages of 1 KiB.
const (
	benchMessages    = 1000
	benchPayloadSize = 1024
)

func benchMsgs() []Message {
	msgs := make([]Message, benchMessages)
	for i := range msgs {
		p := make([]byte, benchPayloadSize)
		_, _ = rand.Read(p)
		msgs[i] = Message{ID: Uint128{Lo: uint64(i + 1)}, OriginTimestamp: 1_700_000_000_000_000 + uint64(i), Payload: p}
	}
	return msgs
}

func benchBatch(b *testing.B) ([]byte, []Message) {
	b.Helper()
	msgs := benchMsgs()
	batch, err := AppendBatch(nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	return batch, msgs
}

// reportMsgs adds a messages-per-second metric for n messages per op.
func reportMsgs(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkValidateBatch(b *testing.B) {
	batch, _ := benchBatch(b)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
	reportMsgs(b, benchMessages)
}

// BenchmarkXXH3Frames is the baseline for BenchmarkValidateBatch: only
// the frame hashing, over the same frames.
func BenchmarkXXH3Frames(b *testing.B) {
	batch, _ := benchBatch(b)
	v, err := ValidateBatch(batch)
	if err != nil {
		b.Fatal(err)
	}
	var frames [][]byte
	it := v.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		frames = append(frames, m.Bytes()[8:])
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	var acc uint64
	for b.Loop() {
		for _, f := range frames {
			acc += xxh3.Hash(f)
		}
	}
	if acc == 0 {
		b.Log("zero accumulator")
	}
	reportMsgs(b, benchMessages)
}

func BenchmarkAdmitSendMessages(b *testing.B) {
	batch, _ := benchBatch(b)
	s := SendMessages{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: PartitioningByID(0)}
	s.SetBatch(batch)
	body := s.AppendTo(nil)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var d SendMessages
	for b.Loop() {
		if _, err := d.Admit(body); err != nil {
			b.Fatal(err)
		}
	}
	reportMsgs(b, benchMessages)
}

func BenchmarkStampBatch(b *testing.B) {
	batch, _ := benchBatch(b)
	v, err := ValidateBatch(batch)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	off := uint64(0)
	for b.Loop() {
		v.Stamp(3, off, 1_700_000_000_123_456)
		off += benchMessages
	}
	reportMsgs(b, benchMessages)
}

func BenchmarkSliceBatch(b *testing.B) {
	batch, _ := benchBatch(b)
	v, err := ValidateBatch(batch)
	if err != nil {
		b.Fatal(err)
	}
	v.Stamp(0, 1000, 1)
	first, count := v.Select(1250, 500)
	dst := make([]byte, 0, len(batch))
	dst = v.AppendSlice(dst, first, count)
	b.SetBytes(int64(len(dst)))
	b.ReportAllocs()
	for b.Loop() {
		first, count = v.Select(1250, 500)
		dst = v.AppendSlice(dst[:0], first, count)
	}
	reportMsgs(b, count)
}

func BenchmarkBuildBatch(b *testing.B) {
	batch, msgs := benchBatch(b)
	buf := make([]byte, 0, len(batch))
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendBatch(buf[:0], msgs); err != nil {
			b.Fatal(err)
		}
	}
	reportMsgs(b, benchMessages)
}

func BenchmarkWalkBatch(b *testing.B) {
	batch, _ := benchBatch(b)
	v, err := ValidateBatch(batch)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	total := 0
	for b.Loop() {
		it := v.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			total += len(m.Payload()) + int(m.OffsetDelta())
		}
	}
	if total == 0 {
		b.Fatal("walk saw nothing")
	}
	reportMsgs(b, benchMessages)
}

func BenchmarkDecodePolledMessages(b *testing.B) {
	batch, _ := benchBatch(b)
	v, err := ValidateBatch(batch)
	if err != nil {
		b.Fatal(err)
	}
	v.Stamp(0, 0, 1)
	body := AppendPollReplyHead(nil, 0, benchMessages-1, benchMessages)
	body = append(body, batch...)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var p PolledMessages
	for b.Loop() {
		if err := p.Decode(body); err != nil {
			b.Fatal(err)
		}
		it := p.Messages()
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
	}
	reportMsgs(b, benchMessages)
}
