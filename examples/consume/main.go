// Command consume reads a topic as a single named consumer, from where it
// left off (its stored offsets) unless -from says otherwise, until
// interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/wire"
)

func main() {
	var conn examples.Conn
	conn.Flags(flag.CommandLine)
	name := flag.String("consumer", "example-consumer", "consumer name (offsets are stored under it)")
	from := flag.String("from", "next", "start position without a stored offset: next, first or last")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, conn, *name, *from); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, conn examples.Conn, name, from string) error {
	c, err := conn.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	start := client.StartNext()
	switch from {
	case "first":
		start = client.StartFirst()
	case "last":
		start = client.StartLast()
	}
	co, err := c.NewConsumer(ctx, wire.NamedID(conn.Stream), wire.NamedID(conn.Topic),
		wire.SingleConsumer(wire.NamedID(name)), client.WithStart(start))
	if err != nil {
		return err
	}
	for m, err := range co.Messages(ctx) {
		if err != nil {
			log.Printf("poll: %v", err)
			continue
		}
		fmt.Printf("partition %d offset %d: %s\n", m.Partition, m.Offset, m.Payload)
	}
	// ctx was cancelled: store the handled offsets with a fresh context.
	return co.Close(context.Background())
}
