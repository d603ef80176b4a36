package itest

import (
	"strconv"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// TestPermissionRules tries every command as a user without the right it
// needs (committed rejection 41 for metadata operations, status-deny 41
// for reads) and as a user holding exactly that right (semantics.md §2.4).
func TestPermissionRules(t *testing.T) {
	s := Start(t)
	root := s.Dial(t)
	root.LoginRoot()
	meta := s.Broker.Metadata()

	// env is what one case works on: its own stream, topic and group, and
	// a spare user to act on.
	type env struct {
		stream, topic uint32
		spare         uint32
	}
	global := func(g wire.GlobalPermissions) func(env) *wire.Permissions {
		return func(env) *wire.Permissions { return &wire.Permissions{Global: g} }
	}
	onStream := func(sp wire.StreamPermissions) func(env) *wire.Permissions {
		return func(e env) *wire.Permissions {
			sp.StreamID = e.stream
			return &wire.Permissions{Streams: []wire.StreamPermissions{sp}}
		}
	}
	onTopic := func(tp wire.TopicPermissions) func(env) *wire.Permissions {
		return func(e env) *wire.Permissions {
			tp.TopicID = e.topic
			return &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: e.stream, Topics: []wire.TopicPermissions{tp}}}}
		}
	}
	st := func(e env) wire.Identifier { return sid(e.stream) }
	tp := func(e env) wire.Identifier { return sid(e.topic) }
	group := func(e env) wire.JoinConsumerGroup {
		return wire.JoinConsumerGroup{StreamID: st(e), TopicID: tp(e), GroupID: name("g")}
	}

	type tcase struct {
		name  string
		grant func(env) *wire.Permissions
		// op is the metadata operation, or 0 for a read of code.
		op   wire.Operation
		code wire.Command
		body func(env) wire.Body
		// before runs as the acting client before the command.
		before func(t *testing.T, c *Client, e env)
	}
	cases := []tcase{
		{name: "get stats", grant: global(wire.GlobalPermissions{ReadServers: true}), code: wire.CmdGetStats},
		{name: "get stats (manage_servers)", grant: global(wire.GlobalPermissions{ManageServers: true}), code: wire.CmdGetStats},
		{name: "get clients", grant: global(wire.GlobalPermissions{ReadServers: true}), code: wire.CmdGetClients},
		{name: "get client", grant: global(wire.GlobalPermissions{ReadServers: true}), code: wire.CmdGetClient, body: func(env) wire.Body { return &wire.GetClient{ClientID: 1} }},
		{name: "get snapshot", grant: global(wire.GlobalPermissions{ReadServers: true}), code: wire.CmdGetSnapshotFile,
			body: func(env) wire.Body {
				return &wire.GetSnapshotFile{Compression: wire.SnapshotStored, Types: []wire.SnapshotType{wire.SnapshotTest}}
			}},
		{name: "get users", grant: global(wire.GlobalPermissions{ReadUsers: true}), code: wire.CmdGetUsers},
		{name: "get user", grant: global(wire.GlobalPermissions{ManageUsers: true}), code: wire.CmdGetUser, body: func(e env) wire.Body { return &wire.GetUser{UserID: sid(e.spare)} }},
		{name: "create user", grant: global(wire.GlobalPermissions{ManageUsers: true}), op: wire.OpCreateUser,
			body: func(e env) wire.Body {
				return &wire.CreateUser{Username: "new-" + strconv.Itoa(int(e.spare)), Password: "pw1", Status: wire.UserActive}
			}},
		{name: "update user", grant: global(wire.GlobalPermissions{ManageUsers: true}), op: wire.OpUpdateUser,
			body: func(e env) wire.Body { return &wire.UpdateUser{UserID: sid(e.spare), Status: wire.UserInactive} }},
		{name: "delete user", grant: global(wire.GlobalPermissions{ManageUsers: true}), op: wire.OpDeleteUser,
			body: func(e env) wire.Body { return &wire.DeleteUser{UserID: sid(e.spare)} }},
		{name: "update permissions", grant: global(wire.GlobalPermissions{ManageUsers: true}), op: wire.OpUpdatePermissions,
			body: func(e env) wire.Body { return &wire.UpdatePermissions{UserID: sid(e.spare)} }},
		{name: "change another's password", grant: global(wire.GlobalPermissions{ManageUsers: true}), op: wire.OpChangePassword,
			body: func(e env) wire.Body {
				return &wire.ChangePassword{UserID: sid(e.spare), CurrentPassword: "spare-pw", NewPassword: "spare-pw"}
			}},
		{name: "get streams", grant: global(wire.GlobalPermissions{ReadStreams: true}), code: wire.CmdGetStreams},
		{name: "get stream", grant: onStream(wire.StreamPermissions{ReadStream: true}), code: wire.CmdGetStream, body: func(e env) wire.Body { return &wire.GetStream{StreamID: st(e)} }},
		{name: "create stream", grant: global(wire.GlobalPermissions{ManageStreams: true}), op: wire.OpCreateStream,
			body: func(e env) wire.Body { return &wire.CreateStream{Name: "created-" + strconv.Itoa(int(e.stream))} }},
		{name: "update stream", grant: onStream(wire.StreamPermissions{ManageStream: true}), op: wire.OpUpdateStream,
			body: func(e env) wire.Body {
				return &wire.UpdateStream{StreamID: st(e), Name: "renamed-" + strconv.Itoa(int(e.stream))}
			}},
		{name: "purge stream", grant: onStream(wire.StreamPermissions{ManageStream: true}), op: wire.OpPurgeStream, body: func(e env) wire.Body { return &wire.PurgeStream{StreamID: st(e)} }},
		{name: "delete stream", grant: global(wire.GlobalPermissions{ManageStreams: true}), op: wire.OpDeleteStream, body: func(e env) wire.Body { return &wire.DeleteStream{StreamID: st(e)} }},
		{name: "get topics", grant: onStream(wire.StreamPermissions{ReadTopics: true}), code: wire.CmdGetTopics, body: func(e env) wire.Body { return &wire.GetTopics{StreamID: st(e)} }},
		{name: "get topic", grant: onTopic(wire.TopicPermissions{ReadTopic: true}), code: wire.CmdGetTopic, body: func(e env) wire.Body { return &wire.GetTopic{StreamID: st(e), TopicID: tp(e)} }},
		{name: "create topic", grant: onStream(wire.StreamPermissions{ManageTopics: true}), op: wire.OpCreateTopic,
			body: func(e env) wire.Body { return &wire.CreateTopic{StreamID: st(e), PartitionsCount: 1, Name: "more"} }},
		{name: "update topic", grant: onTopic(wire.TopicPermissions{ManageTopic: true}), op: wire.OpUpdateTopic,
			body: func(e env) wire.Body { return &wire.UpdateTopic{StreamID: st(e), TopicID: tp(e), Name: "t2"} }},
		{name: "purge topic", grant: onTopic(wire.TopicPermissions{ManageTopic: true}), op: wire.OpPurgeTopic, body: func(e env) wire.Body { return &wire.PurgeTopic{StreamID: st(e), TopicID: tp(e)} }},
		{name: "delete topic", grant: global(wire.GlobalPermissions{ManageTopics: true}), op: wire.OpDeleteTopic, body: func(e env) wire.Body { return &wire.DeleteTopic{StreamID: st(e), TopicID: tp(e)} }},
		{name: "create partitions", grant: onTopic(wire.TopicPermissions{ManageTopic: true}), op: wire.OpCreatePartitions,
			body: func(e env) wire.Body {
				return &wire.CreatePartitions{StreamID: st(e), TopicID: tp(e), PartitionsCount: 1}
			}},
		{name: "delete partitions", grant: onStream(wire.StreamPermissions{ManageStream: true}), op: wire.OpDeletePartitions,
			body: func(e env) wire.Body {
				return &wire.DeletePartitions{StreamID: st(e), TopicID: tp(e), PartitionsCount: 1}
			}},
		{name: "delete segments", grant: onTopic(wire.TopicPermissions{ManageTopic: true}), op: wire.OpDeleteSegments,
			body: func(e env) wire.Body {
				return &wire.DeleteSegments{StreamID: st(e), TopicID: tp(e), PartitionID: 0, SegmentsCount: 1}
			}},
		{name: "create group", grant: onTopic(wire.TopicPermissions{ReadTopic: true}), op: wire.OpCreateConsumerGroup,
			body: func(e env) wire.Body { return &wire.CreateConsumerGroup{StreamID: st(e), TopicID: tp(e), Name: "h"} }},
		{name: "delete group", grant: global(wire.GlobalPermissions{ReadStreams: true}), op: wire.OpDeleteConsumerGroup,
			body: func(e env) wire.Body { g := group(e); return (*wire.DeleteConsumerGroup)(&g) }},
		{name: "get group", grant: onStream(wire.StreamPermissions{ReadTopics: true}), code: wire.CmdGetConsumerGroup,
			body: func(e env) wire.Body { g := group(e); return (*wire.GetConsumerGroup)(&g) }},
		{name: "get groups", grant: onTopic(wire.TopicPermissions{ManageTopic: true}), code: wire.CmdGetConsumerGroups,
			body: func(e env) wire.Body { return &wire.GetConsumerGroups{StreamID: st(e), TopicID: tp(e)} }},
		{name: "join group", grant: global(wire.GlobalPermissions{ReadTopics: true}), op: wire.OpJoinConsumerGroup,
			body: func(e env) wire.Body { g := group(e); return &g }},
		{name: "leave group", grant: onTopic(wire.TopicPermissions{ReadTopic: true}), op: wire.OpLeaveConsumerGroup,
			body: func(e env) wire.Body { g := group(e); return (*wire.LeaveConsumerGroup)(&g) },
			before: func(t *testing.T, c *Client, e env) {
				g := group(e)
				ExpectOK(t, c.Command(wire.OpJoinConsumerGroup, &g))
			}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env{stream: mkStream(t, root, "perm-"+strconv.Itoa(i))}
			e.topic = mkTopic(t, root, e.stream, "t", 2, nil).ID
			ExpectOK(t, root.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(e.stream), TopicID: sid(e.topic), Name: "g"}))
			var err error
			if e.spare, err = meta.CreateUser("spare-"+strconv.Itoa(i), "spare-pw", wire.UserActive, nil); err != nil {
				t.Fatal(err)
			}
			without, with := "without-"+strconv.Itoa(i), "with-"+strconv.Itoa(i)
			// The user without the right has every right on another stream.
			other := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: e.stream + 1000, ManageStream: true, ReadStream: true, ManageTopics: true, ReadTopics: true}}}
			if _, err := meta.CreateUser(without, "pw-pw", wire.UserActive, other); err != nil {
				t.Fatal(err)
			}
			if _, err := meta.CreateUser(with, "pw-pw", wire.UserActive, tc.grant(e)); err != nil {
				t.Fatal(err)
			}
			run := func(c *Client) Frame {
				var b wire.Body
				if tc.body != nil {
					b = tc.body(e)
				}
				if tc.op != 0 {
					return c.Command(tc.op, b)
				}
				return c.Read(tc.code, b)
			}
			no := s.Dial(t)
			no.Login(without, "pw-pw")
			if tc.op != 0 {
				ExpectResult(t, run(no), wire.ErrUnauthorized.Code)
			} else {
				ExpectStatus(t, run(no), wire.ErrUnauthorized.Code)
			}
			yes := s.Dial(t)
			yes.Login(with, "pw-pw")
			if tc.before != nil {
				tc.before(t, yes, e)
			}
			if tc.op != 0 {
				ExpectOK(t, run(yes))
			} else {
				ExpectPlain(t, run(yes))
			}
		})
	}
}

// TestSelfService: one's own user, password and tokens need no permission.
func TestSelfService(t *testing.T) {
	s := Start(t)
	id, err := s.Broker.Metadata().CreateUser("plain", "plain-pw", wire.UserActive, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Dial(t)
	c.Login("plain", "plain-pw")
	var ud wire.UserDetails
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: sid(id)})), &ud)
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: name("plain")})), &ud)
	ExpectStatus(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: sid(0)}), wire.ErrUnauthorized.Code)
	ExpectOK(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "mine"}))
	ExpectPlain(t, c.Call(wire.CmdGetPersonalAccessTokens, nil))
	ExpectOK(t, c.Command(wire.OpDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: "mine"}))
	ExpectOK(t, c.Command(wire.OpChangePassword, &wire.ChangePassword{UserID: sid(id), CurrentPassword: "plain-pw", NewPassword: "plain-pw2"}))
	ExpectPlain(t, c.Read(wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: wire.OptionScopeTopic}))
	ExpectPlain(t, c.Call(wire.CmdGetClusterMetadata, nil))
	ExpectPlain(t, c.Call(wire.CmdGetMe, nil))
}
