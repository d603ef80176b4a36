package itest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestClusterForwarding: a client connected to a follower sends, polls,
// stores, reads and deletes consumer offsets, and polls as a consumer
// group member; every request is forwarded to the partition's leader and
// answered with the leader's reply. The follower's answers carry the
// leader's commit (replica, view, op), the data it reads is what the
// leader serves, byte for byte, and every replica stores it.
func TestClusterForwarding(t *testing.T) {
	tc := startCluster(t, 3)
	c := tc.nodes[0].Dial(t)
	c.LoginRoot()
	s, tp := wire.NamedID("s"), wire.NamedID("t")
	ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: s, PartitionsCount: 3, Name: "t"}))

	f := tc.nodes[1].Dial(t)
	f.LoginRoot()
	// Sends by partition id and balanced, through the follower.
	stored := [3]uint64{}
	for i := range 6 {
		part := wire.PartitioningByID(uint32(i % 3))
		if i >= 3 {
			part = wire.BalancedPartitioning()
		}
		body := SendBody(s, tp, part, Batch(t, uint64(100*i+1), Payloads(5, 64, fmt.Sprint(i))...))
		fr := f.SendMessages(body)
		// 58 (not accepted: nothing stored) while a new topic's partition
		// still elects its leader; a client sends again, as here.
		for deadline := time.Now().Add(10 * time.Second); fr.Reply.Status == wire.ErrTransientNotAccepted.Code && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			fr = f.SendMessages(body)
		}
		var rep wire.SendMessagesReply
		if fr.Reply.Status != 0 || rep.Decode(fr.Body) != nil || len(rep.Confirmations) != 1 {
			t.Fatalf("send %d through the follower answered %v", i, fr)
		}
		conf := rep.Confirmations[0]
		if h := fr.Reply; h.Replica != partitionLeader(t, c, conf.PartitionID) || h.Op == 0 || h.Commit != h.Op || h.View == 0 || h.Cluster.IsZero() {
			t.Fatalf("send %d: the reply must be the partition leader's committed one: %+v", i, h)
		}
		if conf.BaseOffset != stored[conf.PartitionID] {
			t.Fatalf("send %d to partition %d stored at %d, want %d", i, conf.PartitionID, conf.BaseOffset, stored[conf.PartitionID])
		}
		stored[conf.PartitionID] += 5
	}
	if stored != [3]uint64{10, 10, 10} {
		t.Fatalf("stored per partition %v", stored)
	}

	// Polls through the follower read what the leader serves.
	poll := func(cl *Client, p uint32) wire.PolledMessages {
		return cl.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: s, TopicID: tp,
			Partition: wire.SomePartition(p), Strategy: wire.OffsetStrategy(0), Count: 1000})
	}
	for p := range uint32(3) {
		got, want := poll(f, p), poll(c, p)
		if got.Count != 10 || got.PartitionID != want.PartitionID || got.CurrentOffset != want.CurrentOffset || !bytes.Equal(got.Records, want.Records) {
			t.Fatalf("partition %d: the follower's poll (%d messages) differs from the leader's (%d)", p, got.Count, want.Count)
		}
	}

	// Consumer offsets through the follower.
	offReq := func(p uint32) (wire.Consumer, wire.OptPartition) {
		return wire.SingleConsumer(wire.NumericID(9)), wire.SomePartition(p)
	}
	cons, part := offReq(1)
	ExpectResultOK(t, f.StoreOffset(wire.StoreConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp, Partition: part, Offset: 7, Ack: wire.AckQuorum}))
	get := wire.GetConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp, Partition: part}
	for _, cl := range []*Client{f, c} {
		if off, found, fr := cl.GetOffset(get); !found || off.StoredOffset != 7 || off.CurrentOffset != 9 || off.PartitionID != 1 {
			t.Fatalf("stored offset read back: %+v %v (%v)", off, found, fr)
		}
	}
	ExpectResultOK(t, f.DeleteOffset(wire.DeleteConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp, Partition: part, Ack: wire.AckQuorum}))
	if _, found, _ := f.GetOffset(get); found {
		t.Fatal("the deleted offset is still there")
	}

	// A consumer group member (joined through the metadata leader) polls
	// through the follower under its client id: the leader checks the
	// membership by that id and auto-commits the group's offset.
	ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: s, TopicID: tp, Name: "g"}))
	join := wire.JoinConsumerGroup{StreamID: s, TopicID: tp, GroupID: wire.NamedID("g")}
	ExpectOK(t, c.Command(wire.OpJoinConsumerGroup, &join))
	m := tc.nodes[2].Dial(t)
	m.ID = c.ID
	m.LoginRoot()
	group := wire.GroupConsumer(wire.NamedID("g"))
	req := wire.PollMessages{Consumer: group, StreamID: s, TopicID: tp, Partition: wire.SomePartition(2), Strategy: wire.NextStrategy(), Count: 4, AutoCommit: true}
	deadline := time.Now().Add(5 * time.Second)
	var got wire.PolledMessages
	for {
		// The membership reaches the partition leader with the metadata
		// log; until then the member is told to re-sync.
		if got = m.MustPoll(req); got.PartitionID != wire.PollResyncPartition || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.PartitionID != 2 || got.Count != 4 {
		t.Fatalf("group poll through a follower: partition %#x, %d messages", got.PartitionID, got.Count)
	}
	groupGet := wire.GetConsumerOffset{Consumer: group, StreamID: s, TopicID: tp, Partition: wire.SomePartition(2)}
	deadline = time.Now().Add(5 * time.Second)
	for {
		off, found, _ := m.GetOffset(groupGet)
		if found && off.StoredOffset == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group offset after the auto-commit: %+v %v", off, found)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if next := m.MustPoll(req); next.Count != 4 || firstOffset(t, next) != 4 {
		t.Fatalf("the next group poll continues at %d (%d messages)", firstOffset(t, next), next.Count)
	}

	// Every replica stores what the leader serves.
	for i := range tc.nodes {
		waitStored(t, tc, i, []uint64{10, 10, 10})
	}
}

// firstOffset is the offset of the first message of a poll.
func firstOffset(t *testing.T, p wire.PolledMessages) uint64 {
	t.Helper()
	it := p.Messages()
	m, ok := it.Next()
	if !ok {
		t.Fatal("empty poll")
	}
	return m.Offset
}

// waitStored waits until node i stores want[p] messages in partition p of
// topic s/t (read from its own partition plane, not through a poll, which
// a follower forwards to the leader).
func waitStored(t *testing.T, tc *testCluster, i int, want []uint64) {
	t.Helper()
	b := tc.nodes[i].Broker
	ref, _, err := b.Metadata().ResolveTopic(wire.NamedID("s"), wire.NamedID("t"))
	if err != nil {
		t.Fatalf("node %d: %v", i, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := make([]uint64, len(want))
		for p := range got {
			got[p] = b.Partitions().PartitionStats(ref, uint32(p)).Messages
		}
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d stores %v messages, want %v", i, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// partitionLeader is the leader of partition p of the only topic, as the
// partition map of the node behind c says.
func partitionLeader(t *testing.T, c *Client, p uint32) uint8 {
	t.Helper()
	var m wire.PartitionMap
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdClusterPartitions, nil)), &m)
	for _, tp := range m.Topics {
		for _, pl := range tp.Partitions {
			if pl.PartitionID == p && pl.HasLeader {
				return pl.Leader
			}
		}
	}
	t.Fatalf("partition %d has no known leader in %+v", p, m)
	return 0
}
