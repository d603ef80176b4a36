package itest

import (
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// Benchmark shape (issue "Partition plane"): batches of 1000 messages of
// 1 KB, one producer or one consumer over real loopback TCP, client and
// broker in this process on the 2-core machine. MB/s counts message
// payload bytes (b.SetBytes); allocs/op covers client and broker for one
// batch (1000 messages).
const (
	benchMessages = 1000
	benchPayload  = 1024
	// requestOffset is the byte offset of `request` in a request header.
	requestOffset = 168
)

// rawProducer sends one pre-encoded SEND_MESSAGES frame again and again,
// patching the request number so the duplicate window sees new requests,
// and reads the 24-byte confirmation without allocating.
type rawProducer struct {
	conn  net.Conn
	frame []byte
	req   uint64
	reply [wire.HeaderSize + 64]byte
}

func newRawProducer(b *testing.B, s *Server) *rawProducer {
	b.Helper()
	c := s.Dial(b)
	c.LoginRoot()
	batch := Batch(b, 1, Payloads(benchMessages, benchPayload, "bench")...)
	frame := EncodeRequest(c.SendHeader(wire.OpSendMessages), SendBody(stream1, topic1, wire.PartitioningByID(0), batch))
	return &rawProducer{conn: c.Conn, frame: frame, req: c.Next}
}

func (p *rawProducer) send(b *testing.B) uint64 {
	p.req++
	binary.LittleEndian.PutUint64(p.frame[requestOffset:], p.req)
	if _, err := p.conn.Write(p.frame); err != nil {
		b.Fatal(err)
	}
	r := p.reply[:wire.HeaderSize+24]
	if _, err := io.ReadFull(p.conn, r); err != nil {
		b.Fatal(err)
	}
	var h wire.ReplyHeader
	if err := h.Decode(r[:wire.HeaderSize]); err != nil || h.Status != 0 || h.Size != uint32(len(r)) {
		b.Fatalf("unexpected answer %+v: %v", h, err)
	}
	return binary.LittleEndian.Uint64(r[wire.HeaderSize+16:])
}

func benchSend(b *testing.B, fsync bool) {
	settings := wire.DefaultTopicSettings()
	settings.EnforceFsync = fsync
	settings.SegmentSize = 256 << 20
	s := startWithTopic(b, 1, settings)
	p := newRawProducer(b, s)
	p.send(b) // warm the body pool
	runtime.GC()
	b.SetBytes(benchMessages * benchPayload)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.send(b)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*benchMessages)/b.Elapsed().Seconds(), "msgs/s")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MB")
	b.ReportMetric(float64(b.N)*float64(len(p.frame))/(1<<20), "written-MB")
}

// BenchmarkSend1000x1KB: one producer, page-cache durability.
func BenchmarkSend1000x1KB(b *testing.B) { benchSend(b, false) }

// BenchmarkSend1000x1KBFsync: one producer, enforce_fsync = true (each
// reply waits for fdatasync of data and index).
func BenchmarkSend1000x1KBFsync(b *testing.B) { benchSend(b, true) }

// BenchmarkPoll1000x1KB: one consumer polling 1000-message batches by
// offset from stored segments (served from the page cache; the records go
// out with sendfile).
func BenchmarkPoll1000x1KB(b *testing.B) {
	const stored = 128 // batches, ~137 MB
	settings := wire.DefaultTopicSettings()
	settings.SegmentSize = 64 << 20
	s := startWithTopic(b, 1, settings)
	p := newRawProducer(b, s)
	for range stored {
		p.send(b)
	}
	c := s.Dial(b)
	c.LoginRoot()
	req := pollReq(wire.SingleConsumer(wire.NumericID(1)), 0, wire.OffsetStrategy(0), benchMessages, false)
	frame := EncodeRequest(c.Header(wire.OpNonReplicated, wire.CmdPollMessages), req.AppendTo(nil))
	// The strategy value is the last 9+4+1 bytes' first u64 after the kind.
	valueAt := len(frame) - 4 - 1 - 8
	buf := make([]byte, 4<<20)
	poll := func(off uint64) int {
		binary.LittleEndian.PutUint64(frame[valueAt:], off)
		if _, err := c.Conn.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c.Conn, buf[:wire.HeaderSize]); err != nil {
			b.Fatal(err)
		}
		n := int(wire.PeekSize(buf)) - wire.HeaderSize
		if _, err := io.ReadFull(c.Conn, buf[:n]); err != nil {
			b.Fatal(err)
		}
		if got := binary.LittleEndian.Uint32(buf[12:]); got != benchMessages {
			b.Fatalf("polled %d messages", got)
		}
		return n
	}
	poll(0)
	b.SetBytes(benchMessages * benchPayload)
	b.ReportAllocs()
	b.ResetTimer()
	var replyBytes int
	for i := range b.N {
		replyBytes += poll(uint64(i%stored) * benchMessages)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*benchMessages)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(replyBytes)/b.Elapsed().Seconds()/1e9, "reply-GB/s")
}
