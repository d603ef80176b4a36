package itest

import (
	"io"
	"net"
	"runtime"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// pinger is a minimal logged-in client for benchmarks: it writes a
// pre-encoded PING and reads the 256-byte reply without allocating.
type pinger struct {
	conn  net.Conn
	frame []byte
	reply [wire.HeaderSize]byte
}

func newPinger(b *testing.B, s *Server) *pinger {
	b.Helper()
	c := s.Dial(b)
	c.LoginRoot()
	return &pinger{conn: c.Conn, frame: EncodeRequest(c.Header(wire.OpNonReplicated, wire.CmdPing), nil)}
}

func (p *pinger) ping(b *testing.B) {
	if _, err := p.conn.Write(p.frame); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(p.conn, p.reply[:]); err != nil {
		b.Fatal(err)
	}
	if wire.PeekKind(p.reply[:]) != wire.KindReply {
		b.Fatal("not a reply")
	}
}

// BenchmarkPingOneConnection: sequential PING round trips on one
// connection (client and server in this process; allocs/op covers both,
// and the client side allocates nothing).
func BenchmarkPingOneConnection(b *testing.B) {
	s := Start(b)
	p := newPinger(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.ping(b)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pings/s")
}

// BenchmarkPing16Connections: 16 connections, each doing sequential PING
// round trips concurrently; pings/s is the total.
func BenchmarkPing16Connections(b *testing.B) {
	const conns = 16
	s := Start(b)
	ps := make([]*pinger, conns)
	for i := range ps {
		ps[i] = newPinger(b, s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, p := range ps {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				p.ping(b)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pings/s")
}

// BenchmarkIdleConnections opens 1000 logged-in idle connections and
// reports the heap they add (after GC), per connection and in total, plus
// the goroutine stack memory. Both ends of every connection live in this
// process, so the heap figure includes the client sockets too (an upper
// bound for the server). Run it with -benchtime=1x.
func BenchmarkIdleConnections(b *testing.B) {
	const conns = 1000
	for range b.N {
		b.StopTimer()
		s := Start(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		clients := make([]net.Conn, 0, conns)
		for range conns {
			c := s.Dial(b)
			c.LoginRoot()
			clients = append(clients, c.Conn)
		}
		b.StopTimer()
		if s.Broker.Connections() != conns {
			b.Fatalf("%d connections open", s.Broker.Connections())
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapInuse) - float64(before.HeapInuse)
		stack := float64(after.StackInuse) - float64(before.StackInuse)
		b.ReportMetric(heap/conns, "heap-B/conn")
		b.ReportMetric(heap/(1<<20), "heap-MiB/1000conns")
		b.ReportMetric(stack/conns, "stack-B/conn")
		runtime.KeepAlive(clients)
		for _, c := range clients {
			c.Close()
		}
	}
}
