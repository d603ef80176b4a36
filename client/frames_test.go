package client

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestSendBatchReusesFrame: repeated SendBatch calls of a 1 MB batch copy
// it into a reused frame, so the bytes allocated per call are a small
// fraction of the batch (a new frame per call would allocate more than
// the batch each time).
func TestSendBatchReusesFrame(t *testing.T) {
	s := newSinkServer(t)
	c, err := Dial(t.Context(), s.ln.Addr().String(), WithCredentials("u", "p"), WithHeartbeat(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs := make([]wire.Message, 1000)
	payload := make([]byte, 1000)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.Uint128{Lo: uint64(i + 1)}, OriginTimestamp: 1, Payload: payload}
	}
	batch := mustBatch(t, msgs)
	ctx := ctxTimeout(t)
	send := func() {
		if _, err := c.SendBatch(ctx, wire.NumericID(1), wire.NumericID(1), wire.PartitioningByID(0), batch); err != nil {
			t.Fatal(err)
		}
	}
	send() // the first call allocates the frame
	const calls = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		send()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	if perCall > uint64(len(batch))/10 {
		t.Fatalf("%d bytes allocated per SendBatch of a %d-byte batch, want under a tenth", perCall, len(batch))
	}
	t.Logf("%d bytes allocated per call for a %d-byte batch", perCall, len(batch))
}

// TestSendBatchFramesStayIntact: consecutive SendBatch calls with
// different batches and targets, sharing the reused frame, each put
// exactly their own batch on the wire.
func TestSendBatchFramesStayIntact(t *testing.T) {
	s := newFakeServer(t, nil)
	c := dialFake(t, s)
	ctx := ctxTimeout(t)
	var want [][]byte
	for i, n := range []int{500, 3, 200, 1} {
		batch := mustBatch(t, sendBatchMessages(t, n))
		want = append(want, append([]byte(nil), batch...))
		if _, err := c.SendBatch(ctx, wire.NumericID(uint32(i+1)), wire.NamedID("t"), wire.PartitioningByID(uint32(i)), batch); err != nil {
			t.Fatal(err)
		}
	}
	var got []wire.SendMessages
	for _, r := range s.requests() {
		if r.Hdr.Operation != wire.OpSendMessages {
			continue
		}
		var sm wire.SendMessages
		if _, err := sm.Admit(r.Body); err != nil {
			t.Fatalf("send %d: the server would refuse the frame: %v", len(got)+1, err)
		}
		got = append(got, sm)
	}
	if len(got) != len(want) {
		t.Fatalf("%d sends, want %d", len(got), len(want))
	}
	for i, sm := range got {
		if string(sm.Batch) != string(want[i]) || sm.Partitioning.PartitionID != uint32(i) {
			t.Fatalf("send %d carries another batch or partition (%d)", i+1, sm.Partitioning.PartitionID)
		}
	}
}

// TestPollBufferAbandoned: a poll abandoned before its reply gives up the
// PollBuffer's memory (the reader may still fill it), so the next poll
// through the buffer cannot share memory with the one in flight.
func TestPollBufferAbandoned(t *testing.T) {
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		return r.Command() == wire.CmdPollMessages // never answered
	})
	c := dialFake(t, s)
	pb := PollBuffer{buf: make([]byte, 0, 4096)}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.PollMessagesBuffer(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)),
		StreamID: wire.NumericID(1), TopicID: wire.NumericID(1), Strategy: wire.FirstStrategy(), Count: 1}, &pb)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	if pb.buf != nil {
		t.Fatal("the buffer of an abandoned poll is still handed out")
	}
}
