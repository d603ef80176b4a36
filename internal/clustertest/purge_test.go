//go:build !windows

package clustertest

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestPollRightAfterPurge: PURGE_TOPIC answers once the purge has applied
// to the answering node's partitions, so a poll there right after the
// reply returns none of the messages sent before it, and a send after it
// is kept on every node.
func TestPollRightAfterPurge(t *testing.T) {
	h := StartCluster(t, 3)
	const partitions = 3
	w := NewWorkload(t, h, partitions)
	c, _ := h.DialLeader()
	defer c.Close()
	id := uint64(1)
	for round := range 5 {
		for p := range uint32(partitions) {
			for range 3 {
				batch, err := oneMessage(id)
				if err != nil {
					t.Fatal(err)
				}
				id++
				if _, err := c.Send(w.Stream, w.Topic, p, batch); err != nil {
					t.Fatalf("round %d: send to partition %d: %v", round, p, err)
				}
			}
		}
		if _, err := c.Command(wire.OpPurgeTopic, &wire.PurgeTopic{StreamID: w.Stream, TopicID: w.Topic}); err != nil {
			t.Fatalf("round %d: purge: %v", round, err)
		}
		for p := range uint32(partitions) {
			got, err := c.Poll(w.Stream, w.Topic, p, 0, 100)
			if err != nil {
				t.Fatalf("round %d: poll partition %d: %v", round, p, err)
			}
			if got.Count != 0 {
				t.Fatalf("round %d: a poll right after the purge reply returned %d messages of partition %d", round, got.Count, p)
			}
		}
	}
	batch, err := oneMessage(id)
	if err != nil {
		t.Fatal(err)
	}
	if base, err := c.Send(w.Stream, w.Topic, 0, batch); err != nil || base != 0 {
		t.Fatalf("send after the purges: base %d, %v", base, err)
	}
	for i := range h.N() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			msgs, err := w.readAll(i)
			n := 0
			for _, m := range msgs {
				n += len(m)
			}
			if err == nil && n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d holds %d messages after the purges and one send (err %v), want 1", i, n, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
