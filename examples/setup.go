package examples

import (
	"context"
	"errors"
	"flag"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
)

// Conn holds the connection flags every example takes.
type Conn struct {
	Addr, Username, Password string
	Stream, Topic            string
	Partitions               uint
}

// Flags registers the connection flags on fs.
func (c *Conn) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8090", "server address")
	fs.StringVar(&c.Username, "username", "iggy", "user name")
	fs.StringVar(&c.Password, "password", "iggy", "password")
	fs.StringVar(&c.Stream, "stream", "example-stream", "stream name")
	fs.StringVar(&c.Topic, "topic", "example-topic", "topic name")
	fs.UintVar(&c.Partitions, "partitions", 3, "partitions of the topic when it is created")
}

// Dial connects and logs in.
func (c *Conn) Dial(ctx context.Context) (*client.Client, error) {
	return client.Dial(ctx, c.Addr, client.WithCredentials(c.Username, c.Password))
}

// Ensure creates the stream and the topic when they do not exist yet.
func (c *Conn) Ensure(ctx context.Context, cl *client.Client) error {
	stream, topic := wire.NamedID(c.Stream), wire.NamedID(c.Topic)
	_, err := cl.GetStream(ctx, stream)
	if errors.Is(err, wire.ErrStreamIDNotFound) {
		_, err = cl.CreateStream(ctx, c.Stream)
	}
	if err != nil && !errors.Is(err, wire.ErrStreamNameAlreadyExists) {
		return err
	}
	_, err = cl.GetTopic(ctx, stream, topic)
	if errors.Is(err, wire.ErrTopicIDNotFound) {
		_, err = cl.CreateTopic(ctx, stream, c.Topic, uint32(c.Partitions))
	}
	if err != nil && !errors.Is(err, wire.ErrTopicNameAlreadyExists) {
		return err
	}
	return nil
}
