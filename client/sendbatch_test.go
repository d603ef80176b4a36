package client

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// mustBatch encodes msgs with wire.AppendBatch.
func mustBatch(t testing.TB, msgs []wire.Message) []byte {
	t.Helper()
	b, err := wire.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sendBatchMessages is a batch with explicit ids and timestamps (so
// SendMessages mints nothing), user headers and an empty payload.
func sendBatchMessages(t testing.TB, n int) []wire.Message {
	t.Helper()
	hdrs := wire.UserHeaders{{Key: wire.StringHeader("k"), Value: wire.Uint32Header(7)}}.AppendTo(nil)
	msgs := make([]wire.Message, n)
	for i := range msgs {
		msgs[i] = wire.Message{
			ID:              wire.Uint128{Lo: uint64(i + 1), Hi: 42},
			OriginTimestamp: 1_700_000_000_000_000 + uint64(i*3),
			Payload:         []byte("message " + string(rune('a'+i%26))),
		}
		if i%3 == 1 {
			msgs[i].UserHeaders = hdrs
		}
	}
	msgs[n-1].Payload = nil
	return msgs
}

// TestSendBatchFrameMatchesSendMessages sends the same messages with
// SendMessages and, encoded by wire.AppendBatch, with SendBatch: the two
// frames must be identical except for the request number, which each
// send advances.
func TestSendBatchFrameMatchesSendMessages(t *testing.T) {
	for _, tc := range []struct {
		name          string
		stream, topic wire.Identifier
		part          wire.Partitioning
		n             int
	}{
		{"numeric ids, partition 2, one message", wire.NumericID(1), wire.NumericID(2), wire.PartitioningByID(2), 1},
		{"named ids, by key, 10 messages", wire.NamedID("orders"), wire.NamedID("created"), wire.PartitioningByKey([]byte("user-1")), 10},
		{"balanced, 500 messages", wire.NumericID(7), wire.NamedID("t"), wire.BalancedPartitioning(), 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, nil)
			c := dialFake(t, s)
			ctx := ctxTimeout(t)
			msgs := sendBatchMessages(t, tc.n)
			if _, err := c.SendMessages(ctx, tc.stream, tc.topic, tc.part, msgs); err != nil {
				t.Fatal(err)
			}
			batch := mustBatch(t, msgs)
			orig := append([]byte(nil), batch...)
			conf, err := c.SendBatch(ctx, tc.stream, tc.topic, tc.part, batch)
			if err != nil {
				t.Fatal(err)
			}
			if len(conf) != 1 {
				t.Fatalf("confirmations %+v", conf)
			}
			if string(batch) != string(orig) {
				t.Fatal("SendBatch changed the caller's batch")
			}
			var sends []fakeReq
			for _, r := range s.requests() {
				if r.Hdr.Operation == wire.OpSendMessages {
					sends = append(sends, r)
				}
			}
			if len(sends) != 2 {
				t.Fatalf("%d sends, want 2", len(sends))
			}
			viaMsgs, viaBatch := sends[0], sends[1]
			if viaMsgs.Hdr.Request != 1 || viaBatch.Hdr.Request != 2 {
				t.Fatalf("request numbers %d, %d; want 1, 2", viaMsgs.Hdr.Request, viaBatch.Hdr.Request)
			}
			a := append([]byte(nil), viaMsgs.Frame...)
			b := append([]byte(nil), viaBatch.Frame...)
			binary.LittleEndian.PutUint64(a[offRequest:], 0)
			binary.LittleEndian.PutUint64(b[offRequest:], 0)
			if string(a) != string(b) {
				t.Fatalf("frames differ beyond the request number (%d and %d bytes)", len(a), len(b))
			}
			var sm wire.SendMessages
			if _, err := sm.Admit(viaBatch.Body); err != nil {
				t.Fatalf("the server would refuse the frame: %v", err)
			}
			if sm.MessagesCount != uint32(tc.n) || string(sm.Batch) != string(orig) {
				t.Fatalf("body carries count %d and a different batch", sm.MessagesCount)
			}
		})
	}
}

// TestSendBatchRejects: a batch whose layout is wrong, or bad metadata,
// fails before anything is sent, with wire.ErrInvalidCommand (or the
// metadata's error); a batch with a wrong checksum but a sound layout is
// sent as is, for the server to refuse.
func TestSendBatchRejects(t *testing.T) {
	good := mustBatch(t, sendBatchMessages(t, 3))
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name  string
		batch []byte
		id    wire.Identifier
		want  error
	}{
		{"nil", nil, wire.NumericID(1), wire.ErrInvalidCommand},
		{"header only, no message", edit(func(b []byte) []byte {
			b = b[:wire.BatchHeaderSize]
			binary.LittleEndian.PutUint64(b[wire.BatchOffLength:], wire.BatchHeaderSize)
			binary.LittleEndian.PutUint32(b[wire.BatchOffMessageCount:], 0)
			return b
		}), wire.NumericID(1), wire.ErrInvalidCommand},
		{"truncated", good[:len(good)-1], wire.NumericID(1), wire.ErrInvalidCommand},
		{"two batches", append(append([]byte(nil), good...), good...), wire.NumericID(1), wire.ErrInvalidCommand},
		{"count mismatch", edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[wire.BatchOffMessageCount:], 4)
			return b
		}), wire.NumericID(1), wire.ErrInvalidCommand},
		{"reserved byte set", edit(func(b []byte) []byte { b[wire.BatchHeaderSize-1] = 1; return b }), wire.NumericID(1), wire.ErrInvalidCommand},
		{"invalid stream name", good, wire.NamedID(""), wire.ErrInvalidIdentifier},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, nil)
			c := dialFake(t, s)
			_, err := c.SendBatch(ctxTimeout(t), tc.id, wire.NumericID(1), wire.PartitioningByID(0), tc.batch)
			if err == nil {
				t.Fatal("SendBatch accepted it")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if ce, ok := errors.AsType[*CommandError](err); !ok || ce.Command != wire.CmdSendMessages {
				t.Fatalf("err = %v, want a SendMessages CommandError", err)
			}
			for _, r := range s.requests() {
				if r.Hdr.Operation == wire.OpSendMessages {
					t.Fatal("a request was sent")
				}
			}
		})
	}
	t.Run("bad checksum is sent", func(t *testing.T) {
		s := newFakeServer(t, nil)
		c := dialFake(t, s)
		bad := edit(func(b []byte) []byte { b[wire.BatchOffChecksum] ^= 1; return b })
		if _, err := c.SendBatch(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0), bad); err != nil {
			t.Fatal(err)
		}
		reqs := s.requests()
		var sm wire.SendMessages
		if _, err := sm.Admit(reqs[len(reqs)-1].Body); !errors.Is(err, wire.ErrInvalidBatchChecksum) {
			t.Fatalf("admission of the sent body: %v, want the batch checksum error", err)
		}
	})
}

// TestSendBatchAllocsPerMessage: a call's allocations do not grow with
// the number of messages in the batch (the fixed cost is the frame, the
// call and the reply).
func TestSendBatchAllocsPerMessage(t *testing.T) {
	s := newSinkServer(t)
	c, err := Dial(t.Context(), s.ln.Addr().String(), WithCredentials("u", "p"), WithHeartbeat(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxTimeout(t)
	allocs := func(n int) float64 {
		batch := mustBatch(t, sendBatchMessages(t, n))
		return testing.AllocsPerRun(50, func() {
			if _, err := c.SendBatch(ctx, wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0), batch); err != nil {
				t.Fatal(err)
			}
		})
	}
	one, many := allocs(1), allocs(1000)
	// A per-message allocation would add about 1000; the slack absorbs
	// the runtime's and the test server's incidental allocations.
	if many > one+10 {
		t.Fatalf("%.0f allocations per call for 1000 messages, %.0f for 1", many, one)
	}
	t.Logf("allocations per call: %.0f (1 message), %.0f (1000 messages)", one, many)
}
