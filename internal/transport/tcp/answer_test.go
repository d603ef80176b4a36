package tcp

import (
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// stackConn is a net.Conn that records, for every Write, whether the
// reader's answer path or the writer goroutine made it.
type stackConn struct {
	net.Conn
	inline, queued atomic.Int64
	delay          time.Duration // added to every write
}

func (s *stackConn) Write(b []byte) (int, error) {
	buf := make([]byte, 8<<10)
	st := string(buf[:runtime.Stack(buf, false)])
	switch {
	case strings.Contains(st, "(*conn).answer"):
		s.inline.Add(1)
	case strings.Contains(st, "(*conn).write("):
		s.queued.Add(1)
	}
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	return s.Conn.Write(b)
}

func pingRequest(n uint64) []byte {
	h := wire.RequestHeader{Prologue: wire.Prologue{Size: wire.HeaderSize}, Client: wire.Uint128{Lo: 1}, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: n}
	return h.AppendTo(nil)
}

// TestAnswerInlineInLockstep: a client that waits for each reply before
// sending the next request gets every reply from the reader itself, with
// no hand-off to the writer goroutine.
func TestAnswerInlineInLockstep(t *testing.T) {
	s := newTestServer(t)
	srv, cli := net.Pipe()
	sc := &stackConn{Conn: srv}
	c := s.track(sc)
	done := make(chan struct{})
	go func() { c.run(); close(done) }()
	var rep [wire.HeaderSize]byte
	for i := range uint64(20) {
		if _, err := cli.Write(pingRequest(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(cli, rep[:]); err != nil {
			t.Fatal(err)
		}
		var r wire.ReplyHeader
		if err := r.Decode(rep[:]); err != nil || r.Request != i {
			t.Fatalf("reply %d: %+v %v", i, r, err)
		}
	}
	cli.Close()
	<-done
	if sc.inline.Load() != 20 || sc.queued.Load() != 0 {
		t.Fatalf("writes: %d by the reader, %d by the writer; want 20 and 0", sc.inline.Load(), sc.queued.Load())
	}
}

// TestAnswersInOrderAcrossPaths: while a write is in progress (here: the
// test holds the write lock), answers queue for the writer; once it is
// released the queue drains and the reader writes again itself. Pipelined
// replies leave in request order across both paths and none is lost.
func TestAnswersInOrderAcrossPaths(t *testing.T) {
	s := newTestServer(t)
	srv, cli := net.Pipe()
	sc := &stackConn{Conn: srv}
	c := s.track(sc)
	done := make(chan struct{})
	go func() { c.run(); close(done) }()
	var rep [wire.HeaderSize]byte
	read := func(i uint64) {
		t.Helper()
		if _, err := io.ReadFull(cli, rep[:]); err != nil {
			t.Fatal(err)
		}
		var r wire.ReplyHeader
		if err := r.Decode(rep[:]); err != nil || r.Request != i {
			t.Fatalf("reply %d: %+v %v", i, r, err)
		}
	}
	// 0..19 in lockstep: written by the reader.
	for i := range uint64(20) {
		cli.Write(pingRequest(i))
		read(i)
	}
	// 20..39 while a write is in progress: queued.
	c.wmu.Lock()
	go func() {
		for i := range uint64(20) {
			cli.Write(pingRequest(20 + i))
		}
	}()
	for c.queued.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	c.wmu.Unlock()
	for i := range uint64(20) {
		read(20 + i)
	}
	// 40..59 in lockstep again, after the queue drained.
	for c.queued.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	for i := range uint64(20) {
		cli.Write(pingRequest(40 + i))
		read(40 + i)
	}
	cli.Close()
	<-done
	if sc.inline.Load() != 40 || sc.queued.Load() == 0 {
		t.Fatalf("writes: %d by the reader, %d by the writer; want 40 and some", sc.inline.Load(), sc.queued.Load())
	}
}
