package itest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// Reference parity (docs/DESIGN.md, "Reference parity"): where the
// official SDKs' suites saw the reference server answer differently, Iggo
// must answer as the reference does.

// parityJunk is appended to valid bodies; the Node.js SDK sends 4 extra
// bytes after DELETE_TOPIC's two identifiers.
var parityJunk = []byte{0xde, 0xad, 0xbe, 0xef}

// parityReq is one request of the trailing-bytes table.
type parityReq struct {
	op   wire.Operation
	code wire.Command // for OpNonReplicated
	body []byte
	// conn sends the request; nil means the world's root connection.
	conn *Client
}

// parityMode is how much of two answers must agree.
type parityMode uint8

const (
	// sameBytes: identical status, operation and body.
	sameBytes parityMode = iota
	// sameShape: identical kind, status, operation and body length (and
	// the body itself when at most 12 bytes, i.e. a result section); for
	// answers that carry fresh ids, timestamps or tokens.
	sameShape
	// sameStatus: identical kind, status and operation (a snapshot
	// archive's size varies from call to call).
	sameStatus
)

// parityWorld is a broker with shared read-only fixtures and a counter
// for fresh names of equal length.
type parityWorld struct {
	t      *testing.T
	s      *Server
	root   *Client
	n      int
	stream wire.Identifier // "shared": topic "events" (2 partitions), group "g" joined by root
	topic  wire.Identifier
	group  wire.Identifier
	self   uint32 // root connection's client id
}

func newParityWorld(t *testing.T) *parityWorld {
	t.Helper()
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	w := &parityWorld{t: t, s: s, root: c, stream: name("shared"), topic: name("events"), group: name("g")}
	st := mkStream(t, c, "shared")
	mkTopic(t, c, st, "events", 2, nil)
	c.MustSend(w.stream, w.topic, wire.PartitioningByID(0), Batch(t, 1, []byte("a"), []byte("b"), []byte("c")))
	ExpectResultOK(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: wire.SingleConsumer(sid(7)), StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0), Offset: 1, Ack: wire.AckQuorum}))
	ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: w.stream, TopicID: w.topic, Name: "g"}))
	ExpectOK(t, c.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: w.stream, TopicID: w.topic, GroupID: w.group}))
	w.user("viewer", "viewer-pw", nil)
	ExpectOK(t, c.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "shared-pat"}))
	var me wire.ClientDetails
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetMe, nil)), &me)
	w.self = me.ClientID
	return w
}

// tag returns a fresh name: prefix and a 4-digit counter, so both runs of
// a case send bodies of the same length.
func (w *parityWorld) tag(prefix string) string {
	w.n++
	return fmt.Sprintf("%s%04d", prefix, w.n)
}

// user creates a user (root's command).
func (w *parityWorld) user(username, password string, p *wire.Permissions) {
	w.t.Helper()
	ExpectOK(w.t, w.root.Command(wire.OpCreateUser, &wire.CreateUser{Username: username, Password: password, Status: wire.UserActive, Permissions: p}))
}

// topic creates a fresh stream with topic "t" of the given partitions and
// returns both identifiers by name.
func (w *parityWorld) freshTopic(partitions uint32) (wire.Identifier, wire.Identifier) {
	w.t.Helper()
	n := w.tag("s")
	mkTopic(w.t, w.root, mkStream(w.t, w.root, n), "t", partitions, nil)
	return name(n), name("t")
}

// group creates group "grp" on a fresh topic.
func (w *parityWorld) freshGroup() (wire.Identifier, wire.Identifier, wire.Identifier) {
	w.t.Helper()
	st, tp := w.freshTopic(1)
	ExpectOK(w.t, w.root.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: st, TopicID: tp, Name: "grp"}))
	return st, tp, name("grp")
}

// loggedIn dials a connection logged in as root.
func (w *parityWorld) loggedIn() *Client {
	c := w.s.Dial(w.t)
	c.LoginRoot()
	return c
}

// send sends r with extra appended to its body, numbered as the SDKs
// number that operation.
func (w *parityWorld) send(r parityReq, extra []byte) Frame {
	w.t.Helper()
	c := r.conn
	if c == nil {
		c = w.root
	}
	body := append(bytes.Clone(r.body), extra...)
	switch {
	case r.op == wire.OpNonReplicated:
		return c.Call(r.code, body)
	case r.op.Partition():
		return c.Do(c.SendHeader(r.op), body)
	case r.op == wire.OpRegister || r.op == wire.OpLogout:
		return c.Do(c.Header(r.op, 0), body)
	}
	return c.CommandRaw(r.op, body)
}

// paritySig summarizes what of an answer must agree under mode.
func paritySig(f Frame, mode parityMode) string {
	if f.Kind != wire.KindReply {
		return f.String()
	}
	s := fmt.Sprintf("status %d op %v", f.Reply.Status, f.Reply.Operation)
	switch {
	case mode == sameBytes || (mode == sameShape && len(f.Body) <= 12):
		s += fmt.Sprintf(" body %x", f.Body)
	case mode == sameShape:
		s += fmt.Sprintf(" body %d bytes", len(f.Body))
	}
	return s
}

// parityCase is one command of the trailing-bytes table: prepare builds
// the fixture (afresh for each run when the command changes state) and
// returns the valid request and a check of its effect (nil: none beyond
// the answer).
type parityCase struct {
	name    string
	mode    parityMode
	prepare func(w *parityWorld) (parityReq, func(t *testing.T))
}

// TestParityTrailingBytes: every command whose body the reference decodes
// as a prefix answers "valid body + 4 junk bytes" exactly as the valid
// body, with the same effect (commands.md, every command; style.md "Wire
// codec"). The strict commands are TestParityStrictBodies.
func TestParityTrailingBytes(t *testing.T) {
	w := newParityWorld(t)
	read := func(code wire.Command, b wire.Body) func(*parityWorld) (parityReq, func(*testing.T)) {
		return func(*parityWorld) (parityReq, func(*testing.T)) {
			var body []byte
			if b != nil {
				body = b.AppendTo(nil)
			}
			return parityReq{op: wire.OpNonReplicated, code: code, body: body}, nil
		}
	}
	meta := func(op wire.Operation, b wire.Body) parityReq { return parityReq{op: op, body: b.AppendTo(nil)} }
	cases := []parityCase{
		// System and session.
		{"PING", sameBytes, read(wire.CmdPing, nil)},
		{"GET_STATS", sameShape, read(wire.CmdGetStats, nil)},
		{"GET_SNAPSHOT_FILE", sameStatus, read(wire.CmdGetSnapshotFile, &wire.GetSnapshotFile{Compression: wire.SnapshotStored, Types: []wire.SnapshotType{wire.SnapshotTest}})},
		{"GET_CLUSTER_METADATA", sameBytes, read(wire.CmdGetClusterMetadata, nil)},
		{"DESCRIBE_OPTIONS", sameBytes, read(wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: wire.OptionScopeTopic})},
		{"GET_ME", sameBytes, read(wire.CmdGetMe, nil)},
		{"GET_CLIENT", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetClient, &wire.GetClient{ClientID: w.self})(w)
		}},
		{"GET_CLIENTS", sameBytes, read(wire.CmdGetClients, nil)},
		{"LOGIN_REGISTER", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			c := w.s.Dial(w.t)
			return parityReq{op: wire.OpRegister, body: LoginBody(RootUsername, RootPassword), conn: c}, nil
		}},
		{"LOGIN_REGISTER_WITH_PAT", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			var tok wire.RawToken
			decodeInto(w.t, ExpectOK(w.t, w.root.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: w.tag("login")})), &tok)
			return parityReq{op: wire.OpRegister, body: PATBody(tok.Token), conn: w.s.Dial(w.t)}, nil
		}},
		{"LOGOUT_USER", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			c := w.loggedIn()
			return parityReq{op: wire.OpLogout, conn: c}, func(t *testing.T) {
				ExpectStatus(t, c.Call(wire.CmdGetStreams, nil), wire.ErrUnauthenticated.Code)
			}
		}},
		{"LOGIN_USER (legacy)", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return parityReq{op: wire.OpNonReplicated, code: wire.CmdLoginUser, body: LoginBody(RootUsername, RootPassword), conn: w.loggedIn()}, nil
		}},
		{"LOGIN_WITH_PERSONAL_ACCESS_TOKEN (legacy)", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return parityReq{op: wire.OpNonReplicated, code: wire.CmdLoginWithPersonalAccessToken, body: []byte{1, 'x'}, conn: w.loggedIn()}, nil
		}},
		// Users and tokens.
		{"GET_USER", sameBytes, read(wire.CmdGetUser, &wire.GetUser{UserID: name("viewer")})},
		{"GET_USERS", sameBytes, read(wire.CmdGetUsers, nil)},
		{"DELETE_USER", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			u := w.tag("u")
			w.user(u, "password", nil)
			return meta(wire.OpDeleteUser, &wire.DeleteUser{UserID: name(u)}), func(t *testing.T) {
				ExpectStatus(t, w.root.Read(wire.CmdGetUser, &wire.GetUser{UserID: name(u)}), 0)
			}
		}},
		{"UPDATE_PERMISSIONS set", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			u := w.tag("u")
			w.user(u, "password", nil)
			p := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}}
			return meta(wire.OpUpdatePermissions, &wire.UpdatePermissions{UserID: name(u), Permissions: p}), func(t *testing.T) {
				var d wire.UserDetails
				decodeInto(t, ExpectPlain(t, w.root.Read(wire.CmdGetUser, &wire.GetUser{UserID: name(u)})), &d)
				if d.Permissions == nil || !d.Permissions.Global.ReadStreams {
					t.Fatalf("permissions after update: %+v", d.Permissions)
				}
			}
		}},
		{"UPDATE_PERMISSIONS clear", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			u := w.tag("u")
			w.user(u, "password", &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}})
			return meta(wire.OpUpdatePermissions, &wire.UpdatePermissions{UserID: name(u)}), func(t *testing.T) {
				var d wire.UserDetails
				decodeInto(t, ExpectPlain(t, w.root.Read(wire.CmdGetUser, &wire.GetUser{UserID: name(u)})), &d)
				if d.Permissions != nil {
					t.Fatalf("permissions after clear: %+v", d.Permissions)
				}
			}
		}},
		{"CHANGE_PASSWORD", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			u := w.tag("u")
			w.user(u, "old-password", nil)
			return meta(wire.OpChangePassword, &wire.ChangePassword{UserID: name(u), CurrentPassword: "old-password", NewPassword: "new-password"}), func(t *testing.T) {
				w.s.Dial(t).Login(u, "new-password")
			}
		}},
		{"GET_PERSONAL_ACCESS_TOKENS", sameBytes, read(wire.CmdGetPersonalAccessTokens, nil)},
		{"CREATE_PERSONAL_ACCESS_TOKEN", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			n := w.tag("pat")
			return meta(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: n}), func(t *testing.T) {
				if !hasPAT(t, w.root, n) {
					t.Fatalf("token %s not listed", n)
				}
			}
		}},
		{"DELETE_PERSONAL_ACCESS_TOKEN", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			n := w.tag("pat")
			ExpectOK(w.t, w.root.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: n}))
			return meta(wire.OpDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: n}), func(t *testing.T) {
				if hasPAT(t, w.root, n) {
					t.Fatalf("token %s still listed", n)
				}
			}
		}},
		// Messages and offsets.
		{"POLL_MESSAGES", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdPollMessages, &wire.PollMessages{Consumer: wire.SingleConsumer(sid(7)), StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0), Strategy: wire.OffsetStrategy(0), Count: 10})(w)
		}},
		{"FLUSH_UNSAVED_BUFFER", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdFlushUnsavedBuffer, &wire.FlushUnsavedBuffer{StreamID: w.stream, TopicID: w.topic})(w)
		}},
		{"GET_CONSUMER_OFFSET", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetConsumerOffset, &wire.GetConsumerOffset{Consumer: wire.SingleConsumer(sid(7)), StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0)})(w)
		}},
		{"STORE_CONSUMER_OFFSET", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			cons := wire.SingleConsumer(sid(uint32(1000 + w.n)))
			w.n++
			req := wire.StoreConsumerOffset{Consumer: cons, StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0), Offset: 2, Ack: wire.AckQuorum}
			return parityReq{op: wire.OpStoreConsumerOffset, body: req.AppendTo(nil)}, func(t *testing.T) {
				off, found, f := w.root.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0)})
				if !found || off.StoredOffset != 2 {
					t.Fatalf("stored offset: %+v %v %v", off, found, f)
				}
			}
		}},
		{"DELETE_CONSUMER_OFFSET", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			cons := wire.SingleConsumer(sid(uint32(1000 + w.n)))
			w.n++
			ExpectResultOK(w.t, w.root.StoreOffset(wire.StoreConsumerOffset{Consumer: cons, StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0), Offset: 1, Ack: wire.AckQuorum}))
			req := wire.DeleteConsumerOffset{Consumer: cons, StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0), Ack: wire.AckQuorum}
			return parityReq{op: wire.OpDeleteConsumerOffset, body: req.AppendTo(nil)}, func(t *testing.T) {
				if _, found, f := w.root.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: w.stream, TopicID: w.topic, Partition: wire.SomePartition(0)}); found {
					t.Fatalf("offset still stored: %v", f)
				}
			}
		}},
		// Streams and topics.
		{"GET_STREAM", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetStream, &wire.GetStream{StreamID: w.stream})(w)
		}},
		{"GET_STREAMS", sameBytes, read(wire.CmdGetStreams, nil)},
		{"DELETE_STREAM", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			n := w.tag("s")
			mkStream(w.t, w.root, n)
			return meta(wire.OpDeleteStream, &wire.DeleteStream{StreamID: name(n)}), func(t *testing.T) {
				ExpectStatus(t, w.root.Read(wire.CmdGetStream, &wire.GetStream{StreamID: name(n)}), 0)
			}
		}},
		{"PURGE_STREAM", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			w.root.MustSend(st, tp, wire.PartitioningByID(0), Batch(w.t, 1, []byte("x")))
			return meta(wire.OpPurgeStream, &wire.PurgeStream{StreamID: st}), func(t *testing.T) {
				if td := getTopic(t, w.root, st, tp); td.MessagesCount != 0 {
					t.Fatalf("%d messages after purge", td.MessagesCount)
				}
			}
		}},
		{"GET_TOPIC", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetTopic, &wire.GetTopic{StreamID: w.stream, TopicID: w.topic})(w)
		}},
		{"GET_TOPICS", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetTopics, &wire.GetTopics{StreamID: w.stream})(w)
		}},
		{"DELETE_TOPIC", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			return meta(wire.OpDeleteTopic, &wire.DeleteTopic{StreamID: st, TopicID: tp}), func(t *testing.T) {
				ExpectStatus(t, w.root.Read(wire.CmdGetTopic, &wire.GetTopic{StreamID: st, TopicID: tp}), 0)
			}
		}},
		{"PURGE_TOPIC", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			w.root.MustSend(st, tp, wire.PartitioningByID(0), Batch(w.t, 1, []byte("x")))
			return meta(wire.OpPurgeTopic, &wire.PurgeTopic{StreamID: st, TopicID: tp}), func(t *testing.T) {
				if td := getTopic(t, w.root, st, tp); td.MessagesCount != 0 {
					t.Fatalf("%d messages after purge", td.MessagesCount)
				}
			}
		}},
		{"CREATE_PARTITIONS", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			return meta(wire.OpCreatePartitions, &wire.CreatePartitions{StreamID: st, TopicID: tp, PartitionsCount: 2}), func(t *testing.T) {
				if td := getTopic(t, w.root, st, tp); td.PartitionsCount != 3 {
					t.Fatalf("%d partitions, want 3", td.PartitionsCount)
				}
			}
		}},
		{"DELETE_PARTITIONS", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(3)
			return meta(wire.OpDeletePartitions, &wire.DeletePartitions{StreamID: st, TopicID: tp, PartitionsCount: 1}), func(t *testing.T) {
				if td := getTopic(t, w.root, st, tp); td.PartitionsCount != 2 {
					t.Fatalf("%d partitions, want 2", td.PartitionsCount)
				}
			}
		}},
		{"DELETE_SEGMENTS", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			return meta(wire.OpDeleteSegments, &wire.DeleteSegments{StreamID: st, TopicID: tp, PartitionID: 0, SegmentsCount: 1}), nil
		}},
		// Consumer groups.
		{"GET_CONSUMER_GROUP", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: w.stream, TopicID: w.topic, GroupID: w.group})(w)
		}},
		{"GET_CONSUMER_GROUPS", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: w.stream, TopicID: w.topic})(w)
		}},
		{"SYNC_CONSUMER_GROUP", sameBytes, func(w *parityWorld) (parityReq, func(*testing.T)) {
			return read(wire.CmdSyncConsumerGroup, &wire.SyncConsumerGroup{StreamID: w.stream, TopicID: w.topic, GroupID: w.group})(w)
		}},
		{"CREATE_CONSUMER_GROUP", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp := w.freshTopic(1)
			return meta(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: st, TopicID: tp, Name: "grp"}), func(t *testing.T) {
				if f := w.root.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: st, TopicID: tp, GroupID: name("grp")}); len(ExpectPlain(t, f)) == 0 {
					t.Fatal("group not created")
				}
			}
		}},
		{"DELETE_CONSUMER_GROUP", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp, g := w.freshGroup()
			return meta(wire.OpDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}), func(t *testing.T) {
				ExpectStatus(t, w.root.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}), 0)
			}
		}},
		{"JOIN_CONSUMER_GROUP", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp, g := w.freshGroup()
			return meta(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}), func(t *testing.T) {
				if len(ExpectPlain(t, w.root.Read(wire.CmdSyncConsumerGroup, &wire.SyncConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}))) == 0 {
					t.Fatal("not a member after join")
				}
			}
		}},
		{"LEAVE_CONSUMER_GROUP", sameShape, func(w *parityWorld) (parityReq, func(*testing.T)) {
			st, tp, g := w.freshGroup()
			ExpectOK(w.t, w.root.Command(wire.OpJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}))
			return meta(wire.OpLeaveConsumerGroup, &wire.LeaveConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}), func(t *testing.T) {
				ExpectStatus(t, w.root.Read(wire.CmdSyncConsumerGroup, &wire.SyncConsumerGroup{StreamID: st, TopicID: tp, GroupID: g}), 0)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w.t = t
			var sigs [2]string
			for i, extra := range [][]byte{nil, parityJunk} {
				req, effect := tc.prepare(w)
				f := w.send(req, extra)
				sigs[i] = paritySig(f, tc.mode)
				if f.Kind == wire.KindEviction && req.conn == nil {
					// Keep later cases independent of this one.
					w.root.LoginRoot()
				}
				if effect != nil {
					effect(t)
				}
			}
			t.Logf("answer: %s", sigs[0])
			if sigs[0] != sigs[1] {
				t.Fatalf("valid body + %d junk bytes answered differently:\n valid: %s\n  junk: %s", len(parityJunk), sigs[0], sigs[1])
			}
		})
	}
}

// hasPAT reports whether c's user lists a token named n.
func hasPAT(t *testing.T, c *Client, n string) bool {
	t.Helper()
	body := ExpectPlain(t, c.Call(wire.CmdGetPersonalAccessTokens, nil))
	if len(body) == 0 {
		return false
	}
	var list wire.PersonalAccessTokens
	decodeInto(t, body, &list)
	for _, p := range list {
		if p.Name == n {
			return true
		}
	}
	return false
}

// TestParityTrailingBytesSurviveRestart: a metadata body committed with
// trailing bytes is replayed from the journal after a restart.
func TestParityTrailingBytesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir))
	c := s1.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "keep")
	mkTopic(t, c, st, "gone", 1, nil)
	mkTopic(t, c, st, "stays", 1, nil)
	del := (&wire.DeleteTopic{StreamID: name("keep"), TopicID: name("gone")}).AppendTo(nil)
	ExpectOK(t, c.CommandRaw(wire.OpDeleteTopic, append(del, parityJunk...)))
	grp := (&wire.CreateConsumerGroup{StreamID: name("keep"), TopicID: name("stays"), Name: "g"}).AppendTo(nil)
	ExpectOK(t, c.CommandRaw(wire.OpCreateConsumerGroup, append(grp, parityJunk...)))
	s1.Stop()

	s2 := Start(t, WithDir(dir))
	r := s2.Dial(t)
	r.LoginRoot()
	ExpectStatus(t, r.Read(wire.CmdGetTopic, &wire.GetTopic{StreamID: name("keep"), TopicID: name("gone")}), 0)
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, r.Read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: name("keep"), TopicID: name("stays"), GroupID: name("g")})), &gd)
	if gd.Name != "g" {
		t.Fatalf("group after restart: %+v", gd)
	}
}

// TestParityStrictBodies: where the reference rejects, Iggo still
// rejects: a body whose last field runs to the end (options blocks), the
// SEND_MESSAGES layout (metadata_length, batch_length), an inner length
// (permissions_len) and the request checksum. Nothing is created.
func TestParityStrictBodies(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "strict")
	mkTopic(t, c, st, "t", 1, nil)
	ExpectOK(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "alice", Password: "alice-pw", Status: wire.UserActive}))
	withJunk := func(b wire.Body) []byte { return append(b.AppendTo(nil), parityJunk...) }
	perms := (&wire.Permissions{}).AppendTo(nil)
	// permissions_len counts the junk: the permission set no longer
	// decodes exactly.
	badLen := func(prefix []byte) []byte {
		b := binary.LittleEndian.AppendUint32(append(bytes.Clone(prefix), 1), uint32(len(perms)+len(parityJunk)))
		return append(append(b, perms...), parityJunk...)
	}
	userID := (&wire.DeleteUser{UserID: name("alice")}).AppendTo(nil)
	createUserHead := append(append([]byte{5}, "bobby"...), 2, 'p', 'w', byte(wire.UserActive))
	for _, tc := range []struct {
		name string
		op   wire.Operation
		body []byte
		// evict is the eviction reason; 0 means status-deny code.
		code  uint32
		evict wire.EvictionReason
	}{
		{"CREATE_STREAM options to end", wire.OpCreateStream, withJunk(&wire.CreateStream{Name: "new"}), wire.ErrInvalidCommand.Code, 0},
		{"UPDATE_STREAM options to end", wire.OpUpdateStream, withJunk(&wire.UpdateStream{StreamID: name("strict"), Name: "renamed"}), wire.ErrInvalidCommand.Code, 0},
		{"CREATE_TOPIC options to end", wire.OpCreateTopic, withJunk(&wire.CreateTopic{StreamID: name("strict"), PartitionsCount: 1, Name: "new"}), wire.ErrInvalidCommand.Code, 0},
		{"UPDATE_TOPIC options to end", wire.OpUpdateTopic, withJunk(&wire.UpdateTopic{StreamID: name("strict"), TopicID: name("t"), Name: "renamed"}), wire.ErrInvalidCommand.Code, 0},
		{"CREATE_USER options to end", wire.OpCreateUser, withJunk(&wire.CreateUser{Username: "bobby", Password: "pw", Status: wire.UserActive}), wire.ErrInvalidCommand.Code, 0},
		{"UPDATE_USER options to end", wire.OpUpdateUser, withJunk(&wire.UpdateUser{UserID: name("alice"), Username: "renamed"}), wire.ErrInvalidCommand.Code, 0},
		{"CREATE_USER permissions_len", wire.OpCreateUser, badLen(createUserHead), wire.ErrInvalidCommand.Code, 0},
		{"UPDATE_PERMISSIONS permissions_len", wire.OpUpdatePermissions, badLen(userID), 0, wire.EvictInvalidRequestBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := s.Dial(t)
			conn.LoginRoot()
			f := conn.CommandRaw(tc.op, tc.body)
			if tc.evict != 0 {
				ExpectEviction(t, f, tc.evict)
				return
			}
			ExpectStatus(t, f, tc.code)
		})
	}
	t.Run("request checksum does not cover the junk", func(t *testing.T) {
		conn := s.Dial(t)
		conn.LoginRoot()
		body := (&wire.DeleteTopic{StreamID: name("strict"), TopicID: name("t")}).AppendTo(nil)
		h := conn.Header(wire.OpDeleteTopic, 0)
		h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body)}
		ExpectStatus(t, conn.Do(h, append(body, parityJunk...)), wire.ErrInvalidFormat.Code)
	})
	t.Run("SEND_MESSAGES batch_length", func(t *testing.T) {
		body := SendBody(name("strict"), name("t"), wire.PartitioningByID(0), Batch(t, 1, []byte("x")))
		ExpectStatus(t, c.SendMessages(append(body, parityJunk...)), wire.ErrInvalidCommand.Code)
	})
	t.Run("SEND_MESSAGES metadata_length", func(t *testing.T) {
		body := SendBody(name("strict"), name("t"), wire.PartitioningByID(0), Batch(t, 1, []byte("x")))
		// metadata_length claims 4 more bytes, inserted after the metadata.
		ml := binary.LittleEndian.Uint32(body)
		b := binary.LittleEndian.AppendUint32(nil, ml+uint32(len(parityJunk)))
		b = append(append(append(b, body[4:4+ml]...), parityJunk...), body[4+ml:]...)
		ExpectStatus(t, c.SendMessages(b), wire.ErrInvalidCommand.Code)
	})
	// Nothing above took effect.
	ExpectStatus(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: name("new")}), 0)
	ExpectStatus(t, c.Read(wire.CmdGetTopic, &wire.GetTopic{StreamID: name("strict"), TopicID: name("new")}), 0)
	ExpectStatus(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: name("bobby")}), 0)
	if td := getTopic(t, c, name("strict"), name("t")); td.MessagesCount != 0 || td.Name != "t" {
		t.Fatalf("topic changed: %+v", td.Topic)
	}
}

// TestParityTopicOptionZero: a numeric topic option given as an explicit
// zero is "not given", as the reference treats segment_size = 0: the
// create succeeds, the explicit block lacks the key, the derived block
// holds the default; an update with a zero keeps the value. Booleans
// false are real values; compression code 0 is no code.
func TestParityTopicOptionZero(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "opts")
	for i, opt := range []wire.Option{
		wire.Uint64Option(wire.TopicOptSegmentSize, 0),
		wire.Uint64Option(wire.TopicOptMessageExpiry, 0),
		wire.Uint64Option(wire.TopicOptMaxTopicSize, 0),
		wire.Uint64Option(wire.TopicOptSizeOfMessagesRequiredToSave, 0),
		wire.StringOption(wire.TopicOptSegmentSize, "0 B"),
	} {
		t.Run(fmt.Sprintf("%s %d", opt.Key, opt.Kind), func(t *testing.T) {
			n := fmt.Sprintf("zero-%d", i)
			created := mkTopic(t, c, st, n, 1, wire.Options{opt})
			spec, _ := wire.LookupOption(wire.OptionScopeTopic, opt.Key)
			for what, h := range map[string]wire.Topic{"create reply": created.Topic, "GET_TOPIC": getTopic(t, c, sid(st), name(n)).Topic} {
				if o, ok := h.Options.Get(opt.Key); ok {
					t.Errorf("%s: explicit block holds %s = %x", what, opt.Key, o.Value)
				}
				if o, ok := h.DerivedOptions.Get(opt.Key); !ok || !bytes.Equal(o.Value, spec.Default) {
					t.Errorf("%s: derived %s = %x (%v), want the default %x", what, opt.Key, o.Value, ok, spec.Default)
				}
				if h.MessageExpiry != wire.ExpiryNever || h.MaxTopicSize != wire.SizeUnlimited {
					t.Errorf("%s: header expiry %d, max size %d; want the defaults", what, h.MessageExpiry, h.MaxTopicSize)
				}
			}
		})
	}
	t.Run("bool false is explicit", func(t *testing.T) {
		td := mkTopic(t, c, st, "fsync-false", 1, wire.Options{wire.BoolOption(wire.TopicOptEnforceFsync, false)})
		if o, ok := td.Options.Get(wire.TopicOptEnforceFsync); !ok || !bytes.Equal(o.Value, []byte{0}) {
			t.Fatalf("explicit enforce_fsync = %x, %v", o.Value, ok)
		}
	})
	t.Run("messages_required_to_save 0", func(t *testing.T) {
		// The published catalog refuses it: "must be non-zero".
		f := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: sid(st), PartitionsCount: 1, Name: "msgs-0", Options: wire.Options{wire.Uint32Option(wire.TopicOptMessagesRequiredToSave, 0)}})
		ExpectStatus(t, f, wire.ErrInvalidOptionValue.Code)
	})
	t.Run("compression code 0", func(t *testing.T) {
		f := c.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: sid(st), PartitionsCount: 1, Name: "comp-0", Options: wire.Options{wire.Uint8Option(wire.TopicOptCompressionAlgorithm, 0)}})
		ExpectStatus(t, f, wire.ErrInvalidOptionValue.Code)
	})
	t.Run("update with zeros keeps the values", func(t *testing.T) {
		mkTopic(t, c, st, "upd", 1, wire.Options{wire.Uint64Option(wire.TopicOptMessageExpiry, 5000000), wire.Uint64Option(wire.TopicOptMaxTopicSize, 2<<30)})
		before := getTopic(t, c, sid(st), name("upd"))
		upd := wire.UpdateTopic{StreamID: sid(st), TopicID: name("upd"), Name: "upd", Options: wire.Options{
			wire.Uint64Option(wire.TopicOptMessageExpiry, 0), wire.Uint64Option(wire.TopicOptMaxTopicSize, 0),
		}}
		ExpectOK(t, c.Command(wire.OpUpdateTopic, &upd))
		after := getTopic(t, c, sid(st), name("upd"))
		if after.MessageExpiry != 5000000 || after.MaxTopicSize != 2<<30 {
			t.Fatalf("after a zero update: expiry %d, max size %d", after.MessageExpiry, after.MaxTopicSize)
		}
		if !bytes.Equal(before.Topic.Options.AppendTo(nil), after.Topic.Options.AppendTo(nil)) || !bytes.Equal(before.DerivedOptions.AppendTo(nil), after.DerivedOptions.AppendTo(nil)) {
			t.Fatalf("option blocks changed:\n before %+v / %+v\n  after %+v / %+v", before.Topic.Options, before.DerivedOptions, after.Topic.Options, after.DerivedOptions)
		}
	})
	t.Run("update naming a create-only key with zero", func(t *testing.T) {
		upd := wire.UpdateTopic{StreamID: sid(st), TopicID: name("upd"), Name: "upd", Options: wire.Options{wire.Uint64Option(wire.TopicOptSegmentSize, 0)}}
		ExpectStatus(t, c.Command(wire.OpUpdateTopic, &upd), wire.ErrUnsupportedOptionKey.Code)
	})
}

// TestParityUnknownPartitionWrites: on the partition-write path every
// failure to resolve stream, topic or partition is ResourceNotFound (20),
// as the reference answers; polls keep PartitionNotFound (3007).
func TestParityUnknownPartitionWrites(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "p")
	mkTopic(t, c, st, "two", 2, nil)
	mkTopic(t, c, st, "none", 0, nil)
	cons := wire.SingleConsumer(sid(1))
	c.MustSend(name("p"), name("two"), wire.PartitioningByID(0), Batch(t, 1, []byte("x")))
	batch := Batch(t, 1, []byte("y"))
	for _, tc := range []struct {
		name   string
		stream wire.Identifier
		topic  wire.Identifier
		part   uint32
	}{
		{"unknown partition", name("p"), name("two"), 9},
		{"topic without partitions", name("p"), name("none"), 0},
		{"unknown topic", name("p"), name("nope"), 0},
		{"unknown stream", name("nope"), name("two"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ExpectStatus(t, c.SendMessages(SendBody(tc.stream, tc.topic, wire.PartitioningByID(tc.part), batch)), wire.ErrResourceNotFound.Code)
			p := wire.SomePartition(tc.part)
			ExpectStatus(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: cons, StreamID: tc.stream, TopicID: tc.topic, Partition: p, Offset: 0, Ack: wire.AckQuorum}), wire.ErrResourceNotFound.Code)
			ExpectStatus(t, c.StoreOffset(wire.StoreConsumerOffset{Consumer: cons, StreamID: tc.stream, TopicID: tc.topic, Partition: p, Offset: 0, Ack: wire.AckNone}), wire.ErrResourceNotFound.Code)
			ExpectStatus(t, c.DeleteOffset(wire.DeleteConsumerOffset{Consumer: cons, StreamID: tc.stream, TopicID: tc.topic, Partition: p, Ack: wire.AckQuorum}), wire.ErrResourceNotFound.Code)
		})
	}
	t.Run("balanced and keyed sends to a topic without partitions", func(t *testing.T) {
		ExpectStatus(t, c.SendMessages(SendBody(name("p"), name("none"), wire.BalancedPartitioning(), batch)), wire.ErrResourceNotFound.Code)
		ExpectStatus(t, c.SendMessages(SendBody(name("p"), name("none"), wire.PartitioningByKey([]byte("k")), batch)), wire.ErrResourceNotFound.Code)
	})
	t.Run("poll keeps 3007", func(t *testing.T) {
		_, f := c.Poll(wire.PollMessages{Consumer: cons, StreamID: name("p"), TopicID: name("two"), Partition: wire.SomePartition(9), Strategy: wire.FirstStrategy(), Count: 1})
		ExpectStatus(t, f, wire.ErrPartitionNotFound.Code)
	})
}

// TestParityConsumerOffsetUnknownNamespace: GET_CONSUMER_OFFSET for an
// unknown stream or topic is status 0 with an empty body (SDKs: no
// offset), whoever asks; a missing partition of an existing topic stays
// 3007; an existing topic still needs poll rights (41).
func TestParityConsumerOffsetUnknownNamespace(t *testing.T) {
	s := Start(t)
	c := s.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "o")
	mkTopic(t, c, st, "t", 1, nil)
	ExpectOK(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "nobody", Password: "nobody-pw", Status: wire.UserActive}))
	nobody := s.Dial(t)
	nobody.Login("nobody", "nobody-pw")
	cons := wire.SingleConsumer(sid(1))
	for _, tc := range []struct {
		name   string
		stream wire.Identifier
		topic  wire.Identifier
	}{
		{"unknown stream by id", sid(99), name("t")},
		{"unknown stream by name", name("nope"), name("t")},
		{"unknown topic by id", name("o"), sid(99)},
		{"unknown topic by name", name("o"), name("nope")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for who, conn := range map[string]*Client{"root": c, "user without permissions": nobody} {
				_, found, f := conn.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: tc.stream, TopicID: tc.topic})
				if found {
					t.Fatalf("%s: found an offset", who)
				}
				ExpectStatus(t, f, 0)
			}
		})
	}
	t.Run("unknown partition of an existing topic", func(t *testing.T) {
		_, _, f := c.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: name("o"), TopicID: name("t"), Partition: wire.SomePartition(5)})
		ExpectStatus(t, f, wire.ErrPartitionNotFound.Code)
	})
	t.Run("existing topic without poll rights", func(t *testing.T) {
		_, _, f := nobody.GetOffset(wire.GetConsumerOffset{Consumer: cons, StreamID: name("o"), TopicID: name("t")})
		ExpectStatus(t, f, wire.ErrUnauthorized.Code)
	})
}
