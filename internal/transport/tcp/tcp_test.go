package tcp

import (
	"bytes"
	"io"
	"log/slog"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/rawio"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// fakeAddr and fakeConn let a connection loop run without sockets.
type fakeAddr struct{}

func (fakeAddr) Network() string { return "tcp" }
func (fakeAddr) String() string  { return "127.0.0.1:1" }

// fakeConn serves reads from r and counts written bytes; when want bytes
// have been written it closes done.
type fakeConn struct {
	r       io.Reader
	written atomic.Int64
	want    int64
	done    chan struct{}
	once    sync.Once
	out     *bytes.Buffer // optional copy of everything written
	mu      sync.Mutex
}

func (f *fakeConn) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *fakeConn) Write(b []byte) (int, error) {
	if f.out != nil {
		f.mu.Lock()
		f.out.Write(b)
		f.mu.Unlock()
	}
	if n := f.written.Add(int64(len(b))); f.want > 0 && n >= f.want {
		f.once.Do(func() { close(f.done) })
	}
	return len(b), nil
}
func (f *fakeConn) Close() error                     { return nil }
func (f *fakeConn) LocalAddr() net.Addr              { return fakeAddr{} }
func (f *fakeConn) RemoteAddr() net.Addr             { return fakeAddr{} }
func (f *fakeConn) SetDeadline(time.Time) error      { return nil }
func (f *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (f *fakeConn) SetWriteDeadline(time.Time) error { return nil }

var cheap = auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}

// newTestServer builds the whole request path (auth, session, dispatch)
// around a Server whose listener is never used.
func newTestServer(tb testing.TB) *Server {
	tb.Helper()
	h := auth.NewHasher(cheap, nil)
	store := auth.NewMemStore()
	root, err := auth.NewRootUser(h, "iggy", "iggy")
	if err != nil {
		tb.Fatal(err)
	}
	store.PutUser(root)
	table := session.NewClientTable(64, nil)
	log := session.NewMemLog(nil, table.Apply)
	m := session.NewManager(auth.NewAuthenticator(store, h, nil), log, table, session.Options{ServerVersion: "test"})
	d := dispatch.New(m, store, dispatch.Options{})
	s, err := Listen(Config{Address: "127.0.0.1:0", MaxConnections: 8, MaxFrameSize: 1 << 20, FrameReadTimeout: time.Second, WriteTimeout: time.Second}, d)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.ln.Close() })
	return s
}

func pingFrame() []byte {
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: wire.HeaderSize}, Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing}
	return h.AppendTo(nil)
}

func TestBodyPool(t *testing.T) {
	for _, tc := range []struct{ n, class, capacity int }{
		{1, 0, 512}, {512, 0, 512}, {513, 1, 1024}, {4096, 3, 4096}, {1 << 20, 11, 1 << 20},
	} {
		if c := classOf(tc.n); c != tc.class {
			t.Errorf("classOf(%d) = %d, want %d", tc.n, c, tc.class)
		}
		p := getBody(tc.n)
		if len(*p) != tc.n || cap(*p) != tc.capacity {
			t.Errorf("getBody(%d): len %d cap %d", tc.n, len(*p), cap(*p))
		}
		putBody(p)
	}
	if p := getBody(3 << 20); len(*p) != 0 || cap(*p) != readChunk {
		t.Errorf("large body buffer: len %d cap %d", len(*p), cap(*p))
	}
}

func TestConnLoopAnswersInOrder(t *testing.T) {
	s := newTestServer(t)
	var in []byte
	for i := range 10 {
		h := wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: uint64(i)}
		h.Size = wire.HeaderSize
		in = h.AppendTo(in)
	}
	fc := &fakeConn{r: bytes.NewReader(in), out: &bytes.Buffer{}}
	c := s.track(fc)
	c.run()
	out := fc.out.Bytes()
	if len(out) != 10*wire.HeaderSize {
		t.Fatalf("wrote %d bytes", len(out))
	}
	for i := range 10 {
		var r wire.ReplyHeader
		if err := r.Decode(out[i*wire.HeaderSize:]); err != nil || r.Request != uint64(i) || r.Status != 0 {
			t.Fatalf("reply %d: %+v %v", i, r, err)
		}
	}
	if s.Connections() != 0 || s.sessions.Len() != 0 {
		t.Fatal("connection not cleaned up")
	}
}

// FuzzConnInput feeds arbitrary bytes to a connection: the loop must end
// at EOF without panicking, and everything it writes must be whole
// Reply or Eviction frames.
func FuzzConnInput(f *testing.F) {
	f.Add(pingFrame())
	f.Add(append(pingFrame(), 1, 2, 3))
	login := wire.LoginRegister{Version: wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "f", SDKVersion: "1"}, Username: "iggy", Password: "iggy"}
	body := login.AppendTo(nil)
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: uint32(wire.HeaderSize + len(body))}, Client: wire.Uint128{Lo: 9}, Operation: wire.OpRegister}
	f.Add(append(h.AppendTo(nil), body...))
	f.Add(legacyLogin("iggy", "iggy"))
	s := newTestServer(f)
	s.log = slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := &fakeConn{r: bytes.NewReader(data), out: &bytes.Buffer{}}
		c := s.track(fc)
		c.run()
		out := fc.out.Bytes()
		if _, legacy := legacyFrame(data[:min(len(data), wire.HeaderSize)], s.cfg.MaxFrameSize); legacy {
			if !bytes.Equal(out, legacyAnswer()) {
				t.Fatalf("legacy first frame answered with %x", out)
			}
			return
		}
		for len(out) > 0 {
			if len(out) < wire.HeaderSize {
				t.Fatalf("partial frame written: %d bytes", len(out))
			}
			switch wire.PeekKind(out) {
			case wire.KindReply:
				var r wire.ReplyHeader
				if err := r.Decode(out); err != nil {
					t.Fatal(err)
				}
			case wire.KindEviction:
				var e wire.EvictionHeader
				if err := e.Decode(out); err != nil {
					t.Fatalf("invalid eviction: %v", err)
				}
			default:
				t.Fatalf("wrote frame kind %v", wire.PeekKind(out))
			}
			size := int(wire.PeekSize(out))
			if size < wire.HeaderSize || size > len(out) {
				t.Fatalf("bad frame size %d", size)
			}
			out = out[size:]
		}
	})
}

// repeatReader yields frame n times, then EOF.
type repeatReader struct {
	frame []byte
	left  int
	off   int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.frame[r.off:])
	r.off += n
	if r.off == len(r.frame) {
		r.off = 0
		r.left--
	}
	return n, nil
}

// BenchmarkFramePathPing measures the server's whole frame path for PING
// (read header, dispatch, encode reply, vectored write) over an in-memory
// connection, so allocs/op counts only the server's allocations.
func BenchmarkFramePathPing(b *testing.B) {
	s := newTestServer(b)
	b.ReportAllocs()
	fc := &fakeConn{r: &repeatReader{frame: pingFrame(), left: b.N}, want: int64(b.N) * wire.HeaderSize, done: make(chan struct{})}
	c := s.track(fc)
	b.ResetTimer()
	go c.run()
	<-fc.done
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pings/s")
}

// TestLargeBodyRead: a body above the eager pool size is read in chunks
// into a buffer whose capacity ends on a power of two (its pool class),
// so it can be recycled for the next large body.
func TestLargeBodyRead(t *testing.T) {
	for _, n := range []int{maxPooledBody + 1, 3<<20 + 5, 8 << 20} {
		a, b := net.Pipe()
		c := &conn{nc: a, raw: rawio.NewConn(a)}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		go func() { b.Write(data); b.Close() }()
		p, err := c.readBody(n)
		a.Close()
		if err != nil {
			t.Fatalf("n %d: %v", n, err)
		}
		want := 1 << bits.Len(uint(n-1))
		if len(*p) != n || cap(*p) != want || !bytes.Equal(*p, data) {
			t.Fatalf("n %d: len %d cap %d (want cap %d), equal %v", n, len(*p), cap(*p), want, bytes.Equal(*p, data))
		}
		putBody(p)
	}
}
