//go:build !windows

package clustertest

import (
	"context"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/clusterinfo/local"
	"github.com/iggo-dev/iggo/wire"
)

// TestOfficialSDKClusterPaths drives, with raw requests, what the official
// 0.11.0 SDKs do against a node that holds no partition: a four-node
// cluster whose node 0 is metadata-only, so every partition lives on
// nodes 1-3 (the compatibility suite's cluster run does the same with the
// SDKs themselves, in five nodes).
//
//   - GET_TOPIC and GET_STATS on node 0 report the messages the other
//     nodes hold (they used to report 0);
//   - consumer routing (wire/consumer_routing.go): GET_POLL_ROUTING names
//     the partition's leader and the client's session; a data connection
//     attached there with ATTACH_CONSUMER_SESSION polls as the group member
//     (POLL_MESSAGES_ON_PRIMARY) and stores offsets with its own request
//     numbers; a node that does not lead the partition answers those 58
//     instead of forwarding them; a stale session is refused with 30;
//   - a poll's auto-commit is visible to the next offset read at once.
func TestOfficialSDKClusterPaths(t *testing.T) {
	t.Setenv("IGGY_CLUSTER_NODES_0_METADATA_ONLY", "true")
	h := StartCluster(t, 4)
	stream, topic := wire.NamedID("s"), wire.NamedID("t")
	const partitions, perPartition = 3, 4
	lc, leader := h.DialLeader()
	defer lc.Close()
	if _, err := lc.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := lc.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: stream, PartitionsCount: partitions, Name: "t"}); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dial := func(i int) *local.Conn {
		t.Helper()
		c, err := local.DialLogin(ctx, h.Addr(i))
		if err != nil {
			t.Fatalf("log in at node %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c0 := dial(0)
	for p := range uint32(partitions) {
		for m := range perPartition {
			batch, err := oneMessage(uint64(100*p) + uint64(m) + 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c0.Send(stream, topic, p, batch); err != nil {
				t.Fatalf("send to partition %d through node 0: %v", p, err)
			}
		}
	}

	// Counters through a node that holds none of the partitions.
	body, err := c0.Call(wire.CmdGetTopic, &wire.GetTopic{StreamID: stream, TopicID: topic})
	if err != nil {
		t.Fatal(err)
	}
	var td wire.TopicDetails
	if err := td.Decode(body); err != nil {
		t.Fatal(err)
	}
	if td.MessagesCount != partitions*perPartition || len(td.Partitions) != partitions {
		t.Fatalf("GET_TOPIC on node 0: %d messages in %d partitions, want %d in %d", td.MessagesCount, len(td.Partitions), partitions*perPartition, partitions)
	}
	for _, p := range td.Partitions {
		if p.MessagesCount != perPartition || p.CurrentOffset != perPartition-1 || p.SizeBytes == 0 {
			t.Fatalf("GET_TOPIC on node 0, partition %d: %+v", p.ID, p)
		}
	}
	if body, err = c0.Call(wire.CmdGetStats, nil); err != nil {
		t.Fatal(err)
	}
	var st wire.Stats
	if err := st.Decode(body); err != nil {
		t.Fatal(err)
	}
	if st.MessagesCount != partitions*perPartition {
		t.Fatalf("GET_STATS on node 0: %d messages, want %d", st.MessagesCount, partitions*perPartition)
	}

	// A consumer group whose member's coordinator is the metadata leader.
	group := wire.NamedID("g")
	if _, err := lc.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: stream, TopicID: topic, Name: "g"}); err != nil {
		t.Fatalf("create group: %v", err)
	}
	if _, err := lc.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}); err != nil {
		t.Fatalf("join group: %v", err)
	}
	m, err := partitionMap(h, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A partition the coordinator does not lead, and its leader.
	part, primary := uint32(0), -1
	for _, tp := range m.Topics {
		for _, pl := range tp.Partitions {
			if pl.HasLeader && int(pl.Leader) != leader && primary < 0 {
				part, primary = pl.PartitionID, int(pl.Leader)
			}
		}
	}
	if primary < 0 {
		t.Fatalf("no partition led by another node than the coordinator %d: %+v", leader, m)
	}
	poll := wire.PollMessages{Consumer: wire.GroupConsumer(group), StreamID: stream, TopicID: topic,
		Partition: wire.SomePartition(part), Strategy: wire.NextStrategy(), Count: 2, AutoCommit: true}
	if body, err = lc.Call(wire.CmdGetPollRouting, &poll); err != nil {
		t.Fatalf("GET_POLL_ROUTING: %v", err)
	}
	var route wire.PollRouting
	if err := route.Decode(body); err != nil {
		t.Fatal(err)
	}
	if route.Session.Client != lc.ID || route.Session.Session != lc.Session() || route.Session.MetadataWatermark == 0 {
		t.Fatalf("route session %+v, want client %v session %d and a watermark", route.Session, lc.ID, lc.Session())
	}
	if want := h.Layout.Nodes[primary].TCP; route.Primary.TCPPort != want || route.Primary.IP != "127.0.0.1" {
		t.Fatalf("route primary %+v, want node %d (port %d)", route.Primary, primary, want)
	}

	// Elsewhere than on the leader, primary-only requests are refused.
	if _, err := c0.Call(wire.CmdPollMessagesOnPrimary, &poll); local.ErrorCode(err) != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("POLL_MESSAGES_ON_PRIMARY on node 0: %v, want 58", err)
	}

	data := dial(primary)
	// Not attached: the data connection is no member of the group.
	if body, err = data.Call(wire.CmdPollMessagesOnPrimary, &poll); err != nil {
		t.Fatal(err)
	}
	var got wire.PolledMessages
	if err := got.Decode(body); err != nil || got.Count != 0 {
		t.Fatalf("group poll of an unattached connection: %d messages, %v", got.Count, err)
	}
	stale := route.Session
	stale.Session++
	if _, err := data.Call(wire.CmdAttachConsumerSession, &stale); local.ErrorCode(err) != wire.ErrStaleClient.Code {
		t.Fatalf("attach to another epoch: %v, want 30", err)
	}
	if _, err := data.Call(wire.CmdAttachConsumerSession, &route.Session); err != nil {
		t.Fatalf("ATTACH_CONSUMER_SESSION at node %d: %v", primary, err)
	}
	if body, err = data.Call(wire.CmdPollMessagesOnPrimary, &poll); err != nil {
		t.Fatalf("POLL_MESSAGES_ON_PRIMARY: %v", err)
	}
	if err := got.Decode(body); err != nil || got.Count != 2 || got.PartitionID != part {
		t.Fatalf("attached group poll: partition %d, %d messages, %v", got.PartitionID, got.Count, err)
	}
	offset := func(c *local.Conn) (uint64, bool) {
		t.Helper()
		get := wire.GetConsumerOffset{Consumer: poll.Consumer, StreamID: stream, TopicID: topic, Partition: poll.Partition}
		body, err := c.Call(wire.CmdGetConsumerOffset, &get)
		if err != nil {
			t.Fatal(err)
		}
		if len(body) == 0 {
			return 0, false
		}
		var o wire.ConsumerOffset
		if err := o.Decode(body); err != nil {
			t.Fatal(err)
		}
		return o.StoredOffset, true
	}
	// The auto-commit is read back at once, through any node.
	if off, ok := offset(c0); !ok || off != 1 {
		t.Fatalf("group offset after the auto-commit poll, read through node 0: %d %v, want 1", off, ok)
	}
	store := wire.StoreConsumerOffset{Consumer: poll.Consumer, StreamID: stream, TopicID: topic, Partition: poll.Partition, Offset: 3, Ack: wire.AckQuorum}
	if _, err := data.Command(wire.OpStoreConsumerOffset, &store); err != nil {
		t.Fatalf("offset store on the attached data connection: %v", err)
	}
	if off, ok := offset(lc); !ok || off != 3 {
		t.Fatalf("group offset after the store: %d %v, want 3", off, ok)
	}
	// An attached connection on a node that does not lead the partition
	// (node 0 leads none) gets 58 for its offset write, and the SDK asks
	// for the route again.
	if _, err := c0.Call(wire.CmdAttachConsumerSession, &route.Session); err != nil {
		t.Fatalf("attach at node 0: %v", err)
	}
	store.Offset = 2
	if _, err := c0.Command(wire.OpStoreConsumerOffset, &store); local.ErrorCode(err) != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("offset store of an attached connection on node 0: %v, want 58", err)
	}
	if _, err := data.Call(wire.CmdGetConsumerOffsetRouting, &wire.GetConsumerOffset{Consumer: poll.Consumer, StreamID: stream, TopicID: topic, Partition: wire.SomePartition(partitions)}); local.ErrorCode(err) != wire.ErrPartitionNotFound.Code {
		t.Fatalf("routing of a partition that does not exist: %v, want %d", err, wire.ErrPartitionNotFound.Code)
	}
	t.Logf("coordinator node %d, partition %d led by node %d", leader, part, primary)
}
