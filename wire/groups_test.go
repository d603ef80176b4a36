package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestGroupsRoundTrip(t *testing.T) {
	s, tp, g := NumericID(1), NumericID(2), NamedID("g1")
	group := ConsumerGroup{ID: 3, PartitionsCount: 4, MembersCount: 2, Name: utfName}
	details := GroupDetails{ConsumerGroup: ConsumerGroup{ID: 0, PartitionsCount: 3, MembersCount: 2, Name: "g1"}, Members: []ConsumerGroupMember{
		{ID: 5, Partitions: []uint32{0, 1}},
		{ID: 6},
	}}
	runRoundTrips(t, []roundTripCase{
		{name: "get group", in: &GetConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}, fresh: func() Body { return &GetConsumerGroup{} }, strict: true},
		{name: "get groups", in: &GetConsumerGroups{StreamID: s, TopicID: NamedID("t")}, fresh: func() Body { return &GetConsumerGroups{} }, strict: true},
		{name: "create group", in: &CreateConsumerGroup{StreamID: s, TopicID: tp, Name: longName}, fresh: func() Body { return &CreateConsumerGroup{} }, strict: true},
		{name: "delete group", in: &DeleteConsumerGroup{StreamID: s, TopicID: tp, GroupID: NumericID(0)}, fresh: func() Body { return &DeleteConsumerGroup{} }, strict: true},
		{name: "join group", in: &JoinConsumerGroup{StreamID: NamedID("s"), TopicID: tp, GroupID: g}, fresh: func() Body { return &JoinConsumerGroup{} }, strict: true},
		{name: "leave group", in: &LeaveConsumerGroup{StreamID: s, TopicID: NamedID("t"), GroupID: g}, fresh: func() Body { return &LeaveConsumerGroup{} }, strict: true},
		{name: "sync group", in: &SyncConsumerGroup{StreamID: s, TopicID: tp, GroupID: NumericID(3)}, fresh: func() Body { return &SyncConsumerGroup{} }, strict: true},
		{name: "group", in: &group, fresh: func() Body { return &ConsumerGroup{} }, strict: true},
		{name: "groups empty", in: &ConsumerGroups{}, fresh: func() Body { return &ConsumerGroups{} }},
		{name: "groups two", in: &ConsumerGroups{group, {ID: 1, Name: "x"}}, fresh: func() Body { return &ConsumerGroups{} }},
		{name: "member", in: &ConsumerGroupMember{ID: 9, Partitions: []uint32{7, 0, 0xffffffff}}, fresh: func() Body { return &ConsumerGroupMember{} }, strict: true},
		{name: "member no partitions", in: &ConsumerGroupMember{ID: 1}, fresh: func() Body { return &ConsumerGroupMember{} }, strict: true},
		{name: "details", in: &details, fresh: func() Body { return &GroupDetails{} }, strict: true},
		{name: "details no members", in: &GroupDetails{ConsumerGroup: ConsumerGroup{ID: 1, Name: "g"}}, fresh: func() Body { return &GroupDetails{} }, strict: true},
		{name: "assignment", in: &ConsumerGroupAssignment{Generation: 4, Partitions: []uint32{0, 2}}, fresh: func() Body { return &ConsumerGroupAssignment{} }, strict: true},
		{name: "assignment empty", in: &ConsumerGroupAssignment{Generation: 1 << 63}, fresh: func() Body { return &ConsumerGroupAssignment{} }, strict: true},
	})
}

// TestGroupLayouts pins the group structures of commands.md.
func TestGroupLayouts(t *testing.T) {
	g := ConsumerGroup{ID: 1, PartitionsCount: 2, MembersCount: 3, Name: "ab"}
	if got, want := g.AppendTo(nil), cat(appendU32(nil, 1), appendU32(nil, 2), appendU32(nil, 3), []byte{2, 'a', 'b'}); !bytes.Equal(got, want) {
		t.Errorf("group %x, want %x", got, want)
	}
	m := ConsumerGroupMember{ID: 5, Partitions: []uint32{0, 1}}
	if got, want := m.AppendTo(nil), cat(appendU32(nil, 5), appendU32(nil, 2), appendU32(nil, 0), appendU32(nil, 1)); !bytes.Equal(got, want) {
		t.Errorf("member %x, want %x", got, want)
	}
	a := ConsumerGroupAssignment{Generation: 4, Partitions: []uint32{0, 2}}
	if got, want := a.AppendTo(nil), cat(appendU64(nil, 4), appendU32(nil, 2), appendU32(nil, 0), appendU32(nil, 2)); !bytes.Equal(got, want) {
		t.Errorf("assignment %x, want %x", got, want)
	}
	c := CreateConsumerGroup{StreamID: NumericID(1), TopicID: NumericID(2), Name: "g1"}
	if got, want := c.AppendTo(nil), cat(NumericID(1).AppendTo(nil), NumericID(2).AppendTo(nil), []byte{2, 'g', '1'}); !bytes.Equal(got, want) {
		t.Errorf("create %x, want %x", got, want)
	}
	// members_count on the wire is len(Members).
	d := GroupDetails{ConsumerGroup: ConsumerGroup{MembersCount: 9, Name: "g"}}
	if got := d.AppendTo(nil)[8:12]; !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Errorf("members_count = %x, want 0", got)
	}
}

func TestGroupsDecodeErrors(t *testing.T) {
	ids := cat(NumericID(1).AppendTo(nil), NumericID(2).AppendTo(nil))
	group := ConsumerGroup{ID: 1, PartitionsCount: 2, MembersCount: 1, Name: "g"}
	for _, tc := range []struct {
		name  string
		fresh Body
		in    []byte
	}{
		{"get group two identifiers", &GetConsumerGroup{}, ids},
		{"sync group two identifiers", &SyncConsumerGroup{}, ids},
		{"join bad group id", &JoinConsumerGroup{}, cat(ids, []byte{2, 0})},
		{"leave empty", &LeaveConsumerGroup{}, nil},
		{"delete numeric len 8", &DeleteConsumerGroup{}, cat(ids, []byte{1, 8, 0, 0, 0, 0, 0, 0, 0, 0})},
		{"get groups one identifier", &GetConsumerGroups{}, ids[:6]},
		{"create no name", &CreateConsumerGroup{}, ids},
		{"create empty name", &CreateConsumerGroup{}, cat(ids, []byte{0})},
		{"group no name", &ConsumerGroup{}, make([]byte, 12)},
		{"groups partial", &ConsumerGroups{}, cat(group.AppendTo(nil), []byte{1})},
		{"member count too high", &ConsumerGroupMember{}, cat(appendU32(nil, 1), appendU32(nil, 2), appendU32(nil, 0))},
		{"member huge count", &ConsumerGroupMember{}, cat(appendU32(nil, 1), appendU32(nil, 0xffffffff))},
		{"details member missing", &GroupDetails{}, group.AppendTo(nil)},
		{"details huge members", &GroupDetails{}, cat(appendU32(nil, 1), appendU32(nil, 2), appendU32(nil, 0xffffffff), []byte{1, 'g'}, make([]byte, 16))},
		{"details trailing", &GroupDetails{}, cat(group.AppendTo(nil), appendU32(nil, 5), appendU32(nil, 0), []byte{0})},
		{"assignment short", &ConsumerGroupAssignment{}, appendU64(nil, 4)},
		{"assignment count too high", &ConsumerGroupAssignment{}, cat(appendU64(nil, 4), appendU32(nil, 2), appendU32(nil, 0))},
		{"assignment trailing", &ConsumerGroupAssignment{}, cat(appendU64(nil, 4), appendU32(nil, 0), []byte{0})},
		{"assignment empty", &ConsumerGroupAssignment{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fresh.Decode(tc.in); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v, want %v", err, ErrInvalidCommand)
			}
		})
	}
}

func TestGroupsValidate(t *testing.T) {
	s, tp, g := NumericID(1), NumericID(2), NamedID("g")
	bad := NamedID("")
	for _, tc := range []struct {
		name string
		v    interface{ Validate() error }
		want error
	}{
		{"get ok", &GetConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}, nil},
		{"get bad group", &GetConsumerGroup{StreamID: s, TopicID: tp, GroupID: bad}, ErrInvalidIdentifier},
		{"get groups bad topic", &GetConsumerGroups{StreamID: s, TopicID: bad}, ErrInvalidIdentifier},
		{"get groups ok", &GetConsumerGroups{StreamID: s, TopicID: tp}, nil},
		{"create ok", &CreateConsumerGroup{StreamID: s, TopicID: tp, Name: "g"}, nil},
		{"create empty name", &CreateConsumerGroup{StreamID: s, TopicID: tp}, ErrInvalidConsumerGroupName},
		{"create long name", &CreateConsumerGroup{StreamID: s, TopicID: tp, Name: longName + "x"}, ErrInvalidConsumerGroupName},
		{"create bad stream", &CreateConsumerGroup{StreamID: bad, TopicID: tp, Name: "g"}, ErrInvalidIdentifier},
		{"delete bad stream", &DeleteConsumerGroup{StreamID: bad, TopicID: tp, GroupID: g}, ErrInvalidIdentifier},
		{"join bad topic", &JoinConsumerGroup{StreamID: s, TopicID: bad, GroupID: g}, ErrInvalidIdentifier},
		{"leave bad group", &LeaveConsumerGroup{StreamID: s, TopicID: tp}, ErrInvalidIdentifier},
		{"sync ok", &SyncConsumerGroup{StreamID: s, TopicID: tp, GroupID: NumericID(0)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.v.Validate(); !sameErr(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}
