package wire

import (
	"bytes"
	"errors"
	"testing"
)

// prefixDecoded reports whether b is a request body whose decoder reads a
// prefix and ignores the bytes after its fields (the reference server's
// rule, style.md "Wire codec"). Every other body (replies, bodies ending
// in an options block that runs to the end, SEND_MESSAGES) rejects
// trailing bytes.
func prefixDecoded(b Body) bool {
	switch b.(type) {
	case *GetStream, *DeleteStream, *PurgeStream,
		*GetTopic, *GetTopics, *DeleteTopic, *PurgeTopic,
		*CreatePartitions, *DeletePartitions, *DeleteSegments,
		*GetConsumerGroup, *GetConsumerGroups, *CreateConsumerGroup, *DeleteConsumerGroup,
		*JoinConsumerGroup, *LeaveConsumerGroup, *SyncConsumerGroup,
		*GetUser, *DeleteUser, *UpdatePermissions, *ChangePassword,
		*CreatePersonalAccessToken, *DeletePersonalAccessToken,
		*GetConsumerOffset, *StoreConsumerOffset, *DeleteConsumerOffset,
		*PollMessages, *FlushUnsavedBuffer,
		*LoginRegister, *LoginRegisterWithPAT,
		*DescribeOptions, *GetClient, *GetSnapshotFile:
		return true
	}
	return false
}

// junk is the trailing garbage the tests append (the Node.js SDK sends 4
// extra bytes after DELETE_TOPIC's identifiers).
var junk = []byte{0xde, 0xad, 0xbe, 0xef}

// TestRequestTrailingBytes walks every request body of commands.md: the
// valid encoding followed by junk decodes to the same value where the
// reference decodes a prefix, and is ErrInvalidCommand where the last
// field runs to the end of the body or the layout is length-checked.
func TestRequestTrailingBytes(t *testing.T) {
	cons := SingleConsumer(NumericID(9))
	s, tp := NumericID(1), NamedID("t")
	perms := &Permissions{Global: GlobalPermissions{ReadStreams: true}}
	for _, tc := range []struct {
		name  string
		in    Body
		fresh func() Body
	}{
		{"GET_CLIENT", &GetClient{ClientID: 7}, func() Body { return &GetClient{} }},
		{"DESCRIBE_OPTIONS", &DescribeOptions{Scope: OptionScopeTopic}, func() Body { return &DescribeOptions{} }},
		{"GET_SNAPSHOT_FILE", &GetSnapshotFile{Compression: SnapshotDeflated, Types: []SnapshotType{SnapshotAll}}, func() Body { return &GetSnapshotFile{} }},
		{"GET_USER", &GetUser{UserID: NamedID("u")}, func() Body { return &GetUser{} }},
		{"CREATE_USER", &CreateUser{Username: "u", Password: "p", Status: UserActive, Permissions: perms}, func() Body { return &CreateUser{} }},
		{"DELETE_USER", &DeleteUser{UserID: NumericID(3)}, func() Body { return &DeleteUser{} }},
		{"UPDATE_USER", &UpdateUser{UserID: NumericID(3), Username: "v"}, func() Body { return &UpdateUser{} }},
		{"UPDATE_PERMISSIONS set", &UpdatePermissions{UserID: NumericID(3), Permissions: perms}, func() Body { return &UpdatePermissions{} }},
		{"UPDATE_PERMISSIONS clear", &UpdatePermissions{UserID: NumericID(3)}, func() Body { return &UpdatePermissions{} }},
		{"CHANGE_PASSWORD", &ChangePassword{UserID: NumericID(3), CurrentPassword: "a", NewPassword: "b"}, func() Body { return &ChangePassword{} }},
		{"LOGIN_REGISTER", &LoginRegister{Version: ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "n", SDKVersion: "v"}, Username: "u", Password: "p"}, func() Body { return &LoginRegister{} }},
		{"LOGIN_REGISTER_WITH_PAT", &LoginRegisterWithPAT{Version: ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "n", SDKVersion: "v"}, Token: "tok"}, func() Body { return &LoginRegisterWithPAT{} }},
		{"CREATE_PERSONAL_ACCESS_TOKEN", &CreatePersonalAccessToken{Name: "p", Expiry: 5}, func() Body { return &CreatePersonalAccessToken{} }},
		{"DELETE_PERSONAL_ACCESS_TOKEN", &DeletePersonalAccessToken{Name: "p"}, func() Body { return &DeletePersonalAccessToken{} }},
		{"POLL_MESSAGES", &PollMessages{Consumer: cons, StreamID: s, TopicID: tp, Partition: SomePartition(0), Strategy: NextStrategy(), Count: 10, AutoCommit: true}, func() Body { return &PollMessages{} }},
		{"SEND_MESSAGES", testSend(t, PartitioningByID(0), testMessages(1, 1)), func() Body { return &SendMessages{} }},
		{"FLUSH_UNSAVED_BUFFER", &FlushUnsavedBuffer{StreamID: s, TopicID: tp, PartitionID: 1, Fsync: true}, func() Body { return &FlushUnsavedBuffer{} }},
		{"GET_CONSUMER_OFFSET", &GetConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp}, func() Body { return &GetConsumerOffset{} }},
		{"STORE_CONSUMER_OFFSET", &StoreConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp, Offset: 4, Ack: AckQuorum}, func() Body { return &StoreConsumerOffset{} }},
		{"DELETE_CONSUMER_OFFSET", &DeleteConsumerOffset{Consumer: cons, StreamID: s, TopicID: tp, Ack: AckNone}, func() Body { return &DeleteConsumerOffset{} }},
		{"GET_STREAM", &GetStream{StreamID: s}, func() Body { return &GetStream{} }},
		{"CREATE_STREAM", &CreateStream{Name: "s"}, func() Body { return &CreateStream{} }},
		{"DELETE_STREAM", &DeleteStream{StreamID: s}, func() Body { return &DeleteStream{} }},
		{"UPDATE_STREAM", &UpdateStream{StreamID: s, Name: "n"}, func() Body { return &UpdateStream{} }},
		{"PURGE_STREAM", &PurgeStream{StreamID: s}, func() Body { return &PurgeStream{} }},
		{"GET_TOPIC", &GetTopic{StreamID: s, TopicID: tp}, func() Body { return &GetTopic{} }},
		{"GET_TOPICS", &GetTopics{StreamID: s}, func() Body { return &GetTopics{} }},
		{"CREATE_TOPIC", &CreateTopic{StreamID: s, PartitionsCount: 1, Name: "t"}, func() Body { return &CreateTopic{} }},
		{"DELETE_TOPIC", &DeleteTopic{StreamID: s, TopicID: tp}, func() Body { return &DeleteTopic{} }},
		{"UPDATE_TOPIC", &UpdateTopic{StreamID: s, TopicID: tp, Name: "u"}, func() Body { return &UpdateTopic{} }},
		{"PURGE_TOPIC", &PurgeTopic{StreamID: s, TopicID: tp}, func() Body { return &PurgeTopic{} }},
		{"CREATE_PARTITIONS", &CreatePartitions{StreamID: s, TopicID: tp, PartitionsCount: 2}, func() Body { return &CreatePartitions{} }},
		{"DELETE_PARTITIONS", &DeletePartitions{StreamID: s, TopicID: tp, PartitionsCount: 2}, func() Body { return &DeletePartitions{} }},
		{"DELETE_SEGMENTS", &DeleteSegments{StreamID: s, TopicID: tp, PartitionID: 0, SegmentsCount: 1}, func() Body { return &DeleteSegments{} }},
		{"GET_CONSUMER_GROUP", &GetConsumerGroup{StreamID: s, TopicID: tp, GroupID: NumericID(0)}, func() Body { return &GetConsumerGroup{} }},
		{"GET_CONSUMER_GROUPS", &GetConsumerGroups{StreamID: s, TopicID: tp}, func() Body { return &GetConsumerGroups{} }},
		{"CREATE_CONSUMER_GROUP", &CreateConsumerGroup{StreamID: s, TopicID: tp, Name: "g"}, func() Body { return &CreateConsumerGroup{} }},
		{"DELETE_CONSUMER_GROUP", &DeleteConsumerGroup{StreamID: s, TopicID: tp, GroupID: NamedID("g")}, func() Body { return &DeleteConsumerGroup{} }},
		{"JOIN_CONSUMER_GROUP", &JoinConsumerGroup{StreamID: s, TopicID: tp, GroupID: NamedID("g")}, func() Body { return &JoinConsumerGroup{} }},
		{"LEAVE_CONSUMER_GROUP", &LeaveConsumerGroup{StreamID: s, TopicID: tp, GroupID: NamedID("g")}, func() Body { return &LeaveConsumerGroup{} }},
		{"SYNC_CONSUMER_GROUP", &SyncConsumerGroup{StreamID: s, TopicID: tp, GroupID: NamedID("g")}, func() Body { return &SyncConsumerGroup{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := tc.in.AppendTo(nil)
			want := tc.fresh()
			if err := want.Decode(enc); err != nil {
				t.Fatalf("valid body %x: %v", enc, err)
			}
			got := tc.fresh()
			err := got.Decode(append(bytes.Clone(enc), junk...))
			if !prefixDecoded(tc.in) {
				if !errors.Is(err, ErrInvalidCommand) {
					t.Fatalf("body + junk: %v, want ErrInvalidCommand (strict body)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("body + junk: %v, want the valid body's value", err)
			}
			if d := cmpDiff(want, got); d != "" {
				t.Fatalf("body + junk decodes differently (-valid +junk):\n%s", d)
			}
			if re := got.AppendTo(nil); !bytes.Equal(re, enc) {
				t.Fatalf("re-encode of body + junk:\n got %x\nwant %x", re, enc)
			}
		})
	}
}

// TestPrefixStillChecksFields: accepting trailing bytes does not loosen
// the fields themselves; a truncated body or a bad field before the junk
// is still an error.
func TestPrefixStillChecksFields(t *testing.T) {
	del := (&DeleteTopic{StreamID: NumericID(1), TopicID: NumericID(2)}).AppendTo(nil)
	store := (&StoreConsumerOffset{Consumer: SingleConsumer(NumericID(1)), StreamID: NumericID(1), TopicID: NumericID(2), Offset: 1, Ack: AckQuorum}).AppendTo(nil)
	perms := (&UpdatePermissions{UserID: NumericID(3), Permissions: &Permissions{}}).AppendTo(nil)
	for _, tc := range []struct {
		name string
		in   Body
		b    []byte
	}{
		{"truncated identifier", &DeleteTopic{}, del[:len(del)-1]},
		{"bad identifier kind", &DeleteTopic{}, cat([]byte{3}, del[1:], junk)},
		{"missing ack byte", &StoreConsumerOffset{}, store[:len(store)-1]},
		{"unknown ack byte", &StoreConsumerOffset{}, cat(store[:len(store)-1], []byte{2}, junk)},
		// permissions_len must still match the permission set exactly;
		// junk inside the length is not trailing.
		{"permissions length covers junk", &UpdatePermissions{}, cat(perms[:7], appendU32(nil, uint32(len(perms)-11+len(junk))), perms[11:], junk)},
		{"bad flag", &UpdatePermissions{}, cat(perms[:6], []byte{2}, junk)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.in.Decode(tc.b); !errors.Is(err, ErrInvalidCommand) {
				t.Fatalf("Decode(%x) = %v, want ErrInvalidCommand", tc.b, err)
			}
		})
	}
}
