package client

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// pipeAnswer returns the raw bytes to write back for a request and
// whether to close the connection after them.
type pipeAnswer func(h wire.RequestHeader, body []byte) (out []byte, closeAfter bool)

// pipeServer answers a client over net.Pipe: it logs the client in, then
// hands each later request frame to answer.
func pipeServer(nc net.Conn, answer pipeAnswer) {
	defer nc.Close()
	hdr := make([]byte, wire.HeaderSize)
	for {
		if _, err := io.ReadFull(nc, hdr); err != nil {
			return
		}
		body := make([]byte, int(wire.PeekSize(hdr))-wire.HeaderSize)
		if _, err := io.ReadFull(nc, body); err != nil {
			return
		}
		var h wire.RequestHeader
		h.Decode(hdr)
		var out []byte
		closeAfter := false
		if h.Operation == wire.OpRegister {
			r := wire.LoginRegisterReply{Session: 1, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "pipe"}
			out = replyFrame(h, h.Operation, 0, r.AppendTo(wire.AppendResultOK(nil)))
		} else {
			out, closeAfter = answer(h, body)
		}
		if _, err := nc.Write(out); err != nil || closeAfter {
			return
		}
	}
}

// replyFrame encodes a reply to h.
func replyFrame(h wire.RequestHeader, op wire.Operation, status uint32, body []byte) []byte {
	rh := wire.ReplyHeader{Prologue: wire.Prologue{Size: uint32(wire.HeaderSize + len(body))}, Client: h.Client, Request: h.Request, Operation: op, Status: status}
	return append(rh.AppendTo(nil), body...)
}

// pipeClient dials a client whose server is answer, without reconnects
// and without leader following (answer sees only the fuzzed call).
func pipeClient(t testing.TB, answer pipeAnswer) *Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		a, b := net.Pipe()
		go pipeServer(b, answer)
		return a, nil
	}
	c, err := Dial(context.Background(), "pipe:0", WithDialer(dial), WithCredentials("u", "p"),
		WithReconnect(ReconnectPolicy{Disabled: true}), WithHeartbeat(0), WithResponseTimeout(0),
		WithTransientRetry(RetryPolicy{MaxAttempts: -1}), WithClusterPolicy(ClusterPolicy{DisableRedirect: true}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzReplyStream feeds arbitrary bytes to the client's frame reader as
// the server's answer to a PING: no panic, and the call ends.
func FuzzReplyStream(f *testing.F) {
	okPing := replyFrame(wire.RequestHeader{Request: 1}, wire.OpNonReplicated, 0, nil)
	f.Add(okPing)
	f.Add(okPing[:100])
	ev := wire.EvictionHeader{Client: wire.Uint128{Lo: 1}, Reason: wire.EvictStaleClient}
	f.Add(ev.AppendTo(nil))
	big := replyFrame(wire.RequestHeader{Request: 1}, wire.OpNonReplicated, 0, nil)
	big[48] = 0xff
	f.Add(big)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := pipeClient(t, func(h wire.RequestHeader, body []byte) ([]byte, bool) {
			out := append([]byte(nil), data...)
			if len(out) >= wire.HeaderSize && wire.PeekKind(out) == wire.KindReply {
				// Echo the request number so the decoders are reached.
				copy(out[200:208], replyFrame(h, 0, 0, nil)[200:208])
			}
			return out, true
		})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Ping(ctx)
	})
}

// fuzzCalls are the client methods whose reply decoding FuzzReplyBody
// drives, each with the reply operation a server would use.
var fuzzCalls = []struct {
	op  wire.Operation
	run func(ctx context.Context, c *Client) error
}{
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error { _, err := c.GetStats(ctx); return err }},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error { _, err := c.GetMe(ctx); return err }},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error { _, err := c.GetClient(ctx, 1); return err }},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error {
		_, err := c.GetStream(ctx, wire.NumericID(1))
		return err
	}},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error {
		_, err := c.GetTopic(ctx, wire.NumericID(1), wire.NumericID(1))
		return err
	}},
	{wire.OpCreateTopicWithAssignments, func(ctx context.Context, c *Client) error {
		_, err := c.CreateTopic(ctx, wire.NumericID(1), "t", 1)
		return err
	}},
	{wire.OpSendMessages, func(ctx context.Context, c *Client) error {
		_, err := c.SendMessages(ctx, wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0), []wire.Message{{Payload: []byte("x")}})
		return err
	}},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error {
		_, err := c.GetConsumerOffset(ctx, wire.SingleConsumer(wire.NumericID(1)), wire.NumericID(1), wire.NumericID(1), wire.OptPartition{})
		return err
	}},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error {
		_, err := c.SyncConsumerGroup(ctx, wire.NumericID(1), wire.NumericID(1), wire.NumericID(1))
		return err
	}},
	{wire.OpStoreConsumerOffset, func(ctx context.Context, c *Client) error {
		return c.StoreConsumerOffset(ctx, wire.SingleConsumer(wire.NumericID(1)), wire.NumericID(1), wire.NumericID(1), wire.SomePartition(0), 1)
	}},
	{wire.OpNonReplicated, func(ctx context.Context, c *Client) error {
		co := &Consumer{c: c, stream: wire.NumericID(1), topic: wire.NumericID(1), consumer: wire.SingleConsumer(wire.NumericID(1)),
			opts: consumerOptions{count: 10, commit: CommitNone}, parts: []uint32{0}, pos: map[uint32]uint64{}, handled: map[uint32]uint64{}}
		msgs, err := co.Poll(ctx)
		for _, m := range msgs {
			m.UserHeaders()
		}
		return err
	}},
}

// FuzzReplyBody answers one of the client's typed calls with an arbitrary
// reply operation, status and body: decoding must not panic, and a
// reported success must come with a status of 0.
func FuzzReplyBody(f *testing.F) {
	f.Add(uint8(0), uint8(wire.OpNonReplicated), uint32(0), []byte{})
	f.Add(uint8(5), uint8(wire.OpCreateTopicWithAssignments), uint32(0), wire.AppendResultError(nil, 2013))
	f.Add(uint8(6), uint8(wire.OpSendMessages), uint32(0), (&wire.SendMessagesReply{Confirmations: []wire.SendConfirmation{{PartitionID: 1}}}).AppendTo(nil))
	f.Add(uint8(10), uint8(wire.OpNonReplicated), uint32(0), wire.AppendPollReplyHead(nil, 0, 0, 0))
	f.Add(uint8(8), uint8(wire.OpNonReplicated), uint32(0), (&wire.ConsumerGroupAssignment{Generation: 1, Partitions: []uint32{2}}).AppendTo(nil))
	f.Add(uint8(1), uint8(wire.OpNonReplicated), uint32(41), []byte{})
	f.Fuzz(func(t *testing.T, which, op uint8, status uint32, body []byte) {
		fc := fuzzCalls[int(which)%len(fuzzCalls)]
		c := pipeClient(t, func(h wire.RequestHeader, _ []byte) ([]byte, bool) {
			return replyFrame(h, wire.Operation(op), status, body), false
		})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := fc.run(ctx, c); err == nil && status != 0 {
			t.Fatalf("status %d reported as success", status)
		}
	})
}
