package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestConsumerOffsetRequests(t *testing.T) {
	c, s, tp := SingleConsumer(NumericID(9)), NumericID(1), NamedID("t")
	t.Run("get", func(t *testing.T) {
		for _, g := range []GetConsumerOffset{
			{Consumer: c, StreamID: s, TopicID: tp, Partition: SomePartition(2)},
			{Consumer: GroupConsumer(NamedID("g1")), StreamID: s, TopicID: tp},
		} {
			checkBody(t, g.AppendTo(nil), &g, &GetConsumerOffset{})
		}
	})
	t.Run("store", func(t *testing.T) {
		for _, st := range []StoreConsumerOffset{
			{Consumer: c, StreamID: s, TopicID: tp, Partition: SomePartition(0), Offset: 41, Ack: AckQuorum},
			{Consumer: c, StreamID: s, TopicID: tp, Offset: 1 << 62, Ack: AckNone},
		} {
			checkBody(t, st.AppendTo(nil), &st, &StoreConsumerOffset{})
		}
	})
	t.Run("delete", func(t *testing.T) {
		for _, d := range []DeleteConsumerOffset{
			{Consumer: c, StreamID: s, TopicID: tp, Partition: SomePartition(5), Ack: AckQuorum},
			{Consumer: c, StreamID: s, TopicID: tp, Ack: AckNone},
		} {
			checkBody(t, d.AppendTo(nil), &d, &DeleteConsumerOffset{})
		}
	})
	store := (&StoreConsumerOffset{Consumer: c, StreamID: s, TopicID: tp, Offset: 1, Ack: AckQuorum}).AppendTo(nil)
	del := (&DeleteConsumerOffset{Consumer: c, StreamID: s, TopicID: tp, Ack: AckQuorum}).AppendTo(nil)
	get := (&GetConsumerOffset{Consumer: c, StreamID: s, TopicID: tp}).AppendTo(nil)
	withLast := func(b []byte, v byte) []byte { b = bytes.Clone(b); b[len(b)-1] = v; return b }
	for _, tc := range []struct {
		name string
		body Body
		wire []byte
	}{
		{"store missing ack", &StoreConsumerOffset{}, store[:len(store)-1]},
		{"store ack 2", &StoreConsumerOffset{}, withLast(store, 2)},
		{"delete missing ack", &DeleteConsumerOffset{}, del[:len(del)-1]},
		{"delete ack 255", &DeleteConsumerOffset{}, withLast(del, 255)},
		{"get short", &GetConsumerOffset{}, get[:len(get)-1]},
		{"get bad consumer", &GetConsumerOffset{}, append([]byte{0}, get[1:]...)},
		{"get empty", &GetConsumerOffset{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.body.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
		})
	}
	if AckNone.String() != "NoAck" || AckQuorum.String() != "Quorum" || OffsetAck(3).String() != "OffsetAck(3)" {
		t.Errorf("OffsetAck names")
	}
}

func TestConsumerOffsetReply(t *testing.T) {
	o := ConsumerOffset{PartitionID: 1, CurrentOffset: 102, StoredOffset: 41}
	wire := o.AppendTo(nil)
	if len(wire) != ConsumerOffsetSize {
		t.Fatalf("len %d", len(wire))
	}
	checkBody(t, wire, &o, &ConsumerOffset{})
	if got, found, err := DecodeConsumerOffsetReply(wire); err != nil || !found || got != o {
		t.Errorf("found = %+v %v %v", got, found, err)
	}
	if got, found, err := DecodeConsumerOffsetReply(nil); err != nil || found || got != (ConsumerOffset{}) {
		t.Errorf("empty = %+v %v %v", got, found, err)
	}
	for _, bad := range [][]byte{wire[:19], append(bytes.Clone(wire), 0), {1}} {
		if _, found, err := DecodeConsumerOffsetReply(bad); !errors.Is(err, ErrInvalidCommand) || found {
			t.Errorf("%d bytes: %v %v", len(bad), found, err)
		}
	}
}
