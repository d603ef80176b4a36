package transport

import (
	"bytes"
	"testing"
)

// TestLargeMessagesAndBufferReuse sends a message larger than the buffers
// a peer keeps between flushes, then small ones: each arrives intact, so
// neither the writer's nor the reader's buffer change corrupts a frame.
func TestLargeMessagesAndBufferReuse(t *testing.T) {
	a := newNode(t, Config{Self: 0, Secret: []byte(secret)})
	b := newNode(t, Config{Self: 1, Secret: []byte(secret)})
	link(map[NodeID]*node{0: a, 1: b})
	waitFor(t, "connection", func() bool { return a.t.Connected(1) })
	big := bytes.Repeat([]byte("0123456789abcdef"), (maxRetainedBuffer+1<<20)/16)
	want := []string{string(big), "small-1", string(big[:3<<20]), "small-2"}
	for i, d := range want {
		a.t.Send(1, []Envelope{raftEnv(9, uint64(i), d)})
		waitFor(t, "delivery", func() bool { n, _ := b.rec.counts(); return n == i+1 })
	}
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	for i, e := range b.rec.got {
		if got := e.Msg.GetEntries()[0].GetData(); string(got) != want[i] || e.Msg.GetIndex() != uint64(i) {
			t.Fatalf("message %d: %d bytes at index %d, want %d bytes", i, len(got), e.Msg.GetIndex(), len(want[i]))
		}
	}
	if _, u := a.rec.counts(); u != 0 {
		t.Fatalf("%d envelopes unreachable", u)
	}
}
