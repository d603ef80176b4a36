package partition

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// ServeForwarded runs a partition request another node forwarded here
// (the replication call handler of forwarding, forward.go) and returns
// the reply frame as the client would have received it from this node,
// or a "not the leader" answer when this node does not lead the
// partition the request was routed to (nothing ran). ctx bounds the
// request's waits. Only the five partition commands are served.
func (p *Plane) ServeForwarded(ctx context.Context, from replication.NodeID, payload []byte) ([]byte, error) {
	req, err := decodeForward(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", replication.ErrCallRefused, err)
	}
	code, ok := req.header.Command()
	if !ok {
		return nil, fmt.Errorf("%w: %w: operation %d", replication.ErrCallRefused, errBadForward, req.header.Operation)
	}
	handler := p.forwardedHandler(code)
	if handler == nil {
		return nil, fmt.Errorf("%w: command %d is not forwarded", replication.ErrCallRefused, code)
	}
	x := &dispatch.Exchange{Header: req.header, Body: req.body,
		Conn: session.ForwardedConn(ctx, req.binding, fmt.Sprintf("replica %d", from))}
	if req.header.Operation == wire.OpNonReplicated {
		x.Info, _ = wire.LookupCommand(code)
	} else {
		x.Info, _ = wire.CommandForOperation(req.header.Operation)
	}
	defer x.Reset()
	fwd := &remoteRequest{partition: req.partition}
	handler(x, fwd)
	if fwd.notLeader {
		out := make([]byte, 10)
		out[0] = forwardNotLeader
		if fwd.hasLeader {
			out[1] = 1
		}
		binary.LittleEndian.PutUint64(out[2:], uint64(fwd.leader))
		return out, nil
	}
	if !x.Answered {
		x.Deny(wire.ErrFeatureUnavailable.Code) // as the dispatcher does
	}
	return replyFrame(x)
}

// forwardedHandler is the handler of a forwarded command.
func (p *Plane) forwardedHandler(code wire.Command) func(*dispatch.Exchange, *remoteRequest) {
	switch code {
	case wire.CmdSendMessages:
		return p.sendAt
	case wire.CmdPollMessages:
		return p.pollAt
	case wire.CmdGetConsumerOffset:
		return p.getOffsetAt
	case wire.CmdStoreConsumerOffset:
		return p.storeOffsetAt
	case wire.CmdDeleteConsumerOffset:
		return p.deleteOffsetAt
	}
	return nil
}

// replyFrame is the forward reply of x's answer: the status byte, the
// header, the body and the Tail, in one buffer. A poll reply's stored
// records are read straight into it.
func replyFrame(x *dispatch.Exchange) ([]byte, error) {
	n := 1 + wire.HeaderSize + len(x.Out)
	if x.Tail != nil {
		n += int(x.Tail.Len())
	}
	out := make([]byte, 0, n)
	out = append(out, forwardServed)
	out = append(out, x.Head[:]...)
	out = append(out, x.Out...)
	if x.Tail == nil {
		return out, nil
	}
	var err error
	if r, ok := x.Tail.(*pollReply); ok {
		out, err = r.appendTo(out)
	} else {
		w := appendWriter{b: out}
		_, err = x.Tail.WriteTo(&w)
		out = w.b
	}
	if err != nil {
		return nil, fmt.Errorf("read the poll reply: %w", err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("poll reply of %d bytes, %d announced", len(out)-1, n-1)
	}
	return out, nil
}

// appendWriter appends what is written to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var _ io.Writer = (*appendWriter)(nil)
