package client

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// fakeReq is one request frame the fake server received.
type fakeReq struct {
	Conn  int // index of the connection, in accept order
	Hdr   wire.RequestHeader
	Frame []byte // the whole frame as received
	Body  []byte
}

// Command returns the command code of the request.
func (r fakeReq) Command() wire.Command {
	if r.Hdr.Operation == wire.OpRegister {
		return wire.CmdLoginRegister
	}
	c, _ := r.Hdr.Command()
	return c
}

// fakeHandler answers one request; it returns false to let the default
// behaviour answer.
type fakeHandler func(fc *fakeConn, r fakeReq) bool

// fakeServer is an in-process server built on package wire: it records
// every request and answers in order, by default like a permissive
// broker (login succeeds with a new epoch, reads and writes succeed with
// empty payloads). Tests override answers with a handler.
type fakeServer struct {
	t  testing.TB
	ln net.Listener

	mu      sync.Mutex
	handler fakeHandler // guarded by mu
	reqs    []fakeReq   // guarded by mu
	conns   []*fakeConn // guarded by mu
	epoch   uint64      // guarded by mu
	arrived chan struct{}
	wg      sync.WaitGroup
}

func newFakeServer(t testing.TB, h fakeHandler) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, ln: ln, handler: h, arrived: make(chan struct{}, 1)}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *fakeServer) Addr() string { return s.ln.Addr().String() }

func (s *fakeServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		fc := &fakeConn{s: s, nc: nc, idx: len(s.conns)}
		s.conns = append(s.conns, fc)
		s.mu.Unlock()
		s.wg.Add(1)
		go fc.serve()
	}
}

// requests returns a copy of the requests received so far.
func (s *fakeServer) requests() []fakeReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fakeReq(nil), s.reqs...)
}

// waitFor waits until pred holds for the requests received, failing the
// test after a generous deadline (a hang, not a timing assertion).
func (s *fakeServer) waitFor(pred func([]fakeReq) bool) []fakeReq {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if r := s.requests(); pred(r) {
			return r
		}
		select {
		case <-s.arrived:
		case <-deadline:
			s.t.Fatalf("condition on requests not met; got %d requests", len(s.requests()))
		}
	}
}

// fakeConn is one accepted connection.
type fakeConn struct {
	s   *fakeServer
	nc  net.Conn
	idx int
	wmu sync.Mutex
}

func (fc *fakeConn) serve() {
	defer fc.s.wg.Done()
	defer fc.nc.Close()
	br := bufio.NewReader(fc.nc)
	for {
		hdr := make([]byte, wire.HeaderSize)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return
		}
		size := wire.PeekSize(hdr)
		frame := make([]byte, size)
		copy(frame, hdr)
		if _, err := io.ReadFull(br, frame[wire.HeaderSize:]); err != nil {
			return
		}
		var h wire.RequestHeader
		if err := h.Decode(frame); err != nil {
			fc.s.t.Errorf("fake server: bad request header: %v", err)
			return
		}
		r := fakeReq{Conn: fc.idx, Hdr: h, Frame: frame, Body: frame[wire.HeaderSize:]}
		fc.s.mu.Lock()
		fc.s.reqs = append(fc.s.reqs, r)
		h2 := fc.s.handler
		fc.s.mu.Unlock()
		select {
		case fc.s.arrived <- struct{}{}:
		default:
		}
		if h2 != nil && h2(fc, r) {
			continue
		}
		fc.defaultAnswer(r)
	}
}

// defaultAnswer: Register -> success with a fresh epoch; Logout -> empty;
// SendMessages -> one confirmation at offset 0; result-framed operations
// -> [count=0]; everything else -> an empty plain body.
func (fc *fakeConn) defaultAnswer(r fakeReq) {
	switch op := r.Hdr.Operation; {
	case op == wire.OpRegister:
		fc.loginOK(r)
	case op == wire.OpSendMessages:
		rep := wire.SendMessagesReply{Confirmations: []wire.SendConfirmation{{StreamID: 1, TopicID: 1}}}
		fc.reply(r, 0, rep.AppendTo(nil))
	case op.ResultFramed():
		info, _ := wire.CommandForOperation(op)
		fc.replyOp(r, info.ReplyOperation, 0, wire.AppendResultOK(nil))
	default:
		fc.reply(r, 0, nil)
	}
}

// loginOK answers a Register with a new epoch.
func (fc *fakeConn) loginOK(r fakeReq) uint64 {
	fc.s.mu.Lock()
	fc.s.epoch++
	e := fc.s.epoch
	fc.s.mu.Unlock()
	rep := wire.LoginRegisterReply{UserID: 7, Session: e, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "fake"}
	fc.reply(r, 0, rep.AppendTo(wire.AppendResultOK(nil)))
	return e
}

// reply answers r with its own operation.
func (fc *fakeConn) reply(r fakeReq, status uint32, body []byte) {
	fc.replyOp(r, r.Hdr.Operation, status, body)
}

// replyOp answers r with operation op.
func (fc *fakeConn) replyOp(r fakeReq, op wire.Operation, status uint32, body []byte) {
	h := wire.ReplyHeader{
		Prologue:        wire.Prologue{Size: uint32(wire.HeaderSize + len(body))},
		RequestChecksum: r.Hdr.RequestChecksum,
		Client:          r.Hdr.Client,
		Request:         r.Hdr.Request,
		Operation:       op,
		Status:          status,
	}
	fc.write(append(h.AppendTo(nil), body...))
}

// evict sends an eviction frame.
func (fc *fakeConn) evict(r fakeReq, reason wire.EvictionReason) {
	h := wire.EvictionHeader{Client: r.Hdr.Client, Reason: reason}
	if reason == wire.EvictIncompatibleProtocol {
		h.ServerProtocolVersion, h.ServerProtocolVersionMin = wire.ProtocolVersion, wire.ProtocolVersionMin
	}
	fc.write(h.AppendTo(nil))
}

func (fc *fakeConn) write(b []byte) {
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	fc.nc.Write(b)
}

// drop closes the connection without answering.
func (fc *fakeConn) drop() { fc.nc.Close() }

// dialFake connects a client to s with root-like credentials and small
// backoffs. Leader following is off, so the requests a test sees are
// exactly the ones it makes (plus logins); the cluster tests
// (cluster_test.go) dial with it on.
func dialFake(t testing.TB, s *fakeServer, opts ...Option) *Client {
	t.Helper()
	base := []Option{
		WithCredentials("iggy", "iggy"),
		WithClusterPolicy(ClusterPolicy{DisableRedirect: true}),
		WithReconnect(ReconnectPolicy{InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}),
		WithTransientRetry(RetryPolicy{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}),
		WithHeartbeat(0),
	}
	c, err := Dial(t.Context(), s.Addr(), append(base, opts...)...)
	if err != nil {
		t.Fatalf("dial fake server: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ctxTimeout is a test context with a deadline far beyond any expected
// duration, so a hang fails instead of blocking the test binary.
func ctxTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
