// Command consumer-group consumes a topic as a member of a consumer group:
// start several copies and the server splits the partitions between
// them; stop one and the others take its partitions over.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/wire"
)

func main() {
	var conn examples.Conn
	conn.Flags(flag.CommandLine)
	group := flag.String("group", "example-group", "consumer group name (created when missing)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, conn, *group); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, conn examples.Conn, group string) error {
	c, err := conn.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	co, err := c.NewConsumer(ctx, wire.NamedID(conn.Stream), wire.NamedID(conn.Topic),
		wire.GroupConsumer(wire.NamedID(group)),
		client.WithCreateGroup(),
		client.WithCommitInterval(time.Second),
		client.WithRebalanceHandler(func(a client.Assignment) {
			log.Printf("assigned partitions %v (generation %d)", a.Partitions, a.Generation)
		}))
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
	// Leave the group so the partitions move to the other members now.
	return co.Close(context.Background())
}
