package metadata

import (
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// The read handlers (operation 2). Each checks its rule of semantics.md
// §2.4 before answering (status-deny 41), builds the reply from the state
// under the read lock and asks the partition plane for counters after
// releasing it.

// reader is the acting user of a read. Caller holds s.mu for reading.
func (s *Store) reader(x *dispatch.Exchange) actor {
	b, _ := x.Conn.Binding()
	return s.st.actor(uint32(b.UserID))
}

// decodeRead decodes a read body or denies it with its code. Request
// decoders read a prefix: bytes after the fields are ignored
// (docs/DESIGN.md, "Reference parity").
func decodeRead(x *dispatch.Exchange, b wire.Body) bool {
	if err := b.Decode(x.Body); err != nil {
		x.Deny(denyCode(err))
		return false
	}
	return true
}

func (s *Store) registerReads(d *dispatch.Dispatcher) {
	d.Handle(wire.CmdGetStream, s.getStream)
	d.Handle(wire.CmdGetStreams, s.getStreams)
	d.Handle(wire.CmdGetTopic, s.getTopic)
	d.Handle(wire.CmdGetTopics, s.getTopics)
	d.Handle(wire.CmdGetConsumerGroup, s.getGroup)
	d.Handle(wire.CmdGetConsumerGroups, s.getGroups)
	d.Handle(wire.CmdGetUser, s.getUser)
	d.Handle(wire.CmdGetUsers, s.getUsers)
	d.Handle(wire.CmdGetPersonalAccessTokens, s.getPATs)
	d.Handle(wire.CmdSyncConsumerGroup, s.syncGroup)
}

// streamView is a stream's reply data; topic counters are filled outside
// the lock.
type streamView struct {
	header wire.Stream
	topics []*topicView
}

func newStreamView(st *stream) *streamView {
	v := &streamView{header: wire.Stream{ID: st.ID, CreatedAt: st.CreatedAt, Name: st.Name, TopicsCount: uint32(len(st.Topics))}}
	for _, id := range sortedKeys(st.Topics) {
		v.topics = append(v.topics, topicDetails(st.Topics[id], st))
	}
	return v
}

// fillStreams adds the counters of every topic of views (one batch, see
// fillTopics) and rolls them up into each stream.
func fillStreams(s *Store, views ...*streamView) {
	var topics []*topicView
	for _, v := range views {
		topics = append(topics, v.topics...)
	}
	fillTopics(s.data, topics)
	for _, v := range views {
		for _, t := range v.topics {
			v.header.SizeBytes += t.header.SizeBytes
			v.header.MessagesCount += t.header.MessagesCount
		}
	}
}

// getStream answers GET_STREAM (200): StreamDetails, or an empty body when
// the stream does not exist (semantics.md §3.3).
func (s *Store) getStream(x *dispatch.Exchange) {
	var req wire.GetStream
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	a := s.reader(x)
	st := s.st.stream(req.StreamID)
	if st == nil {
		s.mu.RUnlock()
		x.Reply(nil)
		return
	}
	if !a.root && !canGetStream(a.perms, st.ID) {
		s.mu.RUnlock()
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	v := newStreamView(st)
	s.mu.RUnlock()
	fillStreams(s, v)
	d := wire.StreamDetails{Stream: v.header}
	for _, t := range v.topics {
		d.Topics = append(d.Topics, t.header)
	}
	x.Reply(d.AppendTo(x.Scratch()))
}

// getStreams answers GET_STREAMS (201): every stream by ascending id.
// The request has no fields: body bytes are ignored, as the reference
// decodes a prefix of no fields.
func (s *Store) getStreams(x *dispatch.Exchange) {
	s.mu.RLock()
	a := s.reader(x)
	if !a.root && !canGetStreams(a.perms) {
		s.mu.RUnlock()
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	var views []*streamView
	for _, id := range sortedKeys(s.st.streams) {
		views = append(views, newStreamView(s.st.streams[id]))
	}
	s.mu.RUnlock()
	fillStreams(s, views...)
	out := x.Scratch()
	for _, v := range views {
		out = v.header.AppendTo(out)
	}
	x.Reply(out)
}

// getTopic answers GET_TOPIC (300): TopicDetails, or an empty body when
// the stream or topic does not exist.
func (s *Store) getTopic(x *dispatch.Exchange) {
	var req wire.GetTopic
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	a := s.reader(x)
	st, t := s.st.resolveTopic(req.StreamID, req.TopicID)
	if t == nil {
		s.mu.RUnlock()
		x.Reply(nil)
		return
	}
	if !a.root && !canGetTopic(a.perms, st.ID, t.ID) {
		s.mu.RUnlock()
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	v := topicDetails(t, st)
	s.mu.RUnlock()
	fillTopics(s.data, []*topicView{v})
	x.Reply(v.appendTo(x.Scratch()))
}

// getTopics answers GET_TOPICS (301): [count][Topic × count]; a missing
// stream is count 0 (semantics.md §3.4).
func (s *Store) getTopics(x *dispatch.Exchange) {
	var req wire.GetTopics
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	a := s.reader(x)
	st := s.st.stream(req.StreamID)
	if st == nil {
		s.mu.RUnlock()
		empty := wire.Topics{}
		x.Reply(empty.AppendTo(x.Scratch()))
		return
	}
	if !a.root && !canGetTopics(a.perms, st.ID) {
		s.mu.RUnlock()
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	v := newStreamView(st)
	s.mu.RUnlock()
	fillStreams(s, v)
	list := make(wire.Topics, 0, len(v.topics))
	for _, t := range v.topics {
		list = append(list, t.header)
	}
	x.Reply(list.AppendTo(x.Scratch()))
}

// groupTopicRead resolves the topic of a group read: 1009/2010 and 41 are
// status-deny. Caller holds s.mu for reading; on false x is answered.
func (s *Store) groupTopicRead(x *dispatch.Exchange, sid, tid wire.Identifier) (*topic, bool) {
	a := s.reader(x)
	st, t := s.st.resolveTopic(sid, tid)
	switch {
	case st == nil:
		x.Deny(wire.ErrStreamIDNotFound.Code)
		return nil, false
	case t == nil:
		x.Deny(wire.ErrTopicIDNotFound.Code)
		return nil, false
	case !a.root && !canGetTopic(a.perms, st.ID, t.ID):
		x.Deny(wire.ErrUnauthorized.Code)
		return nil, false
	}
	return t, true
}

// getGroup answers GET_CONSUMER_GROUP (600): GroupDetails, or an empty
// body when the group does not exist.
func (s *Store) getGroup(x *dispatch.Exchange) {
	var req wire.GetConsumerGroup
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.groupTopicRead(x, req.StreamID, req.TopicID)
	if !ok {
		return
	}
	g := t.group(req.GroupID)
	if g == nil {
		x.Reply(nil)
		return
	}
	d := groupDetails(t, g)
	x.Reply(d.AppendTo(x.Scratch()))
}

// getGroups answers GET_CONSUMER_GROUPS (601): the group headers by id.
func (s *Store) getGroups(x *dispatch.Exchange) {
	var req wire.GetConsumerGroups
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.groupTopicRead(x, req.StreamID, req.TopicID)
	if !ok {
		return
	}
	out := x.Scratch()
	for _, id := range sortedKeys(t.Groups) {
		g := t.Groups[id]
		h := wire.ConsumerGroup{ID: g.ID, PartitionsCount: uint32(len(t.Partitions)), MembersCount: uint32(g.G.Len()), Name: g.Name}
		out = h.AppendTo(out)
	}
	x.Reply(out)
}

// isSelf reports whether id names the user a.
func (s *Store) isSelf(a actor, id wire.Identifier) bool {
	u := s.st.users[a.id]
	if u == nil {
		return false
	}
	if id.Kind == wire.IDString {
		return id.Str == u.Username
	}
	return id.Num == a.id
}

// getUser answers GET_USER (31): UserDetails or an empty body. One's own
// user is always readable; others need read_users.
func (s *Store) getUser(x *dispatch.Exchange) {
	var req wire.GetUser
	if !decodeRead(x, &req) {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.reader(x)
	if !a.root && !s.isSelf(a, req.UserID) && !canReadUsers(a.perms) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	u := s.st.user(req.UserID)
	if u == nil {
		x.Reply(nil)
		return
	}
	x.Reply(append(x.Scratch(), userDetails(u, wire.UserStatus(u.Status))...))
}

// getUsers answers GET_USERS (32): every user header by id. Body bytes
// are ignored (no request fields).
func (s *Store) getUsers(x *dispatch.Exchange) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.reader(x)
	if !a.root && !canReadUsers(a.perms) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	list := make(wire.Users, 0, len(s.st.users))
	for _, id := range sortedKeys(s.st.users) {
		u := s.st.users[id]
		list = append(list, wire.User{ID: id, CreatedAt: u.CreatedAt, Status: wire.UserStatus(u.Status), Username: u.Username})
	}
	x.Reply(list.AppendTo(x.Scratch()))
}

// getPATs answers GET_PERSONAL_ACCESS_TOKENS (41): the caller's tokens
// sorted by name (empty body when none). Body bytes are ignored (no
// request fields).
func (s *Store) getPATs(x *dispatch.Exchange) {
	b, _ := x.Conn.Binding()
	s.mu.RLock()
	var list wire.PersonalAccessTokens
	if u := s.st.users[uint32(b.UserID)]; u != nil {
		list = userPATs(u)
	}
	s.mu.RUnlock()
	x.Reply(list.AppendTo(x.Scratch()))
}

// UserCount returns the number of users.
func (s *Store) UserCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.st.users)
}

// syncGroup answers SYNC_CONSUMER_GROUP (606): the caller's generation and
// pollable partitions; an empty body when it is not a member or the
// stream, topic or group is gone (semantics.md §6.1). No permission rule
// applies: the answer is only the caller's own assignment.
func (s *Store) syncGroup(x *dispatch.Exchange) {
	var req wire.SyncConsumerGroup
	if !decodeRead(x, &req) {
		return
	}
	b, _ := x.Conn.Binding()
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t := s.st.resolveTopic(req.StreamID, req.TopicID)
	if t == nil {
		x.Reply(nil)
		return
	}
	g := t.group(req.GroupID)
	if g == nil {
		x.Reply(nil)
		return
	}
	gen, parts, err := g.G.Assignment(groups.ClientID(b.Client))
	if err != nil {
		x.Reply(nil)
		return
	}
	a := wire.ConsumerGroupAssignment{Generation: uint64(gen), Partitions: make([]uint32, len(parts))}
	for i, p := range parts {
		a.Partitions[i] = uint32(p)
	}
	x.Reply(a.AppendTo(x.Scratch()))
}
