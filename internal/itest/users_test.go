package itest

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
)

func TestUserCommands(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true},
		Streams: []wire.StreamPermissions{{StreamID: 3, ManageStream: true}}}

	var ud wire.UserDetails
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "alice", Password: "alice-pw", Status: wire.UserActive, Permissions: perms})), &ud)
	if ud.User.ID != 1 || ud.User.Username != "alice" || ud.Permissions == nil || len(ud.Permissions.Streams) != 1 {
		t.Fatalf("created %+v", ud)
	}
	ExpectResult(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "alice", Password: "x", Status: wire.UserActive}), wire.ErrUserAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "al", Password: "x", Status: wire.UserActive}), wire.ErrInvalidUsername.Code)
	ExpectStatus(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "bob", Password: "x", Status: wire.UserActive,
		Options: wire.Options{wire.StringOption("k", "v")}.AppendTo(nil)}), wire.ErrUnsupportedOptionKey.Code)
	// A permissions blob whose length does not match: undecodable (3).
	bad := (&wire.CreateUser{Username: "bob", Password: "x", Status: wire.UserActive, Permissions: perms}).AppendTo(nil)
	bad[len("bob")+1+1+1+1+1] = 0xff
	ExpectStatus(t, c.CommandRaw(wire.OpCreateUser, bad), wire.ErrInvalidCommand.Code)

	// The new user logs in.
	a := s.Dial(t)
	a.Login("alice", "alice-pw")

	// GET_USER / GET_USERS.
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: name("alice")})), &ud)
	if ud.User.ID != 1 || ud.Permissions == nil || !ud.Permissions.Global.ReadStreams {
		t.Fatalf("GET_USER %+v", ud)
	}
	if b := ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: sid(99)})); len(b) != 0 {
		t.Fatal("GET_USER of a missing user is not empty")
	}
	var users wire.Users
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetUsers, nil)), &users)
	if len(users) != 2 || users[0].Username != RootUsername {
		t.Fatalf("GET_USERS %+v", users)
	}

	// UPDATE_USER.
	ExpectOK(t, c.Command(wire.OpUpdateUser, &wire.UpdateUser{UserID: sid(1), Username: "alicia"}))
	ExpectResult(t, c.Command(wire.OpUpdateUser, &wire.UpdateUser{UserID: sid(1), Username: RootUsername}), wire.ErrUserAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpUpdateUser, &wire.UpdateUser{UserID: sid(1), Username: "ab"}), wire.ErrInvalidUsername.Code)
	ExpectResult(t, c.Command(wire.OpUpdateUser, &wire.UpdateUser{UserID: sid(9), Status: wire.UserInactive}), wire.ErrResourceNotFound.Code)

	// UPDATE_PERMISSIONS.
	ExpectOK(t, c.Command(wire.OpUpdatePermissions, &wire.UpdatePermissions{UserID: sid(1)}))
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: sid(1)})), &ud)
	if ud.Permissions != nil {
		t.Fatalf("permissions not cleared: %+v", ud.Permissions)
	}
	ExpectResult(t, c.Command(wire.OpUpdatePermissions, &wire.UpdatePermissions{UserID: sid(0), Permissions: perms}), wire.ErrCannotChangePermissions.Code)
	ExpectResult(t, c.Command(wire.OpUpdatePermissions, &wire.UpdatePermissions{UserID: sid(8), Permissions: perms}), wire.ErrResourceNotFound.Code)
	ExpectEviction(t, c.CommandRaw(wire.OpUpdatePermissions, []byte{1, 4, 1, 0, 0, 0, 1, 3, 0, 0, 0}), wire.EvictInvalidRequestBody)
	c = s.Dial(t)
	c.LoginRoot()

	// CHANGE_PASSWORD: the current password is always verified.
	ExpectResult(t, c.Command(wire.OpChangePassword, &wire.ChangePassword{UserID: sid(1), CurrentPassword: "wrong", NewPassword: "new-pw"}), wire.ErrInvalidCredentials.Code)
	ExpectResult(t, c.Command(wire.OpChangePassword, &wire.ChangePassword{UserID: sid(7), CurrentPassword: "x", NewPassword: "y"}), wire.ErrResourceNotFound.Code)
	ExpectOK(t, a.Command(wire.OpChangePassword, &wire.ChangePassword{UserID: sid(1), CurrentPassword: "alice-pw", NewPassword: "new-pw"}))
	s.Dial(t).Login("alicia", "new-pw")
	_, f := s.Dial(t).LoginWith(LoginBody("alicia", "alice-pw"))
	ExpectEviction(t, f, wire.EvictInvalidCredentials)

	// DELETE_USER.
	ExpectResult(t, c.Command(wire.OpDeleteUser, &wire.DeleteUser{UserID: sid(0)}), wire.ErrCannotDeleteUser.Code)
	ExpectOK(t, c.Command(wire.OpDeleteUser, &wire.DeleteUser{UserID: name("alicia")}))
	ExpectResult(t, c.Command(wire.OpDeleteUser, &wire.DeleteUser{UserID: name("alicia")}), wire.ErrResourceNotFound.Code)
	_, f = s.Dial(t).LoginWith(LoginBody("alicia", "new-pw"))
	ExpectEviction(t, f, wire.EvictInvalidCredentials)
	// The deleted user's live session keeps only self-service.
	ExpectStatus(t, a.Call(wire.CmdGetStreams, nil), wire.ErrUnauthorized.Code)
}

func TestPersonalAccessTokens(t *testing.T) {
	s := Start(t, WithConfig(func(c *config.Config) { c.PersonalAccessToken.MaxTokensPerUser = 2 }))
	c := s.Dial(t)
	c.LoginRoot()
	var tok wire.RawToken
	h := c.Header(wire.OpCreatePersonalAccessToken, 0)
	body := (&wire.CreatePersonalAccessToken{Name: "ci", Expiry: 0}).AppendTo(nil)
	first := c.Do(h, body)
	decodeInto(t, ExpectOK(t, first), &tok)
	if len(tok.Token) != 68 {
		t.Fatalf("token %q", tok.Token)
	}
	// A retry of the same request is not answered with the secret again.
	ExpectResult(t, c.Do(h, body), wire.ErrPersonalAccessTokenAlreadyExists.Code)
	if r, f := s.Dial(t).LoginWith(PATBody(tok.Token)); r.Session == 0 || r.UserID != 0 {
		t.Fatalf("PAT login: %v", f)
	}
	ExpectResult(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "ci"}), wire.ErrPersonalAccessTokenAlreadyExists.Code)
	ExpectResult(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "overflow", Expiry: ^uint64(0) - 1}), wire.ErrInvalidPersonalAccessTokenExpiry.Code)
	decodeInto(t, ExpectOK(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "b-short", Expiry: 3_600_000_000})), &tok)
	ExpectStatus(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "third"}), wire.ErrPersonalAccessTokensLimitReached.Code)

	var list wire.PersonalAccessTokens
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetPersonalAccessTokens, nil)), &list)
	if len(list) != 2 || list[0].Name != "b-short" || list[0].ExpiryAt == 0 || list[1].Name != "ci" || list[1].ExpiryAt != 0 {
		t.Fatalf("GET_PERSONAL_ACCESS_TOKENS %+v", list)
	}
	ExpectOK(t, c.Command(wire.OpDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: "b-short"}))
	ExpectResult(t, c.Command(wire.OpDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: "b-short"}), wire.ErrResourceNotFound.Code)
	_, f := s.Dial(t).LoginWith(PATBody(tok.Token))
	ExpectEviction(t, f, wire.EvictInvalidToken)
	ExpectEviction(t, c.CommandRaw(wire.OpDeletePersonalAccessToken, []byte{0}), wire.EvictInvalidRequestBody)
}

func TestPATCleanerDeletesExpiredTokens(t *testing.T) {
	s := Start(t)
	meta := s.Broker.Metadata()
	if _, err := meta.CreatePAT(0, "short", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := meta.CreatePAT(0, "long", 0); err != nil {
		t.Fatal(err)
	}
	if n := meta.CleanPATs(); n != 1 {
		t.Fatalf("cleaner removed %d tokens", n)
	}
	c := s.Dial(t)
	c.LoginRoot()
	var list wire.PersonalAccessTokens
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetPersonalAccessTokens, nil)), &list)
	if len(list) != 1 || list[0].Name != "long" {
		t.Fatalf("after cleaning: %+v", list)
	}
}

func TestSystemCommands(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	mkTopic(t, c, mkStream(t, c, "s"), "t", 2, nil)

	var st wire.Stats
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetStats, nil)), &st)
	if st.StreamsCount != 1 || st.TopicsCount != 1 || st.PartitionsCount != 2 || st.ProcessID == 0 || st.ClientsCount != 1 || st.ServerVersion == "" || st.MemoryUsage == 0 {
		t.Fatalf("stats %+v", st)
	}
	ExpectPlain(t, c.Call(wire.CmdGetStats, []byte{1})) // no request fields: bytes ignored

	var cm wire.ClusterMetadata
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetClusterMetadata, nil)), &cm)
	if cm.Name != "single-node" || len(cm.Nodes) != 1 || cm.Nodes[0].Name != "iggy-node" || cm.Nodes[0].IP != "127.0.0.1" || cm.Nodes[0].TCPPort == 0 || cm.Nodes[0].Role != wire.ClusterLeader {
		t.Fatalf("cluster metadata %+v", cm)
	}

	var opts wire.OptionDescriptions
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: wire.OptionScopeTopic})), &opts)
	if len(opts) != 13 {
		t.Fatalf("topic catalog has %d entries", len(opts))
	}
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: wire.OptionScopeUser})), &opts)
	if len(opts) != 0 {
		t.Fatalf("user catalog %+v", opts)
	}
	ExpectStatus(t, c.Call(wire.CmdDescribeOptions, []byte{4}), wire.ErrInvalidCommand.Code)

	for _, tc := range []struct {
		name  string
		req   wire.GetSnapshotFile
		files []string
	}{
		{"all deflated", wire.GetSnapshotFile{Compression: wire.SnapshotDeflated, Types: []wire.SnapshotType{wire.SnapshotAll}},
			[]string{"filesystem_overview.txt", "process_list.txt", "resource_usage.txt", "test.txt", "server_logs.txt", "server_config.toml"}},
		{"config stored", wire.GetSnapshotFile{Compression: wire.SnapshotStored, Types: []wire.SnapshotType{wire.SnapshotServerConfig}}, []string{"server_config.toml"}},
		{"zstd falls back", wire.GetSnapshotFile{Compression: wire.SnapshotZstd, Types: []wire.SnapshotType{wire.SnapshotTest}}, []string{"test.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ExpectPlain(t, c.Read(wire.CmdGetSnapshotFile, &tc.req))
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatalf("not a zip: %v", err)
			}
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				rc.Close()
			}
			if len(names) != len(tc.files) {
				t.Fatalf("entries %v, want %v", names, tc.files)
			}
		})
	}
	ExpectStatus(t, c.Call(wire.CmdGetSnapshotFile, []byte{9, 0}), wire.ErrInvalidCommand.Code)
}

func TestGroupMembership(t *testing.T) {
	s := Start(t)
	root := s.Dial(t)
	root.LoginRoot()
	st := mkStream(t, root, "s")
	mkTopic(t, root, st, "t", 4, nil)
	ExpectOK(t, root.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "g"}))
	ref := wire.JoinConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: name("g")}

	a, b := s.Dial(t), s.Dial(t)
	a.LoginRoot()
	b.LoginRoot()
	sync := func(c *Client) wire.ConsumerGroupAssignment {
		t.Helper()
		var as wire.ConsumerGroupAssignment
		decodeInto(t, ExpectPlain(t, c.Read(wire.CmdSyncConsumerGroup, (*wire.SyncConsumerGroup)(&ref))), &as)
		return as
	}
	if body := ExpectPlain(t, a.Read(wire.CmdSyncConsumerGroup, (*wire.SyncConsumerGroup)(&ref))); len(body) != 0 {
		t.Fatal("SYNC by a non-member is not empty")
	}
	ExpectOK(t, a.Command(wire.OpJoinConsumerGroup, &ref))
	ExpectOK(t, a.Command(wire.OpJoinConsumerGroup, &ref)) // re-join: no-op
	if as := sync(a); len(as.Partitions) != 4 {
		t.Fatalf("single member owns %v", as.Partitions)
	}
	ExpectOK(t, b.Command(wire.OpJoinConsumerGroup, &ref))
	pa, pb := sync(a), sync(b)
	if len(pa.Partitions)+len(pb.Partitions) != 4 || len(pa.Partitions) != 2 {
		t.Fatalf("after second join: %v %v", pa.Partitions, pb.Partitions)
	}
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, root.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&ref))), &gd)
	if len(gd.Members) != 2 {
		t.Fatalf("members %+v", gd.Members)
	}
	if me := getMe(t, a); len(me.ConsumerGroups) != 1 {
		t.Fatalf("GET_ME groups %+v", me.ConsumerGroups)
	}
	// Leave, then leave again (5006); a logout ends b's membership.
	ExpectOK(t, a.Command(wire.OpLeaveConsumerGroup, &ref))
	ExpectResult(t, a.Command(wire.OpLeaveConsumerGroup, &ref), wire.ErrConsumerGroupMemberNotFound.Code)
	if as := sync(b); len(as.Partitions) != 4 || as.Generation <= pb.Generation {
		t.Fatalf("after leave: %+v (before %+v)", as, pb)
	}
	ExpectOK(t, root.Command(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: sid(st), TopicID: sid(0), PartitionsCount: 2}))
	if as := sync(b); len(as.Partitions) != 6 {
		t.Fatalf("after adding partitions: %+v", as)
	}
	b.Do(b.Header(wire.OpLogout, wire.CmdLogoutUser), nil)
	decodeInto(t, ExpectPlain(t, root.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&ref))), &gd)
	if len(gd.Members) != 0 {
		t.Fatalf("members after logout %+v", gd.Members)
	}
	ExpectResult(t, a.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: sid(st), TopicID: sid(0), GroupID: sid(9)}), wire.ErrConsumerGroupIDNotFound.Code)
	ExpectResult(t, a.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: sid(st), TopicID: sid(5), GroupID: sid(0)}), wire.ErrTopicIDNotFound.Code)
}
