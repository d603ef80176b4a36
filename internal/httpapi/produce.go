package httpapi

import (
	"encoding/base64"

	"github.com/iggo-dev/iggo/wire"
)

// maxPooledProduce is the largest produce buffer kept in the pool;
// bigger ones (rare, up to http.max_request_size) go to the collector.
const maxPooledProduce = 4 << 20

// produceState is the reusable memory of one produce request: the body
// as read, the scanned messages, the base64 scratch and the encoded
// SEND_MESSAGES request the batch is built into.
type produceState struct {
	body    []byte
	msgs    []produceMsg
	payload []byte
	req     []byte
	batch   wire.BatchBuilder
}

// getProduce takes a produceState from the server's pool.
func (s *Server) getProduce() *produceState {
	ps, _ := s.produces.Get().(*produceState)
	if ps == nil {
		return new(produceState)
	}
	ps.reset()
	return ps
}

// reset drops oversized buffers so one huge request does not pin memory.
func (ps *produceState) reset() {
	if cap(ps.body) > maxPooledProduce {
		ps.body = nil
	}
	if cap(ps.req) > maxPooledProduce {
		ps.req = nil
	}
	if cap(ps.payload) > maxPooledProduce {
		ps.payload = nil
	}
	clear(ps.msgs)
	ps.msgs = ps.msgs[:0]
}

// encoded is a request body already in its wire form; serve sends it
// as is.
type encoded []byte

// AppendTo implements body.
func (e encoded) AppendTo(dst []byte) []byte { return append(dst, e...) }

// produceRequest reads and checks the produce body and returns the
// SEND_MESSAGES request, built in ps (valid until ps is reused).
func (c *call) produceRequest(ps *produceState, s, t wire.Identifier) (encoded, error) {
	data, err := c.readBody(ps.body[:0])
	if err != nil {
		return nil, err
	}
	ps.body = data
	pb, ok := scanProduce(data, ps.msgs)
	if ok {
		ps.msgs = pb.msgs
	} else if pb, err = decodeProduceJSON(data); err != nil {
		return nil, err
	}
	return buildProduce(ps, pb, s, t, uint64(c.s.now().UnixMicro()))
}

// decodeProduceJSON is the full reading of a produce body with
// encoding/json: every key is checked (unknown keys anywhere are 422,
// http-api.md §7: only the produce body is strict), and errors carry
// encoding/json's text.
func decodeProduceJSON(data []byte) (produceBody, error) {
	var req SendMessagesRequest
	if err := decodeJSON(data, &req, true); err != nil {
		return produceBody{}, err
	}
	if req.Partitioning == nil || req.Messages == nil {
		return produceBody{}, errUnprocessable("partitioning and messages are required")
	}
	p := req.Partitioning
	if p.Kind == nil || p.Value == nil {
		return produceBody{}, errUnprocessable("partitioning.kind and partitioning.value are required")
	}
	pb := produceBody{kind: *p.Kind, value: *p.Value, msgs: make([]produceMsg, 0, len(*req.Messages))}
	for _, m := range *req.Messages {
		pm := produceMsg{headers: m.UserHeaders, missing: m.Payload == nil}
		if m.ID != nil {
			pm.id = wire.Uint128(*m.ID)
		}
		if m.Payload != nil {
			pm.payload = []byte(*m.Payload)
		}
		pb.msgs = append(pb.msgs, pm)
	}
	return pb, nil
}

// buildProduce applies the produce rules to a parsed body, in this order:
// partitioning, a non-empty message list, then per message a base64,
// non-empty payload of at most MaxPayloadBytes and valid user headers; the
// batch layout's own refusals (wire.BatchBuilder.Add) come last. A zero or
// absent id gets a random UUIDv4. The batch is built straight after the
// request's metadata in ps.req.
func buildProduce(ps *produceState, pb produceBody, s, t wire.Identifier, now uint64) (encoded, error) {
	part, err := partitioning(pb.kind, pb.value)
	if err != nil {
		return nil, err
	}
	if len(pb.msgs) == 0 {
		return nil, codeError(wire.ErrInvalidMessagesCount.Code)
	}
	head := wire.SendMessages{StreamID: s, TopicID: t, Partitioning: part, MessagesCount: uint32(len(pb.msgs))}
	ps.req = head.AppendTo(ps.req[:0])
	ps.batch.Reset(ps.req)
	var addErr error
	for i := range pb.msgs {
		m := &pb.msgs[i]
		if m.missing {
			return nil, errUnprocessable("message payload is required")
		}
		ps.payload = growLen(ps.payload, base64.StdEncoding.DecodedLen(len(m.payload)))
		n, err := base64.StdEncoding.Decode(ps.payload, m.payload)
		if err != nil {
			return nil, errUnprocessable("message payload is not base64")
		}
		payload := ps.payload[:n]
		if n == 0 {
			return nil, errUnprocessable("message payload must not be empty")
		}
		if n > MaxPayloadBytes {
			return nil, codeError(wire.ErrInvalidCommand.Code)
		}
		uh, err := userHeaders(m.headers)
		if err != nil {
			return nil, err
		}
		id := m.id
		if id.IsZero() {
			id = randomID()
		}
		if addErr == nil {
			addErr = ps.batch.Add(id, now, payload, uh)
		}
	}
	if addErr != nil {
		return nil, codeError(wire.CodeOf(addErr))
	}
	req, err := ps.batch.Finish()
	if err != nil {
		return nil, codeError(wire.CodeOf(err))
	}
	ps.req = req
	return encoded(req), nil
}

// growLen returns b with length n, reallocating only when its capacity is
// short.
func growLen(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
