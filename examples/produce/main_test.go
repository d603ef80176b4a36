package main

import (
	"testing"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

func TestProduce(t *testing.T) {
	s := itest.Start(t)
	conn := examples.Conn{Addr: s.Addr, Username: itest.RootUsername, Password: itest.RootPassword, Stream: "st", Topic: "tp", Partitions: 3}
	if err := run(t.Context(), conn, 100, 5); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(t.Context(), s.Addr, client.WithCredentials(itest.RootUsername, itest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	td, err := c.GetTopic(t.Context(), wire.NamedID("st"), wire.NamedID("tp"))
	if err != nil {
		t.Fatal(err)
	}
	if td.PartitionsCount != 3 || td.MessagesCount != 100 {
		t.Fatalf("topic after the example: %d partitions, %d messages", td.PartitionsCount, td.MessagesCount)
	}
}
