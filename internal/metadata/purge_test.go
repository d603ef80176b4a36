package metadata

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

// purgeData records the purge identity of every CreatePartitions and
// PurgeTopic call.
type purgeData struct {
	recData
}

func (d *purgeData) CreatePartitions(t catalog.TopicRef, ids []uint32) error {
	d.add("create " + idsString(ids) + " purged@" + itoa(t.PurgedAt))
	return nil
}

func (d *purgeData) PurgeTopic(t catalog.TopicRef) error {
	d.add("purge purged@" + itoa(t.PurgedAt))
	return nil
}

// TestPurgeIdentityKeptPerPartition: a purge's identity is its op; it is
// handed to PurgeTopic, kept on the partitions it covered (not on those
// created after it), in the snapshot, and named again when the partitions
// are opened at start-up.
func TestPurgeIdentityKeptPerPartition(t *testing.T) {
	dir := t.TempDir()
	data := &purgeData{}
	s := openTest(t, dir, 1, nil)
	s.cfg.Data, s.Store.data = data, data
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 2, Name: "t"})
	purgedAt := s.op + 1 // the purge's op
	s.ok(t, wire.CmdPurgeTopic, &wire.PurgeTopic{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0)})
	s.ok(t, wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), PartitionsCount: 1})
	want := []string{"create 0,1 purged@0", "purge purged@" + itoa(purgedAt), "create 2 purged@0"}
	if diff := cmp.Diff(want, data.take()); diff != "" {
		t.Fatalf("live effects (-want +got):\n%s", diff)
	}
	s.Close()

	r, err := Open(Config{Dir: dir, Data: data, Hasher: s.cfg.Hasher, Logger: quiet, SnapshotEvery: 1,
		Root: func() (string, string, error) { return "iggy", "iggy", nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want = []string{"create 0,1 purged@" + itoa(purgedAt), "create 2 purged@0"}
	if diff := cmp.Diff(want, data.take()); diff != "" {
		t.Fatalf("partitions opened at restart (-want +got):\n%s", diff)
	}
}

// awaitData is a Data whose purges complete later (catalog.Awaiter).
type awaitData struct {
	NopData
	err    error
	awaits []uint64
}

func (d *awaitData) AwaitPartitions(_ context.Context, t catalog.TopicRef) error {
	d.awaits = append(d.awaits, t.PurgedAt)
	return d.err
}

// TestReplyAwaitsPartitionEffects: the reply of a replicated purge or
// group deletion waits for the partition plane; when it does not
// complete, the answer is outcome unknown (57), not success.
func TestReplyAwaitsPartitionEffects(t *testing.T) {
	d := &awaitData{}
	s := &Store{data: d, log: quiet}
	effects := []effect{{kind: effCreatePartitions}, {kind: effPurgeTopic, ref: catalog.TopicRef{PurgedAt: 12}}, {kind: effDeleteGroupOffsets}}
	if err := s.awaitEffects(effects); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{12, 0}, d.awaits); diff != "" {
		t.Fatalf("awaited (-want +got):\n%s", diff)
	}
	d.err = context.DeadlineExceeded
	err := s.awaitEffects(effects)
	if !errors.Is(err, ErrOutcomeUnknown) || transientCode(err) != wire.ErrTransientNotCommitted.Code {
		t.Fatalf("unsettled purge: %v (code %d), want outcome unknown (57)", err, transientCode(err))
	}
}

// TestGroupDeleted: a deleted group is told apart from a live one and
// from one not created yet (catalog.GroupHistory).
func TestGroupDeleted(t *testing.T) {
	s := openTest(t, t.TempDir(), 1<<30, nil)
	defer s.Close()
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 1, Name: "t"})
	s.ok(t, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Name: "g0"})
	s.ok(t, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Name: "g1"})
	s.ok(t, wire.CmdDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), GroupID: wire.NumericID(0)})
	ref, _, err := s.ResolveTopic(wire.NumericID(0), wire.NumericID(0))
	if err != nil {
		t.Fatal(err)
	}
	for group, want := range map[uint32]bool{0: true, 1: false, 2: false} {
		if got := s.GroupDeleted(ref, group); got != want {
			t.Errorf("GroupDeleted(%d) = %v, want %v", group, got, want)
		}
	}
	stale := ref
	stale.Incarnation++
	if s.GroupDeleted(stale, 0) {
		t.Error("a group of another incarnation of the topic is reported deleted")
	}
}

// awaitRec is recData whose partitions answer AwaitPartitions with err.
type awaitRec struct {
	recData
	err    error
	awaits []catalog.TopicRef
}

func (d *awaitRec) AwaitPartitions(_ context.Context, t catalog.TopicRef) error {
	d.awaits = append(d.awaits, t)
	return d.err
}

// TestRetriedPurgeAwaitsPartitions: the retry of PURGE_TOPIC, PURGE_STREAM
// or DELETE_CONSUMER_GROUP (answered from the client table) waits for the
// topic's partitions like the first reply, and is 57 while they have not
// applied it; other commands, a topic that is gone and a body that does
// not decode pass at once.
func TestRetriedPurgeAwaitsPartitions(t *testing.T) {
	data := &awaitRec{}
	s := openTest(t, t.TempDir(), 1<<30, nil)
	defer s.Close()
	s.cfg.Data, s.Store.data = data, data
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 1, Name: "t"})
	ref, _, err := s.ResolveTopic(wire.NumericID(0), wire.NumericID(0))
	if err != nil {
		t.Fatal(err)
	}
	purge := (&wire.PurgeTopic{StreamID: wire.NamedID("s"), TopicID: wire.NamedID("t")}).AppendTo(nil)
	del := (&wire.DeleteConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), GroupID: wire.NumericID(3)}).AppendTo(nil)
	gone := (&wire.PurgeTopic{StreamID: wire.NumericID(0), TopicID: wire.NumericID(9)}).AppendTo(nil)

	if code := s.AwaitRetried(wire.CmdPurgeTopic, purge); code != 0 {
		t.Fatalf("settled purge: %d", code)
	}
	data.err = context.DeadlineExceeded
	for _, c := range []struct {
		cmd  wire.Command
		body []byte
		want uint32
	}{
		{wire.CmdPurgeTopic, purge, wire.ErrTransientNotCommitted.Code},
		{wire.CmdDeleteConsumerGroup, del, wire.ErrTransientNotCommitted.Code},
		{wire.CmdPurgeStream, (&wire.PurgeStream{StreamID: wire.NamedID("s")}).AppendTo(nil), wire.ErrTransientNotCommitted.Code},
		{wire.CmdPurgeStream, (&wire.PurgeStream{StreamID: wire.NamedID("nope")}).AppendTo(nil), 0},
		{wire.CmdPurgeTopic, gone, 0},
		{wire.CmdPurgeTopic, []byte{1}, 0},
		{wire.CmdCreateStream, purge, 0},
	} {
		if code := s.AwaitRetried(c.cmd, c.body); code != c.want {
			t.Errorf("command %d body %x: %d, want %d", c.cmd, c.body, code, c.want)
		}
	}
	if len(data.awaits) != 4 || !reflect.DeepEqual(data.awaits[1:], []catalog.TopicRef{ref, ref, ref}) {
		t.Fatalf("awaited %+v, want the topic %+v four times", data.awaits, ref)
	}
}
