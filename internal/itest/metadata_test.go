package itest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/wire"
)

// Metadata-plane commands through real connections: every command's
// success reply and its failure replies (semantics.md §3, commands.md).

func decodeInto(t testing.TB, payload []byte, b wire.Body) {
	t.Helper()
	if err := b.Decode(payload); err != nil {
		t.Fatalf("decode %T: %v (payload % x)", b, err, payload)
	}
}

func sid(n uint32) wire.Identifier { return wire.NumericID(n) }

func name(s string) wire.Identifier { return wire.NamedID(s) }

// expectOp fails unless the reply carries operation op.
func expectOp(t testing.TB, f Frame, op wire.Operation) {
	t.Helper()
	if f.Reply.Operation != op {
		t.Fatalf("reply operation %v, want %v", f.Reply.Operation, op)
	}
}

func TestStreamCommands(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()

	f := c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "orders"})
	var sd wire.StreamDetails
	decodeInto(t, ExpectOK(t, f), &sd)
	if sd.ID != 0 || sd.Name != "orders" || sd.CreatedAt == 0 || sd.TopicsCount != 0 {
		t.Fatalf("created %+v", sd)
	}
	if f.Reply.Op == 0 || f.Reply.Commit != f.Reply.Op {
		t.Fatalf("committed reply op %d commit %d", f.Reply.Op, f.Reply.Commit)
	}
	expectOp(t, f, wire.OpCreateStream)
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "audit"})), &sd)
	if sd.ID != 1 {
		t.Fatalf("second stream id %d", sd.ID)
	}

	// Failures of CREATE_STREAM.
	ExpectResult(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "orders"}), wire.ErrStreamNameAlreadyExists.Code)
	ExpectStatus(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "x", Options: wire.Options{wire.StringOption("k", "v")}}), wire.ErrUnsupportedOptionKey.Code)
	ExpectStatus(t, c.CommandRaw(wire.OpCreateStream, []byte{0}), wire.ErrInvalidCommand.Code)
	ExpectStatus(t, c.CommandRaw(wire.OpCreateStream, []byte{2, 0xff, 0xfe}), wire.ErrInvalidCommand.Code)
	dupKeys := append(wire.Options{wire.StringOption("k", "v")}.AppendTo([]byte{1, 'x'}), wire.Options{wire.StringOption("k", "w")}.AppendTo(nil)...)
	ExpectStatus(t, c.CommandRaw(wire.OpCreateStream, dupKeys), wire.ErrInvalidCommand.Code)

	// Reads.
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: name("orders")})), &sd)
	if sd.ID != 0 {
		t.Fatalf("GET_STREAM by name: %+v", sd)
	}
	if b := ExpectPlain(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: sid(77)})); len(b) != 0 {
		t.Fatalf("GET_STREAM of a missing stream: % x", b)
	}
	ExpectStatus(t, c.Call(wire.CmdGetStream, []byte{9}), wire.ErrInvalidCommand.Code)
	var list wire.Streams
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetStreams, nil)), &list)
	if len(list) != 2 || list[0].Name != "orders" || list[1].Name != "audit" {
		t.Fatalf("GET_STREAMS %+v", list)
	}

	// UPDATE_STREAM.
	ExpectOK(t, c.Command(wire.OpUpdateStream, &wire.UpdateStream{StreamID: sid(1), Name: "audit-log"}))
	ExpectOK(t, c.Command(wire.OpUpdateStream, &wire.UpdateStream{StreamID: sid(1), Name: "audit-log"}))
	ExpectResult(t, c.Command(wire.OpUpdateStream, &wire.UpdateStream{StreamID: sid(1), Name: "orders"}), wire.ErrStreamNameAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpUpdateStream, &wire.UpdateStream{StreamID: sid(9), Name: "x"}), wire.ErrStreamIDNotFound.Code)
	ExpectStatus(t, c.Command(wire.OpUpdateStream, &wire.UpdateStream{StreamID: sid(1), Name: "y", Options: wire.Options{wire.StringOption("k", "v")}}), wire.ErrUnsupportedOptionKey.Code)
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: name("audit-log")})), &sd)

	// PURGE and DELETE.
	ExpectOK(t, c.Command(wire.OpPurgeStream, &wire.PurgeStream{StreamID: sid(0)}))
	ExpectResult(t, c.Command(wire.OpPurgeStream, &wire.PurgeStream{StreamID: sid(5)}), wire.ErrStreamIDNotFound.Code)
	ExpectOK(t, c.Command(wire.OpDeleteStream, &wire.DeleteStream{StreamID: name("orders")}))
	ExpectResult(t, c.Command(wire.OpDeleteStream, &wire.DeleteStream{StreamID: name("orders")}), wire.ErrStreamIDNotFound.Code)
	// The lowest free id is reused.
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "again"})), &sd)
	if sd.ID != 0 {
		t.Fatalf("recycled id %d, want 0", sd.ID)
	}
	// An undecodable DELETE_STREAM body ends the session (Eviction 5).
	ExpectEviction(t, c.CommandRaw(wire.OpDeleteStream, []byte{1, 4, 0}), wire.EvictInvalidRequestBody)
}

// mkStream creates a stream as c and returns its id.
func mkStream(t *testing.T, c *Client, n string) uint32 {
	t.Helper()
	var sd wire.StreamDetails
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: n})), &sd)
	return sd.ID
}

// mkTopic creates a topic and returns its details.
func mkTopic(t *testing.T, c *Client, stream uint32, n string, partitions uint32, opts wire.Options) wire.TopicDetails {
	t.Helper()
	f := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: sid(stream), PartitionsCount: partitions, Name: n, Options: opts})
	var td wire.TopicDetails
	decodeInto(t, ExpectOK(t, f), &td)
	expectOp(t, f, wire.OpCreateTopicWithAssignments)
	return td
}

func getTopic(t *testing.T, c *Client, stream, topic wire.Identifier) wire.TopicDetails {
	t.Helper()
	var td wire.TopicDetails
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetTopic, &wire.GetTopic{StreamID: stream, TopicID: topic})), &td)
	return td
}

func TestTopicCommands(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "orders")

	td := mkTopic(t, c, st, "eu", 3, wire.Options{wire.StringOption(wire.TopicOptMessageExpiry, "7 days"), wire.BoolOption(wire.TopicOptEnforceFsync, true)})
	if td.ID != 0 || td.Name != "eu" || len(td.Partitions) != 3 || td.Partitions[2].ID != 2 {
		t.Fatalf("created %+v", td)
	}
	if td.MessageExpiry != 7*24*3600*1_000_000 || len(td.Options) != 2 || len(td.DerivedOptions) != len(wire.OptionCatalog(wire.OptionScopeTopic))-2 {
		t.Fatalf("options: expiry %d explicit %v derived %v", td.MessageExpiry, td.Options, td.DerivedOptions)
	}
	got := getTopic(t, c, name("orders"), name("eu"))
	if diff := cmp.Diff(td, got, cmpEmpty); diff != "" {
		t.Fatalf("GET_TOPIC differs from the create reply (-create +get):\n%s", diff)
	}
	mkTopic(t, c, st, "empty", 0, nil)

	// CREATE_TOPIC failures.
	for _, tc := range []struct {
		name   string
		req    wire.CreateTopic
		status uint32
		result uint32
	}{
		{"too many partitions", wire.CreateTopic{StreamID: sid(st), PartitionsCount: 1001, Name: "t"}, wire.ErrTooManyPartitions.Code, 0},
		{"unknown option", wire.CreateTopic{StreamID: sid(st), Name: "t", Options: wire.Options{wire.StringOption("colour", "red")}}, wire.ErrUnsupportedOptionKey.Code, 0},
		{"wrong kind", wire.CreateTopic{StreamID: sid(st), Name: "t", Options: wire.Options{wire.Uint8Option(wire.TopicOptEnforceFsync, 1)}}, wire.ErrInvalidOptionValue.Code, 0},
		{"out of range", wire.CreateTopic{StreamID: sid(st), Name: "t", Options: wire.Options{wire.Uint64Option(wire.TopicOptSegmentSize, 1000)}}, wire.ErrInvalidOptionValue.Code, 0},
		{"size below segment", wire.CreateTopic{StreamID: sid(st), Name: "t", Options: wire.Options{wire.Uint64Option(wire.TopicOptMaxTopicSize, 1<<20)}}, wire.ErrInvalidTopicSize.Code, 0},
		{"duplicate name", wire.CreateTopic{StreamID: sid(st), Name: "eu"}, 0, wire.ErrTopicNameAlreadyExists.Code},
		{"unknown stream", wire.CreateTopic{StreamID: sid(42), Name: "t"}, 0, wire.ErrStreamIDNotFound.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := c.Command(wire.OpCreateTopic, &tc.req)
			if tc.status != 0 {
				ExpectStatus(t, f, tc.status)
			} else {
				ExpectResult(t, f, tc.result)
			}
		})
	}
	dupKeys := append(append((&wire.CreateTopic{StreamID: sid(st), Name: "t"}).AppendTo(nil),
		wire.Options{wire.Uint64Option(wire.TopicOptMessageExpiry, 1)}.AppendTo(nil)...),
		wire.Options{wire.Uint64Option(wire.TopicOptMessageExpiry, 2)}.AppendTo(nil)...)
	ExpectStatus(t, c.CommandRaw(wire.OpCreateTopic, dupKeys), wire.ErrInvalidCommand.Code)
	ExpectStatus(t, c.CommandRaw(wire.OpCreateTopic, []byte{1, 4, 0, 0, 0, 0}), wire.ErrInvalidCommand.Code)

	// GET_TOPICS / GET_TOPIC misses.
	var topics wire.Topics
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetTopics, &wire.GetTopics{StreamID: sid(st)})), &topics)
	if len(topics) != 2 || topics[0].Name != "eu" || topics[1].Name != "empty" {
		t.Fatalf("GET_TOPICS %+v", topics)
	}
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetTopics, &wire.GetTopics{StreamID: sid(9)})), &topics)
	if len(topics) != 0 {
		t.Fatalf("GET_TOPICS of a missing stream: %+v", topics)
	}
	if b := ExpectPlain(t, c.Read(wire.CmdGetTopic, &wire.GetTopic{StreamID: sid(st), TopicID: sid(9)})); len(b) != 0 {
		t.Fatal("GET_TOPIC of a missing topic is not empty")
	}

	// UPDATE_TOPIC.
	ExpectOK(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(st), TopicID: sid(0), Name: "eu-west",
		Options: wire.Options{wire.Uint64Option(wire.TopicOptMessageExpiry, 5_000_000)}}))
	got = getTopic(t, c, sid(st), name("eu-west"))
	if got.MessageExpiry != 5_000_000 || !hasOption(got.Options, wire.TopicOptEnforceFsync) {
		t.Fatalf("after update: %+v", got.Topic)
	}
	ExpectStatus(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(st), TopicID: sid(0), Name: "eu-west",
		Options: wire.Options{wire.Uint64Option(wire.TopicOptSegmentSize, 1<<20)}}), wire.ErrUnsupportedOptionKey.Code)
	ExpectResult(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(st), TopicID: sid(0), Name: "eu-west",
		Options: wire.Options{wire.Uint64Option(wire.TopicOptMaxTopicSize, 1<<20)}}), wire.ErrInvalidTopicSize.Code)
	ExpectResult(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(st), TopicID: sid(0), Name: "empty"}), wire.ErrTopicNameAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(st), TopicID: sid(7), Name: "x"}), wire.ErrTopicIDNotFound.Code)
	ExpectResult(t, c.Command(wire.OpUpdateTopic, &wire.UpdateTopic{StreamID: sid(7), TopicID: sid(0), Name: "x"}), wire.ErrStreamIDNotFound.Code)

	// Partitions.
	f := c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 2})
	if len(ExpectOK(t, f)) != 0 {
		t.Fatal("CREATE_PARTITIONS payload not empty")
	}
	expectOp(t, f, wire.OpCreatePartitionsWithAssignments)
	if got := getTopic(t, c, sid(st), sid(0)); len(got.Partitions) != 5 || got.Partitions[4].ID != 4 {
		t.Fatalf("after create partitions: %d partitions", len(got.Partitions))
	}
	ExpectStatus(t, c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 0}), wire.ErrTooManyPartitions.Code)
	ExpectStatus(t, c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 1001}), wire.ErrTooManyPartitions.Code)
	ExpectResult(t, c.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: sid(st), TopicID: sid(8), PartitionsCount: 1}), wire.ErrTopicIDNotFound.Code)
	ExpectOK(t, c.Command(wire.OpDeletePartitions, &wire.DeletePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 2}))
	if got := getTopic(t, c, sid(st), sid(0)); len(got.Partitions) != 3 {
		t.Fatalf("after delete partitions: %d partitions", len(got.Partitions))
	}
	ExpectResult(t, c.Command(wire.OpDeletePartitions, &wire.DeletePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 4}), wire.ErrInvalidPartitionsCount.Code)
	ExpectStatus(t, c.Command(wire.OpDeletePartitions, &wire.DeletePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 0}), wire.ErrTooManyPartitions.Code)

	// DELETE_SEGMENTS: reply operation 68, result-framed.
	f = c.Command(wire.OpDeleteSegments, &wire.DeleteSegments{StreamID: sid(st), TopicID: sid(0), PartitionID: 1, SegmentsCount: 1})
	ExpectOK(t, f)
	expectOp(t, f, wire.OpTruncatePartition)
	ExpectResult(t, c.Command(wire.OpDeleteSegments, &wire.DeleteSegments{StreamID: sid(st), TopicID: sid(0), PartitionID: 3, SegmentsCount: 1}), wire.ErrPartitionNotFound.Code)
	ExpectResult(t, c.Command(wire.OpDeleteSegments, &wire.DeleteSegments{StreamID: sid(st), TopicID: sid(5), PartitionID: 0, SegmentsCount: 1}), wire.ErrTopicIDNotFound.Code)
	ExpectStatus(t, c.CommandRaw(wire.OpDeleteSegments, []byte{1, 4, 0, 0, 0, 0}), wire.ErrInvalidCommand.Code)

	// PURGE_TOPIC, DELETE_TOPIC.
	ExpectOK(t, c.Command(wire.OpPurgeTopic, &wire.PurgeTopic{StreamID: sid(st), TopicID: sid(0)}))
	ExpectResult(t, c.Command(wire.OpPurgeTopic, &wire.PurgeTopic{StreamID: sid(st), TopicID: sid(9)}), wire.ErrTopicIDNotFound.Code)
	ExpectOK(t, c.Command(wire.OpDeleteTopic, &wire.DeleteTopic{StreamID: sid(st), TopicID: name("eu-west")}))
	ExpectResult(t, c.Command(wire.OpDeleteTopic, &wire.DeleteTopic{StreamID: sid(st), TopicID: name("eu-west")}), wire.ErrTopicIDNotFound.Code)
	if td := mkTopic(t, c, st, "reborn", 1, nil); td.ID != 0 {
		t.Fatalf("recycled topic id %d", td.ID)
	}
	// GET_STREAM lists the topics, count-driven.
	var sd wire.StreamDetails
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: sid(st)})), &sd)
	if len(sd.Topics) != 2 || sd.Topics[0].Name != "reborn" || sd.Topics[1].Name != "empty" {
		t.Fatalf("GET_STREAM topics %+v", sd.Topics)
	}
}

func TestConsumerGroupCommands(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "s")
	mkTopic(t, c, st, "t", 4, nil)

	var gd wire.GroupDetails
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "g"})), &gd)
	if gd.ID != 0 || gd.Name != "g" || gd.PartitionsCount != 4 || len(gd.Members) != 0 {
		t.Fatalf("created %+v", gd)
	}
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "h"})), &gd)
	ExpectResult(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "g"}), wire.ErrConsumerGroupNameAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(3), Name: "g"}), wire.ErrTopicIDNotFound.Code)
	ExpectResult(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(3), TopicID: sid(0), Name: "g"}), wire.ErrStreamIDNotFound.Code)

	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: name("h")})), &gd)
	if gd.ID != 1 {
		t.Fatalf("GET group h: %+v", gd)
	}
	if b := ExpectPlain(t, c.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: sid(9)})); len(b) != 0 {
		t.Fatal("missing group is not an empty body")
	}
	ExpectStatus(t, c.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: sid(9), TopicID: sid(0), GroupID: sid(0)}), wire.ErrStreamIDNotFound.Code)
	ExpectStatus(t, c.Read(wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: sid(st), TopicID: sid(9)}), wire.ErrTopicIDNotFound.Code)
	var groups wire.ConsumerGroups
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: sid(st), TopicID: sid(0)})), &groups)
	if len(groups) != 2 {
		t.Fatalf("groups %+v", groups)
	}

	ExpectOK(t, c.Command(wire.OpDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: sid(0)}))
	ExpectResult(t, c.Command(wire.OpDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: sid(0)}), wire.ErrConsumerGroupIDNotFound.Code)
	// Group ids are never reused.
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "g"})), &gd)
	if gd.ID != 2 {
		t.Fatalf("group id %d after a delete, want 2", gd.ID)
	}
	ExpectEviction(t, c.CommandRaw(wire.OpDeleteConsumerGroup, []byte{1}), wire.EvictInvalidRequestBody)
}

func hasOption(o wire.Options, key string) bool {
	_, ok := o.Get(key)
	return ok
}
