package itest

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterRefusesPartitionsBeyondDescriptors: with room for four more
// partitions under the leader's open-file limit, a topic of five and five
// added partitions are refused with TooManyPartitions; four fit.
func TestClusterRefusesPartitionsBeyondDescriptors(t *testing.T) {
	limit := broker.WithFileLimit(func() (int, int, bool) { return 100, 100 + 256 + 3*4, true })
	tc := startCluster(t, 3, WithBrokerOptions(limit))
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectStatus(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 5, Name: "big"}), wire.ErrTooManyPartitions.Code)
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("s"), PartitionsCount: 4, Name: "fits"}))
	ExpectStatus(t, c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("fits"), PartitionsCount: 5}), wire.ErrTooManyPartitions.Code)
	ExpectOK(t, c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("fits"), PartitionsCount: 4}))
}
