package client

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// NewMessageID returns a random UUIDv4 as a message id, as the official
// SDKs mint when the user gives none (messages.md: the server never mints
// ids). The UUID bytes are stored verbatim: byte i of the UUID is byte i
// of the little-endian u128.
func NewMessageID() wire.Uint128 {
	lo, hi := rand.Uint64(), rand.Uint64()
	lo = lo&^(0xf0<<48) | 0x40<<48 // byte 6: version 4 in the high nibble
	hi = hi&^0xc0 | 0x80           // byte 8: variant 10
	return wire.Uint128{Lo: lo, Hi: hi}
}

// nowMicros is the current time in µs since the Unix epoch.
func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }

// sendFrame is a SEND_MESSAGES request whose batch is encoded in place
// behind the request header and the metadata section, so a message is
// copied once, from the caller into the frame.
type sendFrame struct {
	cl      *call
	countAt int // frame offset of the metadata messages_count
	b       wire.BatchBuilder
}

// openSend begins a SEND_MESSAGES frame in buf (reused when its capacity
// is at least batchCap bytes beyond the request header and the metadata
// section, else allocated): header space and metadata are written, the
// batch is to be appended by the caller.
func openSend(buf []byte, stream, topic wire.Identifier, p wire.Partitioning, batchCap int) (*sendFrame, error) {
	sm := wire.SendMessages{StreamID: stream, TopicID: topic, Partitioning: p}
	if err := sm.Validate(); err != nil {
		return nil, err
	}
	need := wire.HeaderSize + 4 + sm.MetadataLen() + batchCap
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	cl := newCallBuf(wire.CmdSendMessages, buf)
	cl.frame = sm.AppendTo(cl.frame) // metadata only: Batch is empty
	cl.route = sendRoute(stream, topic, p)
	return &sendFrame{cl: cl, countAt: len(cl.frame) - 4}, nil
}

// startSend is openSend with the batch encoded in place by the builder
// (add, then finish); capHint is the expected size of the frames.
func startSend(buf []byte, stream, topic wire.Identifier, p wire.Partitioning, capHint int) (*sendFrame, error) {
	s, err := openSend(buf, stream, topic, p, wire.BatchHeaderSize+capHint)
	if err != nil {
		return nil, err
	}
	s.b.Reset(s.cl.frame)
	return s, nil
}

// add appends one message; a zero id gets NewMessageID and a zero
// timestamp the current time.
func (s *sendFrame) add(id wire.Uint128, ts uint64, payload, headers []byte) error {
	if id.IsZero() {
		id = NewMessageID()
	}
	if ts == 0 {
		ts = nowMicros()
	}
	return s.b.Add(id, ts, payload, headers)
}

// finish completes the batch built with add and seals the request.
func (s *sendFrame) finish(client wire.Uint128) (*call, error) {
	n := s.b.Count()
	frame, err := s.b.Finish()
	if err != nil {
		return nil, err
	}
	return s.seal(frame, uint32(n), client), nil
}

// seal takes frame (the frame begun by openSend with a batch of count
// messages appended), writes the metadata messages_count and seals the
// request.
func (s *sendFrame) seal(frame []byte, count uint32, client wire.Uint128) *call {
	binary.LittleEndian.PutUint32(frame[s.countAt:], count)
	s.cl.frame = frame
	s.cl.seal(client)
	return s.cl
}

// SendMessages sends msgs as one batch (SEND_MESSAGES, code 101) and
// returns the server's confirmations (one, with the offset of the first
// message, from our broker and the reference server; none when the
// server recognized the request as a duplicate of one already stored).
// Messages with a zero ID get a random UUIDv4, a zero OriginTimestamp the
// current time. Partitioning by balanced or key is resolved by the
// server; the Producer resolves it client-side instead.
//
// The request takes a request number, so when the connection breaks
// before the reply it is resent after the reconnect with the same client
// id and number, and a server with a partition duplicate window stores it
// once.
func (c *Client) SendMessages(ctx context.Context, stream, topic wire.Identifier, partitioning wire.Partitioning, msgs []wire.Message) ([]wire.SendConfirmation, error) {
	size := 0
	for i := range msgs {
		size += wire.MessageHeaderSize + len(msgs[i].Payload) + len(msgs[i].UserHeaders)
	}
	s, err := startSend(nil, stream, topic, partitioning, size)
	if err != nil {
		return nil, wrapCmd(wire.CmdSendMessages, err)
	}
	for i := range msgs {
		m := &msgs[i]
		if err := s.add(m.ID, m.OriginTimestamp, m.Payload, m.UserHeaders); err != nil {
			return nil, wrapCmd(wire.CmdSendMessages, err)
		}
	}
	cl, err := s.finish(c.id)
	if err != nil {
		return nil, wrapCmd(wire.CmdSendMessages, err)
	}
	return c.send(ctx, cl)
}

// SendBatch sends an already encoded batch (SEND_MESSAGES, code 101):
// the 256-byte batch header and the 48-byte-header frames of messages.md,
// as wire.BatchBuilder and wire.AppendBatch produce them. It is
// SendMessages for callers that build a batch once and send it many times
// (benchmarks, replay, forwarding): the frame on the wire is byte for byte
// what SendMessages sends for the same messages, and numbering, transient
// retries and resends after a reconnect are the same.
//
// Client-side, batch is only checked for layout with wire.ParseBatch
// (header, lengths, frames tiling it exactly, message_count ≥ 1) and must
// be exactly one batch; a failure is wire.ErrInvalidCommand and nothing is
// sent. Frame and batch checksums are not verified here — the caller built
// the batch and the server verifies both at admission, answering
// wire.ErrInvalidMessageChecksum (4027) or wire.ErrInvalidBatchChecksum
// (4039) — so the call costs no hashing. The header is sent as given: a
// producer writes partition_id, base_offset and base_timestamp 0 (the
// server stamps them) and the batch checksum must match the header as
// sent. The metadata messages_count is taken from the batch header.
//
// Cost: the batch is copied once, into the request frame, which the call
// owns until it completes (a resend after a reconnect needs it), so batch
// may be changed or reused as soon as SendBatch returns. Nothing is
// allocated per message: a call allocates its frame (header, metadata and
// batch), its bookkeeping and the decoded confirmations.
//
// Example, one batch built once and sent repeatedly:
//
//	msgs := []wire.Message{
//		{ID: client.NewMessageID(), OriginTimestamp: uint64(time.Now().UnixMicro()), Payload: []byte("a")},
//		{ID: client.NewMessageID(), OriginTimestamp: uint64(time.Now().UnixMicro()), Payload: []byte("b")},
//	}
//	batch, err := wire.AppendBatch(nil, msgs)
//	if err != nil { ... }
//	for range 10 {
//		conf, err := c.SendBatch(ctx, wire.NamedID("orders"), wire.NamedID("created"), wire.PartitioningByID(0), batch)
//		if err != nil { ... }
//		_ = conf[0].BaseOffset // offset of the batch's first message
//	}
//
// Unlike SendMessages, zero ids and timestamps are sent as they are: the
// batch is not re-encoded. The batch is copied once, into a request frame
// the Client reuses from one answered call to the next, so a steady
// stream of batches allocates no frame per call.
func (c *Client) SendBatch(ctx context.Context, stream, topic wire.Identifier, partitioning wire.Partitioning, batch []byte) ([]wire.SendConfirmation, error) {
	v, rest, err := wire.ParseBatch(batch)
	if err == nil && len(rest) != 0 {
		err = wire.ErrInvalidCommand // more than one batch
	}
	if err != nil {
		return nil, wrapCmd(wire.CmdSendMessages, err)
	}
	s, err := openSend(c.frames.get(maxSendOverhead+wire.MaxNameLen+len(batch)), stream, topic, partitioning, len(batch))
	if err != nil {
		return nil, wrapCmd(wire.CmdSendMessages, err)
	}
	cl := s.seal(append(s.cl.frame, batch...), v.MessageCount(), c.id)
	conf, err := c.send(ctx, cl)
	if !cl.abandoned.Load() {
		// Answered (or never sent): no connection holds the frame.
		c.frames.put(cl.frame)
	}
	return conf, err
}

// send runs a sealed SEND_MESSAGES call and decodes its confirmations.
func (c *Client) send(ctx context.Context, cl *call) ([]wire.SendConfirmation, error) {
	payload, err := c.roundTrip(ctx, cl)
	if err != nil {
		return nil, wrapCmd(wire.CmdSendMessages, err)
	}
	var r wire.SendMessagesReply
	if err := decodeReply(wire.CmdSendMessages, payload, &r); err != nil {
		return nil, err
	}
	return r.Confirmations, nil
}

// PollMessages polls messages (POLL_MESSAGES, code 100). The reply's
// records alias a buffer owned by the result, which the client never
// reuses, so messages may be kept. For a consumer-group poll the server
// answers an empty reply with PartitionID wire.PollResyncPartition when
// the caller must re-sync its assignment (semantics.md §4.2).
func (c *Client) PollMessages(ctx context.Context, req wire.PollMessages) (*wire.PolledMessages, error) {
	if err := validateTarget(req.Consumer, req.StreamID, req.TopicID); err != nil {
		return nil, wrapCmd(wire.CmdPollMessages, err)
	}
	if err := req.Strategy.Validate(); err != nil {
		return nil, wrapCmd(wire.CmdPollMessages, err)
	}
	var p wire.PolledMessages
	if err := c.call(ctx, wire.CmdPollMessages, &req, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FlushUnsavedBuffer asks the server to write a partition's buffered
// messages to disk (FLUSH_UNSAVED_BUFFER, code 102). The reference server
// and ours answer wire.ErrFeatureUnavailable.
func (c *Client) FlushUnsavedBuffer(ctx context.Context, stream, topic wire.Identifier, partition uint32, fsync bool) error {
	req := &wire.FlushUnsavedBuffer{StreamID: stream, TopicID: topic, PartitionID: partition, Fsync: fsync}
	return c.call(ctx, wire.CmdFlushUnsavedBuffer, req, nil)
}
