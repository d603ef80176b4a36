package httpapi

import (
	"bytes"
	"errors"

	"github.com/zeebo/xxh3"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// errEvicted reports that the dispatcher answered with an eviction (the
// session is gone; a write registers again).
var errEvicted = errors.New("session evicted")

// body is anything with a wire request encoder.
type body interface{ AppendTo(dst []byte) []byte }

// outcome is a decoded binary reply.
type outcome struct {
	// payload is the reply body after any result section.
	payload []byte
}

// serve runs one request through the dispatcher on conn with request
// number request and returns the typed payload, or the reply's IggyError
// as an *apiError. It is the only place the HTTP layer touches the
// binary protocol: header in, reply header and body out.
func (s *Server) serve(conn *session.Conn, code wire.Command, request uint64, req body) (outcome, error) {
	return s.serveInto(nil, conn, code, request, req)
}

// serveInto is serve with the reply payload appended to dst (a reusable
// buffer of the caller). A request already in its wire form (encoded) is
// sent without a copy.
func (s *Server) serveInto(dst []byte, conn *session.Conn, code wire.Command, request uint64, req body) (outcome, error) {
	info, ok := wire.LookupCommand(code)
	if !ok {
		return outcome{}, codeError(wire.ErrInvalidCommand.Code)
	}
	var raw []byte
	if e, ok := req.(encoded); ok {
		raw = e
	} else if req != nil {
		raw = req.AppendTo(nil)
	}
	b, _ := conn.Binding()
	x := &dispatch.Exchange{Body: raw, Conn: conn}
	x.Header = wire.RequestHeader{
		Prologue:  wire.Prologue{Size: uint32(wire.HeaderSize + len(raw))},
		Client:    b.Client,
		Timestamp: uint64(s.now().UnixMicro()),
		Operation: info.Operation,
	}
	if info.Operation == wire.OpNonReplicated {
		x.Header.Code = code
	} else {
		x.Header.Session, x.Header.Request = b.Session, request
		if info.Plane == wire.PlaneMetadata {
			x.Header.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(raw)}
		}
	}
	s.disp.Serve(x)
	defer x.Reset()
	if x.Evicted() {
		return outcome{}, errEvicted
	}
	var h wire.ReplyHeader
	if err := h.Decode(x.Head[:]); err != nil {
		return outcome{}, codeError(wire.ErrInvalidCommand.Code)
	}
	if h.Status != 0 {
		return outcome{}, codeError(h.Status)
	}
	out := append(dst[:0], x.Out...)
	if x.Tail != nil {
		buf := bytes.NewBuffer(out)
		buf.Grow(int(x.Tail.Len()))
		if _, err := x.Tail.WriteTo(buf); err != nil {
			return outcome{}, codeError(wire.ErrError.Code)
		}
		out = buf.Bytes()
	}
	if h.Operation.ResultFramed() {
		p, err := wire.SplitResult(out)
		if err != nil {
			return outcome{}, codeError(wire.CodeOf(err))
		}
		out = p
	}
	return outcome{payload: out}, nil
}

// read runs a read command as the credential's user on a connection bound
// without any session (http-api.md §8: reads create nothing).
func (s *Server) read(c *credential, code wire.Command, req body) (outcome, error) {
	return s.readInto(nil, c, code, req)
}

// readInto is read with the reply payload appended to dst.
func (s *Server) readInto(dst []byte, c *credential, code wire.Command, req body) (outcome, error) {
	conn := session.ReadConn(s.readClient, c.user, "http")
	return s.serveInto(dst, conn, code, 0, req)
}

// write runs a control-plane write on the credential's session: one at a
// time per session, request numbers strictly increasing. An eviction (the
// client table dropped the entry) registers again and retries once.
func (s *Server) write(c *credential, code wire.Command, req body) (outcome, error) {
	hs := s.sessions.get(c)
	if hs == nil {
		return outcome{}, errUnavailable()
	}
	hs.ctrl.Lock()
	defer hs.ctrl.Unlock()
	for attempt := 0; ; attempt++ {
		conn, err := s.sessions.conn(hs)
		if err != nil {
			return outcome{}, &apiError{Status: 503, ID: wire.ErrTransientNotAccepted.Code, Code: "transient_not_accepted", Reason: "Transient not accepted", RetryAfter: true}
		}
		out, err := s.serve(conn, code, hs.next.Add(1), req)
		if errors.Is(err, errEvicted) {
			hs.lost(conn)
			if attempt == 0 {
				continue
			}
			return outcome{}, codeError(wire.ErrInvalidCommand.Code)
		}
		return out, err
	}
}

// partitionWrite runs a produce or offset write on the credential's
// session, without the control-plane lock, under the caps of §8 (32 per
// session: 429; 128 per node: 503).
func (s *Server) partitionWrite(c *credential, code wire.Command, req body) (outcome, error) {
	hs := s.sessions.get(c)
	if hs == nil {
		return outcome{}, errUnavailable()
	}
	if hs.partitionWrites.Add(1) > maxSessionPartitionWrites {
		hs.partitionWrites.Add(-1)
		return outcome{}, &apiError{Status: 429, ID: 429, Code: "too_many_in_flight_writes", Reason: "Too many in-flight writes", RetryAfter: true}
	}
	defer hs.partitionWrites.Add(-1)
	if s.sessions.nodePartitionWrites.Add(1) > maxNodePartitionWrites {
		s.sessions.nodePartitionWrites.Add(-1)
		return outcome{}, &apiError{Status: 503, ID: 503, Code: "server_busy", Reason: "Server busy", RetryAfter: true}
	}
	defer s.sessions.nodePartitionWrites.Add(-1)
	for attempt := 0; ; attempt++ {
		conn, err := s.sessions.conn(hs)
		if err != nil {
			return outcome{}, errUnavailable()
		}
		out, err := s.serve(conn, code, hs.next.Add(1), req)
		if errors.Is(err, errEvicted) {
			hs.lost(conn)
			if attempt == 0 {
				continue
			}
			return outcome{}, codeError(wire.ErrInvalidCommand.Code)
		}
		return out, err
	}
}
