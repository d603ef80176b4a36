package main

import (
	"context"
	"testing"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/examples/internal/exampletest"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

func TestConsumerGroup(t *testing.T) {
	s := itest.Start(t)
	conn := examples.Conn{Addr: s.Addr, Username: itest.RootUsername, Password: itest.RootPassword, Stream: "st", Topic: "tp", Partitions: 3}
	c, err := client.Dial(t.Context(), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := conn.Ensure(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	for p := range uint32(3) {
		if _, err := c.SendMessages(t.Context(), wire.NamedID("st"), wire.NamedID("tp"), wire.PartitioningByID(p),
			[]wire.Message{{Payload: []byte("job")}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, conn, "workers") }()
	exampletest.WaitOffsets(t, c, conn, wire.GroupConsumer(wire.NamedID("workers")))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Close left the group.
	g, err := c.GetConsumerGroup(t.Context(), wire.NamedID("st"), wire.NamedID("tp"), wire.NamedID("workers"))
	if err != nil || g.MembersCount != 0 {
		t.Fatalf("group after the example: %+v, %v", g, err)
	}
}
