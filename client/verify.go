package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// VerifyPartition re-verifies the stored records of a topic's partition
// (partition present) or of all its partitions, on the node this client
// talks to (VERIFY_PARTITION, an Iggo extension): every record of the
// sealed segments and their index is read and checked, unthrottled, and
// the reply lists per partition what was checked and every damaged range
// quarantined there. In a cluster each node verifies its own replicas; a
// partition the node holds no replica of is reported wire.VerifyNotHeld.
// It needs manage_topic on the topic. The reply comes once the whole
// topic was read: give ctx (and WithResponseTimeout) room for it.
func (c *Client) VerifyPartition(ctx context.Context, stream, topic wire.Identifier, partition wire.OptPartition) (*wire.VerifyPartitionReply, error) {
	var r wire.VerifyPartitionReply
	if err := c.call(ctx, wire.CmdVerifyPartition, &wire.VerifyPartition{StreamID: stream, TopicID: topic, Partition: partition}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
