package client

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// sinkServer is a minimal server for benchmarks: it logs everyone in,
// answers SendMessages with one confirmation and every other request with
// an empty success, and records nothing.
type sinkServer struct {
	ln net.Listener
	wg sync.WaitGroup
}

func newSinkServer(tb testing.TB) *sinkServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &sinkServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, nc)
			s.wg.Add(1)
			go func() { defer s.wg.Done(); sinkServe(nc) }()
		}
	}()
	tb.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func sinkServe(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 1<<20)
	bw := bufio.NewWriterSize(nc, 64<<10)
	hdr := make([]byte, wire.HeaderSize)
	body := make([]byte, 0, 1<<20)
	var h wire.RequestHeader
	for {
		if _, err := io.ReadFull(br, hdr); err != nil {
			return
		}
		n := int(wire.PeekSize(hdr)) - wire.HeaderSize
		if cap(body) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		h.Decode(hdr)
		rh := wire.ReplyHeader{Client: h.Client, Request: h.Request, Operation: h.Operation}
		var out []byte
		switch h.Operation {
		case wire.OpRegister:
			r := wire.LoginRegisterReply{Session: 1, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "sink"}
			out = r.AppendTo(wire.AppendResultOK(nil))
		case wire.OpSendMessages:
			r := wire.SendMessagesReply{Confirmations: []wire.SendConfirmation{{StreamID: 1, TopicID: 1}}}
			out = r.AppendTo(nil)
		}
		rh.Size = uint32(wire.HeaderSize + len(out))
		bw.Write(rh.AppendTo(nil))
		bw.Write(out)
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}

// BenchmarkProducerFake measures the producer's own cost for 100-byte
// messages against an in-process server that only answers (no storage).
func BenchmarkProducerFake(b *testing.B) {
	s := newSinkServer(b)
	c, err := Dial(b.Context(), s.ln.Addr().String(), WithCredentials("u", "p"), WithHeartbeat(0))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p, err := c.NewProducer(b.Context(), wire.NumericID(1), wire.NumericID(1), WithPartition(0), WithBatchMessages(1000), WithLinger(time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	msg := Message{Payload: make([]byte, 100)}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	b.ResetTimer()
	for b.Loop() {
		if err := p.Send(b.Context(), msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)*100/time.Since(start).Seconds()/1e6, "payload-MB/s")
	p.Close(b.Context())
}

// BenchmarkSendFake compares SendMessages (encodes the batch on every
// call) with SendBatch (sends a batch encoded once) for 1000 messages of
// 1000 bytes against an in-process server that only answers: the
// difference is the client-side encoding.
func BenchmarkSendFake(b *testing.B) {
	s := newSinkServer(b)
	c, err := Dial(b.Context(), s.ln.Addr().String(), WithCredentials("u", "p"), WithHeartbeat(0))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msgs := make([]wire.Message, 1000)
	payload := make([]byte, 1000)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(i + 1)}, OriginTimestamp: 1, Payload: payload}
	}
	batch, err := wire.AppendBatch(nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	sid, tid, part := wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0)
	for _, tc := range []struct {
		name string
		send func() error
	}{
		{"SendMessages", func() error { _, err := c.SendMessages(b.Context(), sid, tid, part, msgs); return err }},
		{"SendBatch", func() error { _, err := c.SendBatch(b.Context(), sid, tid, part, batch); return err }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(msgs) * len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.send(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
