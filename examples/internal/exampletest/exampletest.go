// Package exampletest helps the tests of the example programs.
package exampletest

import (
	"context"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/wire"
)

// WaitOffsets polls until consumer has stored, on every partition of the
// topic, the offset of its last message; tests of the consuming examples
// use it to know the example has handled everything.
func WaitOffsets(t testing.TB, c *client.Client, conn examples.Conn, consumer wire.Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, topic := wire.NamedID(conn.Stream), wire.NamedID(conn.Topic)
	for {
		td, err := c.GetTopic(ctx, stream, topic)
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, p := range td.Partitions {
			if p.MessagesCount == 0 {
				continue
			}
			off, err := c.GetConsumerOffset(ctx, consumer, stream, topic, wire.SomePartition(p.ID))
			if err != nil {
				t.Fatal(err)
			}
			done = done && off != nil && off.StoredOffset == p.CurrentOffset
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the example did not store its offsets")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
