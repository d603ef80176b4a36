package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// DefaultTimeout bounds each request of a Conn unless Timeout is set.
const DefaultTimeout = 5 * time.Second

// clientVersion is what a Conn reports at login.
var clientVersion = wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: "iggo-local", SDKVersion: "1"}

// ServerError is an error answered by the server: a header status, or the
// code of a result section (Framed).
type ServerError struct {
	Code   uint32
	Framed bool
}

// Error names the code.
func (e *ServerError) Error() string {
	where := "status"
	if e.Framed {
		where = "result"
	}
	return fmt.Sprintf("server answered %s %d (%v)", where, e.Code, wire.ErrorForCode(e.Code))
}

// EvictionError is an eviction frame received instead of a reply.
type EvictionError struct{ Reason wire.EvictionReason }

// Error names the reason.
func (e *EvictionError) Error() string { return fmt.Sprintf("evicted: %v", e.Reason) }

// IOError is a failed write or read. Sent is false only when not a byte of
// the request reached the connection, so the server cannot have seen it.
// A Conn is unusable after an IOError.
type IOError struct {
	Sent bool
	Err  error
}

// Error describes the failure.
func (e *IOError) Error() string {
	if e.Sent {
		return "request sent, no reply: " + e.Err.Error()
	}
	return "request not sent: " + e.Err.Error()
}

// Unwrap returns the I/O error.
func (e *IOError) Unwrap() error { return e.Err }

// ErrorCode returns the server error code carried by err (0 when none).
func ErrorCode(err error) uint32 {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// Conn is a raw protocol connection with one request in flight at a time.
// It numbers requests like the SDKs (framing.md): the counter starts at 1
// after login and advances for every replicated operation. It is not safe
// for concurrent use.
type Conn struct {
	// Timeout bounds each request (write and reply); DefaultTimeout if 0.
	Timeout time.Duration
	// ID is the client id in every request header.
	ID      wire.Uint128
	session uint64
	next    uint64
	nc      net.Conn
	broken  error
}

// Dial connects to addr (host:port) within ctx.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err // a *net.OpError: it names the operation and addr
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &Conn{ID: NewClientID(), nc: nc, next: 1}, nil
}

// DialLogin connects to addr and logs in as the root user.
func DialLogin(ctx context.Context, addr string) (*Conn, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	if err := c.Login(RootUsername, RootPassword); err != nil {
		c.Close()
		return nil, fmt.Errorf("login at %s: %w", addr, err)
	}
	return c, nil
}

// NewClientID returns a random non-zero client id.
func NewClientID() wire.Uint128 {
	var b [16]byte
	for {
		_, _ = rand.Read(b[:])
		if id := wire.GetUint128(b[:]); !id.IsZero() {
			return id
		}
	}
}

// Session returns the session epoch of the last login (0 before one).
func (c *Conn) Session() uint64 { return c.session }

// NextRequest returns the request number the next replicated request
// will carry.
func (c *Conn) NextRequest() uint64 { return c.next }

// SetNextRequest sets the request number of the next replicated request:
// a client that logged in again with its old id (Conn.ID set before
// Login) retries a request under its original number, so the server's
// duplicate suppression recognizes it.
func (c *Conn) SetNextRequest(n uint64) { c.next = n }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// RemoteAddr returns the server address.
func (c *Conn) RemoteAddr() string { return c.nc.RemoteAddr().String() }

// Frame is one answer: a reply (header and body) or an eviction.
type Frame = wire.Answer

// RoundTrip sends h (Size set here) and body and reads the answer.
func (c *Conn) RoundTrip(h wire.RequestHeader, body []byte) (Frame, error) {
	if c.broken != nil {
		return Frame{}, &IOError{Err: fmt.Errorf("connection unusable after an earlier failure: %w", c.broken)}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	_ = c.nc.SetDeadline(deadline)
	h.Size = uint32(wire.HeaderSize + len(body))
	frame := append(h.AppendTo(make([]byte, 0, int(h.Size))), body...)
	n, err := c.nc.Write(frame)
	if err != nil {
		c.broken = err
		return Frame{}, &IOError{Sent: n > 0, Err: err}
	}
	f, err := c.read()
	if err != nil {
		c.broken = err
		return Frame{}, &IOError{Sent: true, Err: err}
	}
	return f, nil
}

func (c *Conn) read() (Frame, error) { return wire.ReadAnswer(c.nc) }

// status turns an eviction or a non-zero header status into an error.
func status(f Frame) error {
	if f.Kind == wire.KindEviction {
		return &EvictionError{Reason: f.Eviction.Reason}
	}
	if f.Reply.Status != 0 {
		return &ServerError{Code: f.Reply.Status}
	}
	return nil
}

// result strips a result section, turning a non-zero code into an error.
func result(f Frame) ([]byte, error) {
	if err := status(f); err != nil {
		return nil, err
	}
	entries, payload, err := wire.DecodeResult(nil, f.Body)
	if err != nil {
		return nil, fmt.Errorf("result section: %w", err)
	}
	for _, e := range entries {
		if e.Result != 0 {
			return nil, &ServerError{Code: e.Result, Framed: true}
		}
	}
	return payload, nil
}

func (c *Conn) header(op wire.Operation, code wire.Command) wire.RequestHeader {
	h := wire.RequestHeader{Client: c.ID, Operation: op, Session: c.session, Request: c.next}
	switch {
	case op == wire.OpNonReplicated:
		h.Code = code
	case op == wire.OpRegister:
		h.Session, h.Request = 0, 0
	default:
		c.next++
	}
	return h
}

// Ping sends PING.
func (c *Conn) Ping() error {
	f, err := c.RoundTrip(c.header(wire.OpNonReplicated, wire.CmdPing), nil)
	if err != nil {
		return err
	}
	return status(f)
}

// Login sends LOGIN_REGISTER; on success the session is kept and the
// request counter restarts at 1.
func (c *Conn) Login(username, password string) error {
	l := wire.LoginRegister{Version: clientVersion, Username: username, Password: password}
	f, err := c.RoundTrip(c.header(wire.OpRegister, 0), l.AppendTo(nil))
	if err != nil {
		return err
	}
	payload, err := result(f)
	if err != nil {
		return err
	}
	var r wire.LoginRegisterReply
	if err := r.Decode(payload); err != nil {
		return fmt.Errorf("login reply: %w", err)
	}
	c.session, c.next = r.Session, 1
	return nil
}

// Call sends a non-replicated command (a read, or an Iggo extension such
// as CLUSTER_ADD_NODE) and returns the reply body; a non-zero status is a
// ServerError. Set Timeout for commands that take long.
func (c *Conn) Call(code wire.Command, body wire.Body) ([]byte, error) {
	var b []byte
	if body != nil {
		b = body.AppendTo(nil)
	}
	f, err := c.RoundTrip(c.header(wire.OpNonReplicated, code), b)
	if err != nil {
		return nil, err
	}
	if err := status(f); err != nil {
		return nil, err
	}
	return f.Body, nil
}

// ClusterMetadata sends GET_CLUSTER_METADATA.
func (c *Conn) ClusterMetadata() (wire.ClusterMetadata, error) {
	var m wire.ClusterMetadata
	f, err := c.RoundTrip(c.header(wire.OpNonReplicated, wire.CmdGetClusterMetadata), nil)
	if err != nil {
		return m, err
	}
	if err := status(f); err != nil {
		return m, err
	}
	if err := m.Decode(f.Body); err != nil {
		return m, fmt.Errorf("cluster metadata: %w", err)
	}
	return m, nil
}

// Command sends a metadata-plane command (op, body) with its request
// checksum stamped as the SDKs do and returns the payload after the
// result section.
func (c *Conn) Command(op wire.Operation, body wire.Body) ([]byte, error) {
	var b []byte
	if body != nil {
		b = body.AppendTo(nil)
	}
	h := c.header(op, 0)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(b)}
	f, err := c.RoundTrip(h, b)
	if err != nil {
		return nil, err
	}
	return result(f)
}

// ErrDuplicate is returned by Send when the server answered success
// without a confirmation: its duplicate window recognized a retried
// request that had already been applied (upstream-framing.md).
var ErrDuplicate = errors.New("duplicate request: success without a confirmation")

// Send sends one SEND_MESSAGES batch (built with wire.BatchBuilder) to
// partition and returns the base offset the server confirmed, or
// ErrDuplicate.
func (c *Conn) Send(stream, topic wire.Identifier, partition uint32, batch []byte) (uint64, error) {
	s := wire.SendMessages{StreamID: stream, TopicID: topic, Partitioning: wire.PartitioningByID(partition)}
	s.SetBatch(batch)
	f, err := c.RoundTrip(c.header(wire.OpSendMessages, 0), s.AppendTo(nil))
	if err != nil {
		return 0, err
	}
	if err := status(f); err != nil {
		return 0, err
	}
	var r wire.SendMessagesReply
	if err := r.Decode(f.Body); err != nil {
		return 0, fmt.Errorf("send reply: %w", err)
	}
	if len(r.Confirmations) == 0 {
		return 0, ErrDuplicate
	}
	if len(r.Confirmations) != 1 {
		return 0, fmt.Errorf("send reply has %d confirmations, want 1", len(r.Confirmations))
	}
	return r.Confirmations[0].BaseOffset, nil
}

// Poll reads up to count messages of partition from offset (a plain
// consumer, no auto-commit).
func (c *Conn) Poll(stream, topic wire.Identifier, partition uint32, offset uint64, count uint32) (wire.PolledMessages, error) {
	var out wire.PolledMessages
	req := wire.PollMessages{
		Consumer:  wire.SingleConsumer(wire.NumericID(1)),
		StreamID:  stream,
		TopicID:   topic,
		Partition: wire.SomePartition(partition),
		Strategy:  wire.OffsetStrategy(offset),
		Count:     count,
	}
	f, err := c.RoundTrip(c.header(wire.OpNonReplicated, wire.CmdPollMessages), req.AppendTo(nil))
	if err != nil {
		return out, err
	}
	if err := status(f); err != nil {
		return out, err
	}
	if err := out.Decode(f.Body); err != nil {
		return out, fmt.Errorf("poll reply: %w", err)
	}
	return out, nil
}

// LeaderIndex returns the position in m.Nodes of the one Leader node, or
// -1 when no node (or more than one) is reported as Leader.
func LeaderIndex(m wire.ClusterMetadata) int {
	idx := -1
	for i, n := range m.Nodes {
		if n.Role == wire.ClusterLeader {
			if idx >= 0 {
				return -1
			}
			idx = i
		}
	}
	return idx
}

// MessageID returns the message id of a polled message as one uint64 (ids
// written through this package use only the low half).
func MessageID(m wire.PolledMessage) uint64 { return m.ID.Lo }
