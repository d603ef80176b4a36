// Command produce sends messages with the SDK's batching Producer: keyed
// messages land on XXH32(key) % partitions, so all events of one user stay
// in order on one partition.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/examples"
	"github.com/iggo-dev/iggo/wire"
)

func main() {
	var conn examples.Conn
	conn.Flags(flag.CommandLine)
	count := flag.Int("count", 1000, "messages to send")
	users := flag.Int("users", 10, "distinct message keys")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, conn, *count, *users); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, conn examples.Conn, count, users int) error {
	c, err := conn.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := conn.Ensure(ctx, c); err != nil {
		return err
	}
	var stored atomic.Int64
	p, err := c.NewProducer(ctx, wire.NamedID(conn.Stream), wire.NamedID(conn.Topic),
		client.WithLinger(5*time.Millisecond),
		client.WithDeliveryHandler(func(r client.DeliveryReport) {
			if r.Err == nil {
				stored.Add(int64(r.Messages))
			}
		}))
	if err != nil {
		return err
	}
	start := time.Now()
	for i := range count {
		user := "user-" + strconv.Itoa(i%users)
		msg := client.Message{
			Key:     []byte(user),
			Payload: []byte(fmt.Sprintf(`{"user":%q,"event":%d}`, user, i)),
			Headers: wire.UserHeaders{{Key: wire.StringHeader("source"), Value: wire.StringHeader("example")}},
		}
		if err := p.Send(ctx, msg); err != nil {
			return err
		}
	}
	if err := p.Close(ctx); err != nil {
		return err
	}
	fmt.Printf("stored %d messages in %v\n", stored.Load(), time.Since(start).Round(time.Millisecond))
	return nil
}
