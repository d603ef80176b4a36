package client

import (
	"context"
	"errors"

	"github.com/iggo-dev/iggo/wire"
)

// PollBuffer is the reply memory of PollMessagesBuffer: each poll through
// it reads its reply into the memory of the previous one, so a consumer
// that polls large batches one after the other allocates (and the garbage
// collector reclaims) nothing per poll once the buffer has grown to the
// largest reply. The zero value is ready to use. A PollBuffer serves one
// poll at a time.
type PollBuffer struct {
	buf []byte
	res wire.PolledMessages
}

// PollMessagesBuffer is PollMessages with the reply read into pb: the
// result and its messages alias pb's memory and are valid until the next
// call with pb. When the call is abandoned (ctx ends before the reply),
// pb gives up its memory to the request still in flight and starts with
// a new buffer next time.
func (c *Client) PollMessagesBuffer(ctx context.Context, req wire.PollMessages, pb *PollBuffer) (*wire.PolledMessages, error) {
	if err := validateTarget(req.Consumer, req.StreamID, req.TopicID); err != nil {
		return nil, wrapCmd(wire.CmdPollMessages, err)
	}
	if err := req.Strategy.Validate(); err != nil {
		return nil, wrapCmd(wire.CmdPollMessages, err)
	}
	cl := newCall(wire.CmdPollMessages, 64)
	cl.frame = req.AppendTo(cl.frame)
	cl.route = routeOf(&req)
	cl.seal(c.id)
	cl.replyBuf = pb.buf
	payload, err := c.roundTrip(ctx, cl)
	if cl.abandoned.Load() || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// A reader may still fill the old memory: never hand it out again.
		pb.buf = nil
	} else if cap(cl.body) > cap(pb.buf) {
		pb.buf = cl.body[:0]
	}
	if err != nil {
		return nil, wrapCmd(wire.CmdPollMessages, err)
	}
	pb.res = wire.PolledMessages{}
	if err := decodeReply(wire.CmdPollMessages, payload, &pb.res); err != nil {
		return nil, err
	}
	return &pb.res, nil
}
