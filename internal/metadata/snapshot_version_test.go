package metadata

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/iggo-dev/iggo/wire"
)

// stateWithTopic is a state holding stream 0 with topic 0 of opts.
func stateWithTopic(opts wire.TopicOptions) *state {
	st := newState()
	t := &topic{ID: 0, CreatedAt: 1, Name: "events", Incarnation: 3, Opts: opts,
		Partitions: []partition{{ID: 0, CreatedAt: 1}}, Groups: map[uint32]*group{}, GroupByName: map[string]uint32{}}
	st.streams[0] = &stream{ID: 0, CreatedAt: 1, Name: "orders", Topics: map[uint32]*topic{0: t}, TopicByName: map[string]uint32{"events": 0}}
	st.streamByName["orders"] = 0
	return st
}

func decodedTopicOpts(t *testing.T, enc []byte) wire.TopicOptions {
	t.Helper()
	sn, err := decodeSnapshot(enc)
	if err != nil {
		t.Fatal(err)
	}
	tp := sn.state.streams[0].Topics[0]
	if tp == nil || tp.Name != "events" || len(tp.Partitions) != 1 {
		t.Fatalf("decoded topic %+v", tp)
	}
	return tp.Opts
}

// TestSnapshotLocalRetention: a topic's local_retention_size and
// local_retention_age survive a snapshot round trip.
func TestSnapshotLocalRetention(t *testing.T) {
	opts, err := wire.NewTopicOptions(wire.Options{
		wire.Uint64Option(wire.TopicOptLocalRetentionSize, 5<<30),
		wire.StringOption(wire.TopicOptLocalRetentionAge, "3 days"),
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc := encodeSnapshot(&snapshot{op: 7, state: stateWithTopic(opts)})
	got := decodedTopicOpts(t, enc)
	if d := cmp.Diff(opts, got); d != "" {
		t.Fatalf("topic options after the round trip (-want +got):\n%s", d)
	}
	if got.Settings.LocalRetentionSize != 5<<30 || got.Settings.LocalRetentionAge != 3*24*3600*1_000_000 {
		t.Fatalf("settings %+v", got.Settings)
	}
	sn, _ := decodeSnapshot(enc)
	if !bytes.Equal(encodeSnapshot(sn), enc) {
		t.Fatal("snapshot does not re-encode to itself")
	}
}

// TestSnapshotVersion5Topic: a version 5 snapshot (before the local
// retention keys) still loads: both settings are 0 (the server's
// tiered_storage values) and the derived block gains the two keys with
// 0, as a topic created now reports them; re-encoded in the current
// version it round-trips.
func TestSnapshotVersion5Topic(t *testing.T) {
	current, err := wire.NewTopicOptions(wire.Options{wire.Uint64Option(wire.TopicOptMessageExpiry, 9)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The topic as version 5 stored it: no local retention keys.
	old := current
	old.Derived = nil
	for _, o := range current.Derived {
		if o.Key != wire.TopicOptLocalRetentionSize && o.Key != wire.TopicOptLocalRetentionAge {
			old.Derived = append(old.Derived, o)
		}
	}
	// Marker values locate the two fields, which version 5 lacks.
	const markSize, markAge = 0x1122334455667788, 0x99aabbccddeeff01
	marked := old
	marked.Settings.LocalRetentionSize, marked.Settings.LocalRetentionAge = markSize, markAge
	enc := encodeSnapshot(&snapshot{op: 7, state: stateWithTopic(marked)})
	body := enc[:len(enc)-8]
	fields := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, markSize), markAge)
	i := bytes.Index(body, fields)
	if i < 0 || bytes.Count(body, fields) != 1 {
		t.Fatal("the local retention fields were not found once in the snapshot")
	}
	v5 := append(append([]byte(nil), body[:i]...), body[i+len(fields):]...)
	binary.LittleEndian.PutUint32(v5[8:], 5)
	v5 = withChecksum(v5)

	got := decodedTopicOpts(t, v5)
	if got.Settings.LocalRetentionSize != 0 || got.Settings.LocalRetentionAge != 0 {
		t.Fatalf("version 5 topic settings %+v, want zero local retention", got.Settings)
	}
	if d := cmp.Diff(current, got); d != "" {
		t.Fatalf("version 5 topic (-as created now +decoded):\n%s", d)
	}
	sn, err := decodeSnapshot(v5)
	if err != nil {
		t.Fatal(err)
	}
	out := encodeSnapshot(sn)
	if binary.LittleEndian.Uint32(out[8:]) != snapshotVersion {
		t.Fatalf("re-encoded in version %d", binary.LittleEndian.Uint32(out[8:]))
	}
	again, err := decodeSnapshot(out)
	if err != nil || !bytes.Equal(encodeSnapshot(again), out) {
		t.Fatalf("re-encoded version 5 snapshot does not round-trip: %v", err)
	}
}
