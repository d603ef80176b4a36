package partition

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// The payloads of a forwarded request (forward.go).
//
// Request: u8 version (1) | u32 user id | u128 client id | u64 session
// epoch | u32 partition | the request header (wire.HeaderSize bytes) |
// the request body.
//
// Reply: u8 status, then for forwardServed the whole reply frame (header
// and body), for forwardNotLeader u8 leader known | u64 leader.

const (
	forwardVersion   byte = 1
	forwardServed    byte = 0
	forwardNotLeader byte = 1
	// forwardPrefix is the request's length before the header.
	forwardPrefix = 1 + 4 + 16 + 8 + 4
)

var errBadForward = errors.New("malformed forwarded request")

// encodeForward encodes x (its connection's binding, its header and
// body) routed to partition pid; false when the connection is not bound.
func encodeForward(x *dispatch.Exchange, pid uint32) ([]byte, bool) {
	b, ok := x.Conn.Binding()
	if !ok {
		return nil, false
	}
	out := make([]byte, forwardPrefix+wire.HeaderSize, forwardPrefix+wire.HeaderSize+len(x.Body))
	out[0] = forwardVersion
	binary.LittleEndian.PutUint32(out[1:], uint32(b.UserID))
	wire.PutUint128(out[5:], b.Client)
	binary.LittleEndian.PutUint64(out[21:], b.Session)
	binary.LittleEndian.PutUint32(out[29:], pid)
	x.Header.Encode(out[forwardPrefix:])
	return append(out, x.Body...), true
}

// forwardRequest is a decoded forwarded request.
type forwardRequest struct {
	binding   session.Binding
	partition uint32
	header    wire.RequestHeader
	body      []byte
}

func decodeForward(p []byte) (forwardRequest, error) {
	var r forwardRequest
	if len(p) < forwardPrefix+wire.HeaderSize || p[0] != forwardVersion {
		return r, errBadForward
	}
	r.binding = session.Binding{
		UserID:  auth.UserID(binary.LittleEndian.Uint32(p[1:])),
		Client:  wire.GetUint128(p[5:]),
		Session: binary.LittleEndian.Uint64(p[21:]),
	}
	r.partition = binary.LittleEndian.Uint32(p[29:])
	if err := r.header.Decode(p[forwardPrefix:]); err != nil {
		return r, fmt.Errorf("%w: %w", errBadForward, err)
	}
	r.body = p[forwardPrefix+wire.HeaderSize:]
	return r, nil
}

// forwardReply is a decoded reply payload.
type forwardReply struct {
	frame     []byte
	notLeader bool
	leader    replication.NodeID
	hasLeader bool
}

func decodeForwardReply(p []byte) (forwardReply, error) {
	var r forwardReply
	switch {
	case len(p) >= 1+wire.HeaderSize && p[0] == forwardServed:
		r.frame = p[1:]
	case len(p) == 10 && p[0] == forwardNotLeader:
		r.notLeader = true
		r.hasLeader = p[1] != 0
		r.leader = replication.NodeID(binary.LittleEndian.Uint64(p[2:]))
	default:
		return r, errBadForward
	}
	return r, nil
}
