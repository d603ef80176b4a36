package itest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

// TestWebSocketScenarios runs the TCP scenario set through real
// WebSocket connections (client/ws).
func TestWebSocketScenarios(t *testing.T) { runScenarios(t, TransportWS) }

// dialRawWS opens a WebSocket connection for message-level tests.
func dialRawWS(t *testing.T, s *Server) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	wc, resp, err := websocket.Dial(ctx, "ws://"+s.TransportAddr+"/any/path", nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("websocket dial: %v", err)
	}
	wc.SetReadLimit(wire.MaxFrameSize)
	t.Cleanup(func() { wc.CloseNow() })
	return wc
}

// wsRead reads one message (10 s bound).
func wsRead(t *testing.T, wc *websocket.Conn) (websocket.MessageType, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return wc.Read(ctx)
}

// expectWSClose reads until the server closes and checks its status.
func expectWSClose(t *testing.T, wc *websocket.Conn, want websocket.StatusCode) {
	t.Helper()
	_, msg, err := wsRead(t, wc)
	if err == nil {
		t.Fatalf("got a %d-byte message, want close %v", len(msg), want)
	}
	if got := websocket.CloseStatus(err); got != want {
		t.Fatalf("closed with %v (%v), want %v", got, err, want)
	}
}

func wsWrite(t *testing.T, wc *websocket.Conn, typ websocket.MessageType, b []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := wc.Write(ctx, typ, b); err != nil {
		t.Fatalf("websocket write: %v", err)
	}
}

// TestWebSocketBadInput: each hostile message closes its connection with
// a clear status; other connections keep working.
func TestWebSocketBadInput(t *testing.T) {
	s := Start(t, WithTransport(TransportWS), WithConfig(func(c *config.Config) { c.WebSocket.MaxMessageSize = 64 << 10 }))
	other := s.Dial(t)
	other.LoginRoot()
	id := NewClientID()
	two := append(pingFrame(id, 1), pingFrame(id, 2)...)
	cases := []struct {
		name   string
		typ    websocket.MessageType
		raw    []byte
		status websocket.StatusCode
	}{
		{"text message", websocket.MessageText, pingFrame(id, 1), websocket.StatusUnsupportedData},
		{"half a frame", websocket.MessageBinary, pingFrame(id, 1)[:128], websocket.StatusPolicyViolation},
		{"body shorter than size", websocket.MessageBinary, rawHeader(wire.RequestHeader{Client: id, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, 300), websocket.StatusPolicyViolation},
		{"two frames", websocket.MessageBinary, two, websocket.StatusPolicyViolation},
		{"size below a header", websocket.MessageBinary, rawHeader(wire.RequestHeader{Client: id, Request: 1}, 100), websocket.StatusPolicyViolation},
		{"not a request", websocket.MessageBinary, func() []byte { b := pingFrame(id, 1); b[60] = byte(wire.KindEviction); return b }(), websocket.StatusPolicyViolation},
		{"over the size limit", websocket.MessageBinary, EncodeRequest(wire.RequestHeader{Client: id, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, make([]byte, 64<<10)), websocket.StatusMessageTooBig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wc := dialRawWS(t, s)
			wsWrite(t, wc, tc.typ, tc.raw)
			expectWSClose(t, wc, tc.status)
			other.Ping()
		})
	}
	t.Run("fragmented message", func(t *testing.T) {
		wc := dialRawWS(t, s)
		w, err := wc.Writer(t.Context(), websocket.MessageBinary)
		if err != nil {
			t.Fatal(err)
		}
		frame := EncodeRequest(wire.RequestHeader{Client: id, Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 7}, make([]byte, 1000))
		for _, part := range [][]byte{frame[:10], frame[10:256], frame[256:700], frame[700:]} {
			if _, err := w.Write(part); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		typ, msg, err := wsRead(t, wc)
		if err != nil || typ != websocket.MessageBinary {
			t.Fatalf("fragmented request: %v %v", typ, err)
		}
		expectPong(t, msg, 7)
	})
	t.Run("ping while idle", func(t *testing.T) {
		wc := dialRawWS(t, s)
		ctx := wc.CloseRead(t.Context()) // a reader must run for the pong
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := wc.Ping(pctx); err != nil {
			t.Fatalf("no pong: %v", err)
		}
	})
	t.Run("failed upgrade", func(t *testing.T) {
		nc, err := net.Dial("tcp", s.TransportAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("plain GET answered %s", resp.Status)
		}
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatalf("connection not closed after a failed upgrade: %v", err)
		}
		other.Ping()
	})
}

// TestWebSocketSlowReader: a client that sends without reading is
// closed after the write timeout; others are served throughout.
func TestWebSocketSlowReader(t *testing.T) {
	s := Start(t, WithTransport(TransportWS), WithConfig(func(c *config.Config) {
		c.TCP.WriteTimeout = config.Duration(300 * time.Millisecond)
	}))
	other := s.Dial(t)
	other.LoginRoot()
	nc, err := net.Dial("tcp", s.TransportAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// A hand-made upgrade, then masked PING messages, and no reads.
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	id := NewClientID()
	msg := maskedBinary(pingFrame(id, 1))
	deadline := time.Now().Add(20 * time.Second)
	nc.SetWriteDeadline(deadline)
	closed := false
	for i := 0; i < 400000 && time.Now().Before(deadline); i++ {
		if _, err := nc.Write(msg); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("writes blocked until the deadline: the server never closed the connection")
			}
			closed = true // the server gave up on us and closed
			break
		}
	}
	if !closed {
		t.Fatal("a client that never reads was not closed")
	}
	other.Ping()
}

// maskedBinary encodes p as one masked binary WebSocket frame (zero mask
// key, so the payload is unchanged), p shorter than 64 KiB.
func maskedBinary(p []byte) []byte {
	b := []byte{0x82, 0x80 | 126, byte(len(p) >> 8), byte(len(p)), 0, 0, 0, 0}
	return append(b, p...)
}
