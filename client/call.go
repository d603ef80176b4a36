package client

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// Request header offsets the client patches in an encoded frame
// (framing.md, "RequestHeader"): the request number and the session epoch
// are only known when the frame is written, after the body (and its
// request_checksum) were built. header_test.go pins them against
// wire.RequestHeader.
const (
	offRequest = 168
	offSession = 184
)

// zeroHeader reserves the header bytes of a new frame.
var zeroHeader [wire.HeaderSize]byte

// numbering says how a request takes its request number (upstream-framing.md,
// "Request numbering"): Register uses 0, non-replicated reads reuse the
// current counter value, everything else (metadata, partition operations,
// Logout, DeleteSegments) takes the current value and advances the counter.
type numbering uint8

const (
	numberZero numbering = iota + 1
	numberCurrent
	numberAdvance
)

// call is one logical request: its frame, kept byte for byte across
// retries, and the reply of the last attempt.
//
// Ownership: the goroutine that created the call owns it except while it
// is submitted (in Client.pending or a conn's queue or sent list); the
// holder of the call then finishes it by setting reply/body/err and
// closing done. A call is submitted at most once at a time.
type call struct {
	code      wire.Command
	info      wire.CommandInfo
	frame     []byte // header + body
	numbering numbering
	numbered  bool   // request number assigned (kept for retries)
	request   uint64 // valid when numbered

	// internal marks a call nobody waits for (heartbeat PING).
	internal bool
	// noRetry marks a call that must not move to another connection
	// (the Register of a connection being set up).
	noRetry bool
	// abandoned is set by a caller that stopped waiting (its context
	// ended); writers skip it and reconnects drop it.
	abandoned atomic.Bool

	done  chan struct{}
	reply wire.ReplyHeader
	body  []byte
	err   error // transport, eviction or protocol failure

	// replyBuf, when its capacity fits the reply body, is where the
	// reader reads the body (PollMessagesBuffer); set before submission
	// and only read afterwards.
	replyBuf []byte

	// route names the partition of a partition request (route.go); set
	// before the first submission, read by every submission.
	route routeKey
	// onNode says the last submission went to a node connection of
	// partition routing; avoidNode makes the next one take the main
	// connection (after a 58 from a node, so that a stale map cannot send
	// the retries of a request to the same non-leader again and again).
	// Both are the submitter's, like the call.
	onNode, avoidNode bool
}

// newCall starts a request for code with room for a body of bodyCap
// bytes after the header. The caller appends the body to c.frame and
// calls seal.
func newCall(code wire.Command, bodyCap int) *call {
	return newCallBuf(code, make([]byte, 0, wire.HeaderSize+bodyCap))
}

// newCallBuf is newCall writing the frame into buf's capacity.
func newCallBuf(code wire.Command, buf []byte) *call {
	info, _ := wire.LookupCommand(code)
	buf = append(buf[:0], zeroHeader[:]...)
	c := &call{code: code, info: info, frame: buf}
	switch {
	case info.Operation == wire.OpRegister:
		c.numbering = numberZero
	case info.Operation == wire.OpNonReplicated:
		c.numbering = numberCurrent
	default: // metadata, DeleteSegments, partition operations, Logout
		c.numbering = numberAdvance
	}
	return c
}

// stamped reports whether the request carries request_checksum: the
// upstream SDK stamps metadata and session operations and DeleteSegments,
// and sends zero for partition and non-replicated operations
// (upstream-framing.md, "RequestHeader").
func (c *call) stamped() bool {
	return c.info.Plane == wire.PlaneMetadata || c.info.Plane == wire.PlaneSession && c.info.Operation != wire.OpNonReplicated
}

// seal writes the request header for the body now in c.frame. The client
// id is fixed for the life of the Client; the request number and session
// are patched when the frame is written.
func (c *call) seal(client wire.Uint128) {
	h := wire.RequestHeader{
		Prologue:  wire.Prologue{Size: uint32(len(c.frame))},
		Client:    client,
		Operation: c.info.Operation,
	}
	if c.info.Operation == wire.OpNonReplicated {
		h.Code = c.code
	}
	if c.stamped() {
		h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(c.frame[wire.HeaderSize:])}
	}
	h.Encode(c.frame[:wire.HeaderSize])
	c.done = make(chan struct{})
}

// setRequest records the request number in the frame.
func (c *call) setRequest(n uint64) {
	c.request, c.numbered = n, true
	binary.LittleEndian.PutUint64(c.frame[offRequest:], n)
}

// setSession writes the session epoch the frame is sent under; Register
// always carries 0.
func (c *call) setSession(epoch uint64) {
	if c.numbering == numberZero {
		epoch = 0
	}
	binary.LittleEndian.PutUint64(c.frame[offSession:], epoch)
}

// finish completes the current attempt.
func (c *call) finish(err error) {
	c.err = err
	close(c.done)
}

// rearm prepares a finished call for another attempt with the same frame.
func (c *call) rearm() {
	c.reply, c.body, c.err = wire.ReplyHeader{}, nil, nil
	c.done = make(chan struct{})
}

// result applies the client decode order (framing.md, "Client decode
// order", steps 4 to 7) to the reply and returns the typed payload:
// a non-zero status is the error; the reply operation must be declared;
// a SendMessages success must have a body; result-framed replies (by the
// reply's operation, and Register when the body is non-empty) are
// stripped of their result section, whose first non-zero result is the
// error.
func (c *call) result() ([]byte, error) {
	h := &c.reply
	if h.Status != 0 {
		return nil, wire.ErrorForCode(h.Status)
	}
	op := h.Operation
	if !op.Defined() {
		return nil, &ProtocolError{Reason: "reply operation " + op.String() + " is not declared"}
	}
	body := c.body
	if c.info.Operation == wire.OpSendMessages && len(body) == 0 {
		return nil, &ProtocolError{Reason: "empty SendMessages reply"}
	}
	if op.ResultFramed() || op == wire.OpRegister && len(body) > 0 {
		return wire.SplitResult(body)
	}
	return body, nil
}
