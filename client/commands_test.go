package client

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// TestEveryCommand calls a Client method for every command of the
// registry (except the legacy logins 38 and 44, which a 0.11 client never
// sends) and checks the server received exactly that command with the
// operation the registry gives it.
func TestEveryCommand(t *testing.T) {
	s := newFakeServer(t, nil)
	c := dialFake(t, s)
	ctx := ctxTimeout(t)
	sid, tid, gid := wire.NamedID("s"), wire.NumericID(2), wire.NamedID("g")
	me := wire.SingleConsumer(wire.NumericID(1))
	calls := map[wire.Command]func() error{
		wire.CmdPing:               func() error { return c.Ping(ctx) },
		wire.CmdGetStats:           func() error { _, err := c.GetStats(ctx); return err },
		wire.CmdGetSnapshotFile:    func() error { _, err := c.GetSnapshot(ctx, wire.SnapshotDeflated); return err },
		wire.CmdGetClusterMetadata: func() error { _, err := c.GetClusterMetadata(ctx); return err },
		wire.CmdDescribeOptions:    func() error { _, err := c.DescribeOptions(ctx, wire.OptionScopeTopic); return err },
		wire.CmdGetMe:              func() error { _, err := c.GetMe(ctx); return err },
		wire.CmdGetClient:          func() error { _, err := c.GetClient(ctx, 3); return err },
		wire.CmdGetClients:         func() error { _, err := c.GetClients(ctx); return err },
		wire.CmdGetUser:            func() error { _, err := c.GetUser(ctx, wire.NamedID("u")); return err },
		wire.CmdGetUsers:           func() error { _, err := c.GetUsers(ctx); return err },
		wire.CmdCreateUser: func() error {
			_, err := c.CreateUser(ctx, "user", "secret", wire.UserActive, &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}})
			return err
		},
		wire.CmdDeleteUser:        func() error { return c.DeleteUser(ctx, wire.NamedID("u")) },
		wire.CmdUpdateUser:        func() error { return c.UpdateUser(ctx, wire.NamedID("u"), "v", wire.UserInactive) },
		wire.CmdUpdatePermissions: func() error { return c.UpdatePermissions(ctx, wire.NamedID("u"), nil) },
		wire.CmdChangePassword:    func() error { return c.ChangePassword(ctx, wire.NamedID("u"), "old", "new") },
		wire.CmdLogoutUser:        func() error { return c.Logout(ctx) },
		wire.CmdLoginRegister:     func() error { _, err := c.Login(ctx, "iggy", "iggy"); return err },
		wire.CmdLoginRegisterWithPAT: func() error {
			_, err := c.LoginWithToken(ctx, "token")
			return err
		},
		wire.CmdGetPersonalAccessTokens: func() error { _, err := c.GetPersonalAccessTokens(ctx); return err },
		wire.CmdCreatePersonalAccessToken: func() error {
			_, err := c.CreatePersonalAccessToken(ctx, "pat", time.Hour)
			return err
		},
		wire.CmdDeletePersonalAccessToken: func() error { return c.DeletePersonalAccessToken(ctx, "pat") },
		wire.CmdPollMessages: func() error {
			_, err := c.PollMessages(ctx, wire.PollMessages{Consumer: me, StreamID: sid, TopicID: tid, Strategy: wire.NextStrategy(), Count: 1})
			return err
		},
		wire.CmdSendMessages: func() error {
			_, err := c.SendMessages(ctx, sid, tid, wire.PartitioningByKey([]byte("k")), []wire.Message{{Payload: []byte("p")}})
			return err
		},
		wire.CmdFlushUnsavedBuffer: func() error { return c.FlushUnsavedBuffer(ctx, sid, tid, 0, true) },
		wire.CmdGetConsumerOffset: func() error {
			_, err := c.GetConsumerOffset(ctx, me, sid, tid, wire.SomePartition(0))
			return err
		},
		wire.CmdStoreConsumerOffset:  func() error { return c.StoreConsumerOffset(ctx, me, sid, tid, wire.SomePartition(0), 1) },
		wire.CmdDeleteConsumerOffset: func() error { return c.DeleteConsumerOffset(ctx, me, sid, tid, wire.OptPartition{}) },
		wire.CmdGetStream:            func() error { _, err := c.GetStream(ctx, sid); return err },
		wire.CmdGetStreams:           func() error { _, err := c.GetStreams(ctx); return err },
		wire.CmdCreateStream:         func() error { _, err := c.CreateStream(ctx, "s"); return err },
		wire.CmdDeleteStream:         func() error { return c.DeleteStream(ctx, sid) },
		wire.CmdUpdateStream:         func() error { return c.UpdateStream(ctx, sid, "s2") },
		wire.CmdPurgeStream:          func() error { return c.PurgeStream(ctx, sid) },
		wire.CmdGetTopic:             func() error { _, err := c.GetTopic(ctx, sid, tid); return err },
		wire.CmdGetTopics:            func() error { _, err := c.GetTopics(ctx, sid); return err },
		wire.CmdCreateTopic: func() error {
			_, err := c.CreateTopic(ctx, sid, "t", 3, wire.Uint64Option(wire.TopicOptMessageExpiry, 1_000_000))
			return err
		},
		wire.CmdDeleteTopic:       func() error { return c.DeleteTopic(ctx, sid, tid) },
		wire.CmdUpdateTopic:       func() error { return c.UpdateTopic(ctx, sid, tid, "t2") },
		wire.CmdPurgeTopic:        func() error { return c.PurgeTopic(ctx, sid, tid) },
		wire.CmdCreatePartitions:  func() error { return c.CreatePartitions(ctx, sid, tid, 2) },
		wire.CmdDeletePartitions:  func() error { return c.DeletePartitions(ctx, sid, tid, 1) },
		wire.CmdDeleteSegments:    func() error { return c.DeleteSegments(ctx, sid, tid, 0, 1) },
		wire.CmdGetConsumerGroup:  func() error { _, err := c.GetConsumerGroup(ctx, sid, tid, gid); return err },
		wire.CmdGetConsumerGroups: func() error { _, err := c.GetConsumerGroups(ctx, sid, tid); return err },
		wire.CmdCreateConsumerGroup: func() error {
			_, err := c.CreateConsumerGroup(ctx, sid, tid, "g")
			return err
		},
		wire.CmdDeleteConsumerGroup: func() error { return c.DeleteConsumerGroup(ctx, sid, tid, gid) },
		wire.CmdJoinConsumerGroup:   func() error { return c.JoinConsumerGroup(ctx, sid, tid, gid) },
		wire.CmdLeaveConsumerGroup:  func() error { return c.LeaveConsumerGroup(ctx, sid, tid, gid) },
		wire.CmdSyncConsumerGroup:   func() error { _, err := c.SyncConsumerGroup(ctx, sid, tid, gid); return err },
	}
	for _, info := range wire.Commands() {
		if info.Legacy {
			continue
		}
		run, ok := calls[info.Code]
		if !ok {
			t.Errorf("no client method exercised for %v", info.Code)
			continue
		}
		before := len(s.requests())
		// The fake answers with empty payloads, which some replies cannot
		// be; only transport-level failures matter here.
		if err := run(); err != nil && !isBodyError(err) {
			t.Errorf("%v: %v", info.Code, err)
		}
		reqs := s.requests()[before:]
		if len(reqs) != 1 {
			t.Errorf("%v sent %d frames", info.Code, len(reqs))
			continue
		}
		r := reqs[0]
		if r.Hdr.Operation != info.Operation || info.Operation == wire.OpNonReplicated && r.Hdr.Code != info.Code {
			t.Errorf("%v went out as operation %v code %v", info.Code, r.Hdr.Operation, r.Hdr.Code)
		}
		if info.Operation == wire.OpRegister && info.Code != wire.CmdLoginRegister {
			var body wire.LoginRegisterWithPAT
			if body.Decode(r.Body) != nil || body.Token != "token" {
				t.Errorf("PAT login body % x", r.Body)
			}
		}
	}
}

// isBodyError reports the errors the fake's empty payloads cause: a
// decode failure or a "not found" answer.
func isBodyError(err error) bool {
	if _, ok := errorsAsProtocol(err); ok {
		return true
	}
	for _, e := range []error{wire.ErrClientNotFound, wire.ErrResourceNotFound, wire.ErrStreamIDNotFound,
		wire.ErrTopicIDNotFound, wire.ErrConsumerGroupIDNotFound, wire.ErrConsumerGroupMemberNotFound} {
		if errorsIs(err, e) {
			return true
		}
	}
	return false
}
