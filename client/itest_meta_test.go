package client_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/itest"
	"github.com/iggo-dev/iggo/wire"
)

// Integration tests of the metadata-plane and system methods against the
// real broker.

func TestBrokerStreamsAndTopics(t *testing.T) {
	s := itest.Start(t)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	st, err := c.CreateStream(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "orders" || st.TopicsCount != 0 {
		t.Fatalf("created stream %+v", st)
	}
	if _, err := c.CreateStream(ctx, "orders"); !errors.Is(err, wire.ErrStreamNameAlreadyExists) {
		t.Fatalf("duplicate stream: %v", err)
	}
	byID, err := c.GetStream(ctx, wire.NumericID(st.ID))
	if err != nil || byID.Name != "orders" {
		t.Fatalf("get by id: %+v, %v", byID, err)
	}
	if err := c.UpdateStream(ctx, wire.NumericID(st.ID), "sales"); err != nil {
		t.Fatal(err)
	}
	sales := wire.NamedID("sales")
	if _, err := c.GetStream(ctx, wire.NamedID("orders")); !errors.Is(err, wire.ErrStreamIDNotFound) {
		t.Fatalf("old name: %v", err)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil || len(streams) != 1 || streams[0].Name != "sales" {
		t.Fatalf("streams %+v, %v", streams, err)
	}
	tp, err := c.CreateTopic(ctx, sales, "events", 2, wire.Uint64Option(wire.TopicOptMessageExpiry, 3_600_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if tp.Name != "events" || tp.PartitionsCount != 2 || len(tp.Partitions) != 2 || tp.MessageExpiry != 3_600_000_000 {
		t.Fatalf("created topic %+v", tp)
	}
	if _, err := c.CreateTopic(ctx, wire.NamedID("nope"), "x", 1); !errors.Is(err, wire.ErrStreamIDNotFound) {
		t.Fatalf("topic in a missing stream: %v", err)
	}
	events := wire.NamedID("events")
	if err := c.UpdateTopic(ctx, sales, events, "events", wire.Uint64Option(wire.TopicOptMessageExpiry, wire.ExpiryNever)); err != nil {
		t.Fatal(err)
	}
	if err := c.CreatePartitions(ctx, sales, events, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePartitions(ctx, sales, events, 1); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTopic(ctx, sales, events)
	if err != nil || got.PartitionsCount != 4 || got.MessageExpiry != wire.ExpiryNever {
		t.Fatalf("topic after updates %+v, %v", got, err)
	}
	topics, err := c.GetTopics(ctx, sales)
	if err != nil || len(topics) != 1 || topics[0].ID != tp.ID {
		t.Fatalf("topics %+v, %v", topics, err)
	}
	// Messages, then purges and segment deletion.
	msgs := []wire.Message{{Payload: []byte("a")}, {Payload: []byte("b")}}
	for range 2 {
		if _, err := c.SendMessages(ctx, sales, events, wire.PartitioningByID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteSegments(ctx, sales, events, 0, 1); err != nil {
		t.Fatalf("delete segments: %v", err)
	}
	if err := c.DeleteSegments(ctx, sales, events, 99, 1); !errors.Is(err, wire.ErrPartitionNotFound) {
		t.Fatalf("delete segments of a missing partition: %v", err)
	}
	countAt := func(p uint32) uint32 {
		res, err := c.PollMessages(ctx, wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: sales, TopicID: events,
			Partition: wire.SomePartition(p), Strategy: wire.FirstStrategy(), Count: 100})
		if err != nil {
			t.Fatal(err)
		}
		return res.Count
	}
	if n := countAt(0); n != 4 {
		t.Fatalf("%d messages before purge", n)
	}
	if err := c.PurgeTopic(ctx, sales, events); err != nil {
		t.Fatal(err)
	}
	if n := countAt(0); n != 0 {
		t.Fatalf("%d messages after topic purge", n)
	}
	if _, err := c.SendMessages(ctx, sales, events, wire.PartitioningByID(1), msgs); err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeStream(ctx, sales); err != nil {
		t.Fatal(err)
	}
	if n := countAt(1); n != 0 {
		t.Fatalf("%d messages after stream purge", n)
	}
	if err := c.DeleteTopic(ctx, sales, events); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTopic(ctx, sales, events); !errors.Is(err, wire.ErrTopicIDNotFound) {
		t.Fatalf("deleted topic: %v", err)
	}
	if err := c.DeleteStream(ctx, sales); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetStream(ctx, sales); !errors.Is(err, wire.ErrStreamIDNotFound) {
		t.Fatalf("deleted stream: %v", err)
	}
}

func TestBrokerUsersAndTokens(t *testing.T) {
	s := itest.Start(t)
	root := dialRoot(t, s)
	ctx := testCtx(t)
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true}}
	u, err := root.CreateUser(ctx, "alice", "secret-1", wire.UserActive, perms)
	if err != nil {
		t.Fatal(err)
	}
	if u.User.Username != "alice" || u.Permissions == nil || !u.Permissions.Global.ReadStreams {
		t.Fatalf("created user %+v", u)
	}
	if _, err := root.CreateUser(ctx, "alice", "secret-1", wire.UserActive, nil); !errors.Is(err, wire.ErrUserAlreadyExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	alice := wire.NamedID("alice")
	got, err := root.GetUser(ctx, alice)
	if err != nil || got.User.ID != u.User.ID {
		t.Fatalf("get user %+v, %v", got, err)
	}
	users, err := root.GetUsers(ctx)
	if err != nil || len(users) != 2 {
		t.Fatalf("users %+v, %v", users, err)
	}
	// The user changes its own password and logs in with it.
	a, err := client.Dial(ctx, s.Addr, client.WithCredentials("alice", "secret-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.ChangePassword(ctx, alice, "wrong", "secret-2"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("wrong current password: %v", err)
	}
	if err := a.ChangePassword(ctx, alice, "secret-1", "secret-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Dial(ctx, s.Addr, client.WithCredentials("alice", "secret-1")); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("old password: %v", err)
	}
	// Permissions: alice may read streams but not create them.
	if _, err := a.GetStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateStream(ctx, "x"); !errors.Is(err, wire.ErrUnauthorized) {
		t.Fatalf("create without permission: %v", err)
	}
	if err := root.UpdatePermissions(ctx, alice, &wire.Permissions{Global: wire.GlobalPermissions{ManageStreams: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateStream(ctx, "x"); err != nil {
		t.Fatalf("create with permission: %v", err)
	}
	// Personal access tokens.
	tok, err := a.CreatePersonalAccessToken(ctx, "ci", client.PATNeverExpires)
	if err != nil {
		t.Fatal(err)
	}
	pats, err := a.GetPersonalAccessTokens(ctx)
	if err != nil || len(pats) != 1 || pats[0].Name != "ci" || pats[0].ExpiryAt != 0 {
		t.Fatalf("tokens %+v, %v", pats, err)
	}
	viaToken, err := client.Dial(ctx, s.Addr, client.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	me, err := viaToken.GetMe(ctx)
	viaToken.Close()
	if err != nil || me.UserID != u.User.ID {
		t.Fatalf("GET_ME by token: %+v, %v", me, err)
	}
	if err := a.DeletePersonalAccessToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if err := a.DeletePersonalAccessToken(ctx, "ci"); !errors.Is(err, wire.ErrResourceNotFound) {
		t.Fatalf("second token delete: %v", err)
	}
	// Rename, deactivate, delete.
	if err := root.UpdateUser(ctx, alice, "alicia", wire.UserInactive); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Dial(ctx, s.Addr, client.WithCredentials("alicia", "secret-2")); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("inactive user login: %v", err)
	}
	if err := root.DeleteUser(ctx, wire.NamedID("alicia")); err != nil {
		t.Fatal(err)
	}
	if _, err := root.GetUser(ctx, wire.NamedID("alicia")); !errors.Is(err, wire.ErrResourceNotFound) {
		t.Fatalf("deleted user: %v", err)
	}
}

func TestBrokerSystem(t *testing.T) {
	s := itest.Start(t)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetStats(ctx)
	if err != nil || st.StreamsCount != 1 || st.ClientsCount < 1 || st.ProcessID == 0 {
		t.Fatalf("stats %+v, %v", st, err)
	}
	m, err := c.GetClusterMetadata(ctx)
	if err != nil || len(m.Nodes) != 1 || m.Nodes[0].Role != wire.ClusterLeader {
		t.Fatalf("cluster %+v, %v", m, err)
	}
	opts, err := c.DescribeOptions(ctx, wire.OptionScopeTopic)
	if err != nil || len(opts) != len(wire.OptionCatalog(wire.OptionScopeTopic)) {
		t.Fatalf("topic options %+v, %v", opts, err)
	}
	snap, err := c.GetSnapshot(ctx, wire.SnapshotDeflated, wire.SnapshotServerConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zip.NewReader(bytes.NewReader(snap), int64(len(snap))); err != nil {
		t.Fatalf("snapshot is not a ZIP archive: %v", err)
	}
}

func TestBrokerConsumerGroupCommands(t *testing.T) {
	s := dataBroker(t, 3)
	c := dialRoot(t, s)
	ctx := testCtx(t)
	g, err := c.CreateConsumerGroup(ctx, streamID, topicID, "workers")
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "workers" || g.MembersCount != 0 {
		t.Fatalf("created group %+v", g)
	}
	if _, err := c.CreateConsumerGroup(ctx, streamID, topicID, "workers"); !errors.Is(err, wire.ErrConsumerGroupNameAlreadyExists) {
		t.Fatalf("duplicate group: %v", err)
	}
	workers := wire.NamedID("workers")
	if _, err := c.SyncConsumerGroup(ctx, streamID, topicID, workers); !errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
		t.Fatalf("sync before join: %v", err)
	}
	if err := c.JoinConsumerGroup(ctx, streamID, topicID, workers); err != nil {
		t.Fatal(err)
	}
	a, err := c.SyncConsumerGroup(ctx, streamID, topicID, workers)
	if err != nil || !slices.Equal(a.Partitions, []uint32{0, 1, 2}) {
		t.Fatalf("assignment %+v, %v", a, err)
	}
	d, err := c.GetConsumerGroup(ctx, streamID, topicID, workers)
	if err != nil || d.MembersCount != 1 || len(d.Members) != 1 {
		t.Fatalf("group %+v, %v", d, err)
	}
	me, err := c.GetMe(ctx)
	if err != nil || len(me.ConsumerGroups) != 1 || me.ConsumerGroups[0].GroupID != g.ID {
		t.Fatalf("GET_ME groups %+v, %v", me, err)
	}
	groups, err := c.GetConsumerGroups(ctx, streamID, topicID)
	if err != nil || len(groups) != 1 {
		t.Fatalf("groups %+v, %v", groups, err)
	}
	if err := c.LeaveConsumerGroup(ctx, streamID, topicID, workers); err != nil {
		t.Fatal(err)
	}
	if err := c.LeaveConsumerGroup(ctx, streamID, topicID, workers); !errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
		t.Fatalf("second leave: %v", err)
	}
	if err := c.DeleteConsumerGroup(ctx, streamID, topicID, workers); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetConsumerGroup(ctx, streamID, topicID, workers); !errors.Is(err, wire.ErrConsumerGroupIDNotFound) {
		t.Fatalf("deleted group: %v", err)
	}
}

// TestBrokerMetadataRetriedOnce loses the reply of a CreateStream the
// broker committed. The client resends it with the same client id and
// request number after logging in again, and the stream exists exactly
// once. The answer to the resend depends on a race in the server: when
// the new Register arrives before the server has handled the old
// connection's close, the client table keeps the entry and replays the
// cached reply; otherwise the close logs the session out, dropping the
// entry (semantics.md §1.9), and the resend executes again and is
// refused with StreamNameAlreadyExists.
func TestBrokerMetadataRetriedOnce(t *testing.T) {
	s := itest.Start(t)
	var dropped atomic.Bool
	px := newProxy(t, s.Addr, func(h wire.ReplyHeader) bool {
		return h.Operation == wire.OpCreateStream && dropped.CompareAndSwap(false, true)
	})
	c, err := client.Dial(testCtx(t), px.Addr(), client.WithCredentials(itest.RootUsername, itest.RootPassword),
		client.WithReconnect(client.ReconnectPolicy{InitialBackoff: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	// The broker keeps the client-table slot of a dropped connection, so
	// the retry under the same client id and request number is answered
	// from the reply cache: success, not StreamNameAlreadyExists.
	if _, err = c.CreateStream(ctx, "once"); err != nil {
		t.Fatalf("create across a dropped connection: %v", err)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil || len(streams) != 1 {
		t.Fatalf("streams %+v, %v", streams, err)
	}
	var creates []proxied
	for _, r := range px.requests() {
		if r.Hdr.Operation == wire.OpCreateStream {
			creates = append(creates, r)
		}
	}
	if len(creates) != 2 || creates[0].Hdr.Request != creates[1].Hdr.Request || creates[0].Hdr.Client != creates[1].Hdr.Client {
		t.Fatalf("attempts %+v", creates)
	}
}
