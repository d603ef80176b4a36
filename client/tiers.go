package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// PartitionTiers reports how the bytes of each partition of a topic are
// split between local disk and the remote tier of tiered storage, on the
// node this client talks to (PARTITION_TIERS, an Iggo extension), in
// ascending partition id order. With tiered storage off the list is
// empty; a server that does not know the command (an older Iggo, or
// another Iggy server) answers wire.ErrInvalidCommand. It needs
// read_topic on the topic, as GetTopic.
func (c *Client) PartitionTiers(ctx context.Context, stream, topic wire.Identifier) ([]wire.PartitionTiers, error) {
	var r wire.PartitionTiersReply
	if err := c.call(ctx, wire.CmdPartitionTiers, &wire.GetPartitionTiers{StreamID: stream, TopicID: topic}, &r); err != nil {
		return nil, err
	}
	return r.Partitions, nil
}
