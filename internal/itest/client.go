package itest

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// ReadTimeout bounds every Recv: a test waiting longer has failed.
const ReadTimeout = 10 * time.Second

// Frame is one frame received from the server.
type Frame struct {
	Kind     wire.FrameKind
	Reply    wire.ReplyHeader
	Eviction wire.EvictionHeader
	Body     []byte
}

// String summarizes the frame for failure messages.
func (f Frame) String() string {
	switch f.Kind {
	case wire.KindReply:
		return fmt.Sprintf("Reply{op %v, request %d, status %d, body %d bytes}", f.Reply.Operation, f.Reply.Request, f.Reply.Status, len(f.Body))
	case wire.KindEviction:
		return fmt.Sprintf("Eviction{reason %v}", f.Eviction.Reason)
	}
	return fmt.Sprintf("Frame{kind %v}", f.Kind)
}

// Client is a raw-frame protocol client: it sends headers and bodies as
// given and returns frames as received. It follows the SDK numbering rules
// (framing.md, "Request numbering") in its helpers.
type Client struct {
	t    testing.TB
	Conn net.Conn
	// ID is the client id sent in request headers.
	ID wire.Uint128
	// Session is the epoch from the last successful login.
	Session uint64
	// Next is the request counter (starts at 1).
	Next uint64
}

// NewClientID returns a random non-zero client id.
func NewClientID() wire.Uint128 {
	var b [16]byte
	for {
		_, _ = rand.Read(b[:])
		id := wire.GetUint128(b[:])
		if !id.IsZero() {
			return id
		}
	}
}

// Dial connects a raw client (over TLS when the server serves TLS).
func (s *Server) Dial(t testing.TB) *Client {
	t.Helper()
	c, err := s.DialErr()
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	c.t = t
	t.Cleanup(func() { c.Conn.Close() })
	return c
}

// DialErr connects without registering cleanup or failing the test.
func (s *Server) DialErr() (*Client, error) {
	var nc net.Conn
	var err error
	if s.Transport != "" && s.Transport != TransportTCP {
		nc, err = s.dialTransport() // transport.go
	} else if s.ClientTLS != nil {
		nc, err = tls.Dial("tcp", s.Addr, s.ClientTLS)
	} else {
		nc, err = net.Dial("tcp", s.Addr)
	}
	if err != nil {
		return nil, err
	}
	return &Client{Conn: nc, ID: NewClientID(), Next: 1}, nil
}

// EncodeRequest builds a request frame: h with Size set, then body.
func EncodeRequest(h wire.RequestHeader, body []byte) []byte {
	h.Size = uint32(wire.HeaderSize + len(body))
	return append(h.AppendTo(nil), body...)
}

// Send writes one request frame.
func (c *Client) Send(h wire.RequestHeader, body []byte) error {
	_, err := c.Conn.Write(EncodeRequest(h, body))
	return err
}

// Write writes raw bytes.
func (c *Client) Write(b []byte) error {
	_, err := c.Conn.Write(b)
	return err
}

// Recv reads one frame.
func (c *Client) Recv() (Frame, error) {
	c.Conn.SetReadDeadline(time.Now().Add(ReadTimeout))
	a, err := wire.ReadAnswer(c.Conn)
	return Frame(a), err
}

// MustRecv reads one frame or fails the test.
func (c *Client) MustRecv() Frame {
	c.t.Helper()
	f, err := c.Recv()
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return f
}

// Header returns a request header for op with the client's id and the
// numbering rules applied: session from the last login; request = the
// counter, advanced for metadata operations and Logout.
func (c *Client) Header(op wire.Operation, code wire.Command) wire.RequestHeader {
	h := wire.RequestHeader{Client: c.ID, Operation: op, Session: c.Session, Request: c.Next}
	if op == wire.OpNonReplicated {
		h.Code = code
	}
	if op == wire.OpRegister {
		h.Session, h.Request = 0, 0
	}
	if op.Metadata() || op == wire.OpDeleteSegments || op == wire.OpLogout {
		c.Next++
	}
	return h
}

// Do sends a request and returns the next frame, failing the test on I/O
// errors.
func (c *Client) Do(h wire.RequestHeader, body []byte) Frame {
	c.t.Helper()
	if err := c.Send(h, body); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	return c.MustRecv()
}

// Call sends a NonReplicated command and returns the answer.
func (c *Client) Call(code wire.Command, body []byte) Frame {
	c.t.Helper()
	return c.Do(c.Header(wire.OpNonReplicated, code), body)
}

// Ping sends PING and fails unless it gets an empty status-0 reply.
func (c *Client) Ping() {
	c.t.Helper()
	f := c.Call(wire.CmdPing, nil)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || len(f.Body) != 0 {
		c.t.Fatalf("PING answered %v", f)
	}
}

// Version is the client version info the harness logs in with.
var Version = wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "iggo-itest", SDKVersion: "0.0.1"}

// LoginBody encodes a LOGIN_REGISTER body.
func LoginBody(username, password string) []byte {
	l := wire.LoginRegister{Version: Version, Username: username, Password: password}
	return l.AppendTo(nil)
}

// PATBody encodes a LOGIN_REGISTER_WITH_PAT body.
func PATBody(token string) []byte {
	l := wire.LoginRegisterWithPAT{Version: Version, Token: token}
	return l.AppendTo(nil)
}

// LoginWith sends a Register with body and returns the answer; on success
// the session is recorded and the counter reset.
func (c *Client) LoginWith(body []byte) (wire.LoginRegisterReply, Frame) {
	c.t.Helper()
	f := c.Do(c.Header(wire.OpRegister, 0), body)
	var r wire.LoginRegisterReply
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		return r, f
	}
	payload, err := wire.SplitResult(f.Body)
	if err != nil {
		return r, f
	}
	if err := r.Decode(payload); err == nil {
		c.Session, c.Next = r.Session, 1
	}
	return r, f
}

// Login logs in with username/password and fails the test unless it succeeds.
func (c *Client) Login(username, password string) wire.LoginRegisterReply {
	c.t.Helper()
	r, f := c.LoginWith(LoginBody(username, password))
	if r.Session == 0 {
		c.t.Fatalf("login %s answered %v", username, f)
	}
	return r
}

// LoginRoot logs in as the root user.
func (c *Client) LoginRoot() wire.LoginRegisterReply {
	c.t.Helper()
	return c.Login(RootUsername, RootPassword)
}

// ExpectEviction fails the test unless f is an eviction with reason.
func ExpectEviction(t testing.TB, f Frame, reason wire.EvictionReason) {
	t.Helper()
	if f.Kind != wire.KindEviction || f.Eviction.Reason != reason {
		t.Fatalf("got %v, want Eviction{reason %v}", f, reason)
	}
}

// ExpectStatus fails the test unless f is a reply with status code and an
// empty body.
func ExpectStatus(t testing.TB, f Frame, code uint32) {
	t.Helper()
	if f.Kind != wire.KindReply || f.Reply.Status != code || len(f.Body) != 0 {
		t.Fatalf("got %v, want Reply{status %d, empty body}", f, code)
	}
}

// ExpectResult fails the test unless f is a status-0 reply whose result
// section carries code.
func ExpectResult(t testing.TB, f Frame, code uint32) {
	t.Helper()
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || len(f.Body) != 12 || binary.LittleEndian.Uint32(f.Body[8:]) != code {
		t.Fatalf("got %v (body % x), want a result section with code %d", f, f.Body, code)
	}
}

// ExpectClosed fails the test unless the server closes the connection
// (any frames before the close are returned).
func (c *Client) ExpectClosed() []Frame {
	c.t.Helper()
	var frames []Frame
	for {
		f, err := c.Recv()
		if err == nil {
			frames = append(frames, f)
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection still open after %v (frames %v)", ReadTimeout, frames)
		}
		return frames
	}
}

// Command sends a metadata-plane command (operation op) with body encoded
// and its request_checksum stamped as the SDKs do, and returns the answer.
func (c *Client) Command(op wire.Operation, body wire.Body) Frame {
	c.t.Helper()
	var b []byte
	if body != nil {
		b = body.AppendTo(nil)
	}
	return c.CommandRaw(op, b)
}

// CommandRaw is Command with a raw body.
func (c *Client) CommandRaw(op wire.Operation, body []byte) Frame {
	c.t.Helper()
	h := c.Header(op, 0)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body)}
	return c.Do(h, body)
}

// Read sends a NonReplicated command with body encoded.
func (c *Client) Read(code wire.Command, body wire.Body) Frame {
	c.t.Helper()
	var b []byte
	if body != nil {
		b = body.AppendTo(nil)
	}
	return c.Call(code, b)
}

// ExpectOK fails the test unless f is a status-0 reply whose result
// section is empty (success), and returns the payload after it.
func ExpectOK(t testing.TB, f Frame) []byte {
	t.Helper()
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		t.Fatalf("got %v (body % x), want success", f, f.Body)
	}
	payload, err := wire.SplitResult(f.Body)
	if err != nil {
		t.Fatalf("got %v (body % x): %v, want success", f, f.Body, err)
	}
	return payload
}

// ExpectPlain fails the test unless f is a status-0 reply, and returns
// its body (a read's payload).
func ExpectPlain(t testing.TB, f Frame) []byte {
	t.Helper()
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		t.Fatalf("got %v, want a status-0 reply", f)
	}
	return f.Body
}
