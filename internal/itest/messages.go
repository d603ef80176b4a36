package itest

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// Batch builds a producer batch of payloads with wire.BatchBuilder: ids
// firstID, firstID+1, ... and origin timestamps 1000, 1001, ...
func Batch(t testing.TB, firstID uint64, payloads ...[]byte) []byte {
	t.Helper()
	var b wire.BatchBuilder
	b.Reset(nil)
	for i, p := range payloads {
		if err := b.Add(wire.Uint128{Lo: firstID + uint64(i)}, 1000+uint64(i), p, nil); err != nil {
			t.Fatalf("batch: %v", err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	return out
}

// SendBody encodes a SEND_MESSAGES body around batch.
func SendBody(stream, topic wire.Identifier, p wire.Partitioning, batch []byte) []byte {
	s := wire.SendMessages{StreamID: stream, TopicID: topic, Partitioning: p}
	s.SetBatch(batch)
	return s.AppendTo(nil)
}

// SendHeader is the request header of a partition-plane operation with
// the counter advanced, as the Rust SDK does (upstream-framing.md,
// "Request numbering"). Tests of the duplicate window set Next themselves.
func (c *Client) SendHeader(op wire.Operation) wire.RequestHeader {
	h := wire.RequestHeader{Client: c.ID, Operation: op, Session: c.Session, Request: c.Next}
	c.Next++
	return h
}

// SendMessages sends a SEND_MESSAGES body and returns the answer.
func (c *Client) SendMessages(body []byte) Frame {
	c.t.Helper()
	return c.Do(c.SendHeader(wire.OpSendMessages), body)
}

// MustSend sends batch to (stream, topic, partitioning) and returns the
// single confirmation, failing the test on anything else.
func (c *Client) MustSend(stream, topic wire.Identifier, p wire.Partitioning, batch []byte) wire.SendConfirmation {
	c.t.Helper()
	f := c.SendMessages(SendBody(stream, topic, p, batch))
	var r wire.SendMessagesReply
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		c.t.Fatalf("send answered %v", f)
	}
	if err := r.Decode(f.Body); err != nil || len(r.Confirmations) != 1 {
		c.t.Fatalf("send reply % x: %v", f.Body, err)
	}
	return r.Confirmations[0]
}

// Poll sends POLL_MESSAGES and decodes a status-0 reply.
func (c *Client) Poll(req wire.PollMessages) (wire.PolledMessages, Frame) {
	c.t.Helper()
	f := c.Call(wire.CmdPollMessages, req.AppendTo(nil))
	var out wire.PolledMessages
	if f.Kind == wire.KindReply && f.Reply.Status == 0 {
		if err := out.Decode(f.Body); err != nil {
			c.t.Fatalf("poll reply does not decode: %v", err)
		}
	}
	return out, f
}

// MustPoll polls and fails unless the answer is a status-0 reply.
func (c *Client) MustPoll(req wire.PollMessages) wire.PolledMessages {
	c.t.Helper()
	out, f := c.Poll(req)
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		c.t.Fatalf("poll answered %v", f)
	}
	return out
}

// StoreOffset sends STORE_CONSUMER_OFFSET.
func (c *Client) StoreOffset(req wire.StoreConsumerOffset) Frame {
	c.t.Helper()
	return c.Do(c.SendHeader(wire.OpStoreConsumerOffset), req.AppendTo(nil))
}

// DeleteOffset sends DELETE_CONSUMER_OFFSET.
func (c *Client) DeleteOffset(req wire.DeleteConsumerOffset) Frame {
	c.t.Helper()
	return c.Do(c.SendHeader(wire.OpDeleteConsumerOffset), req.AppendTo(nil))
}

// GetOffset sends GET_CONSUMER_OFFSET and decodes the reply.
func (c *Client) GetOffset(req wire.GetConsumerOffset) (wire.ConsumerOffset, bool, Frame) {
	c.t.Helper()
	f := c.Call(wire.CmdGetConsumerOffset, req.AppendTo(nil))
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		return wire.ConsumerOffset{}, false, f
	}
	off, found, err := wire.DecodeConsumerOffsetReply(f.Body)
	if err != nil {
		c.t.Fatalf("offset reply % x: %v", f.Body, err)
	}
	return off, found, f
}

// ExpectResultOK fails unless f is a status-0 reply with an empty result
// section ([0 u32]).
func ExpectResultOK(t testing.TB, f Frame) {
	t.Helper()
	if f.Kind != wire.KindReply || f.Reply.Status != 0 || len(f.Body) != 4 || binary.LittleEndian.Uint32(f.Body) != 0 {
		t.Fatalf("got %v (body % x), want an empty result section", f, f.Body)
	}
}

// Payloads returns n distinct payloads of size bytes.
func Payloads(n, size int, tag string) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		p := make([]byte, size)
		s := fmt.Sprintf("%s-%d-", tag, i)
		for j := range p {
			p[j] = s[j%len(s)]
		}
		out[i] = p
	}
	return out
}
