package metadata

import (
	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// The read side: auth.Store for login and authorization, catalog.Topics
// for the partition plane. Every method takes Store.mu for reading and
// returns copies.

var (
	_ auth.Store     = (*Store)(nil)
	_ catalog.Topics = (*Store)(nil)
)

// UserByName implements auth.Store.
func (s *Store) UserByName(name string) (auth.User, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.st.userByName[name]
	if !ok {
		return auth.User{}, false
	}
	return s.st.users[id].User, true
}

// UserByID implements auth.Store.
func (s *Store) UserByID(id auth.UserID) (auth.User, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.st.users[uint32(id)]
	if !ok {
		return auth.User{}, false
	}
	return u.User, true
}

// PATByHash implements auth.Store.
func (s *Store) PATByHash(hash string) (auth.PAT, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.st.patByHash[hash]
	if !ok {
		return auth.PAT{}, false
	}
	return auth.PAT{UserID: auth.UserID(p.UserID), Name: p.Name, TokenHash: p.Hash, ExpiryAt: p.ExpiryAt}, true
}

// ResolveTopic implements catalog.Topics.
func (s *Store) ResolveTopic(stream, topic wire.Identifier) (catalog.TopicRef, []uint32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, t := s.st.resolveTopic(stream, topic)
	switch {
	case st == nil:
		return catalog.TopicRef{}, nil, wire.ErrStreamIDNotFound
	case t == nil:
		return catalog.TopicRef{}, nil, wire.ErrTopicIDNotFound
	}
	return ref(st, t), t.partitionIDs(), nil
}

// Allowed implements catalog.Topics with the poll_messages,
// send_messages, manage_topic and read_topic (GET_TOPIC's) rules of
// semantics.md §2.4; the root user may do anything.
func (s *Store) Allowed(user uint32, action catalog.Action, stream, topic uint32) bool {
	if user == uint32(auth.RootUserID) {
		s.mu.RLock()
		_, ok := s.st.users[user]
		s.mu.RUnlock()
		return ok
	}
	s.mu.RLock()
	p := s.st.permissions(user)
	s.mu.RUnlock()
	switch action {
	case catalog.ActionSend:
		return canSend(p, stream, topic)
	case catalog.ActionPoll:
		return canPoll(p, stream, topic)
	case catalog.ActionManageTopic:
		return canManageTopic(p, stream, topic)
	case catalog.ActionReadTopic:
		return canGetTopic(p, stream, topic)
	}
	return false
}

// liveTopic returns the topic t refers to, nil when it is gone or was
// re-created since. Caller holds s.mu.
func (s *Store) liveTopic(t catalog.TopicRef) *topic {
	st := s.st.streams[t.StreamID]
	if st == nil {
		return nil
	}
	tp := st.Topics[t.TopicID]
	if tp == nil || tp.Incarnation != t.Incarnation {
		return nil
	}
	return tp
}

// ResolveGroup implements catalog.Topics.
func (s *Store) ResolveGroup(t catalog.TopicRef, id wire.Identifier) (uint32, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tp := s.liveTopic(t)
	if tp == nil {
		return 0, wire.ErrConsumerGroupIDNotFound
	}
	g := tp.group(id)
	if g == nil {
		return 0, wire.ErrConsumerGroupIDNotFound
	}
	return g.ID, nil
}

// GroupDeleted implements catalog.GroupHistory.
func (s *Store) GroupDeleted(t catalog.TopicRef, group uint32) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tp := s.liveTopic(t)
	if tp == nil || group >= tp.NextGroupID {
		return false
	}
	_, ok := tp.Groups[group]
	return !ok
}

// InGroup reports whether client is a member of at least one consumer
// group (the stale-client verifier evicts only those, semantics.md §1.10).
func (s *Store) InGroup(client wire.Uint128) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	found := false
	s.st.eachGroup(func(_ *stream, _ *topic, g *group) {
		if !found {
			_, found = g.G.MemberOf(groups.ClientID(client))
		}
	})
	return found
}

// ClientGroups lists client's memberships for GET_ME and GET_CLIENT(S),
// in (stream, topic, group) order.
func (s *Store) ClientGroups(client wire.Uint128) []wire.ClientConsumerGroup {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []wire.ClientConsumerGroup
	s.st.eachGroup(func(st *stream, t *topic, g *group) {
		if _, ok := g.G.MemberOf(groups.ClientID(client)); ok {
			out = append(out, wire.ClientConsumerGroup{StreamID: st.ID, TopicID: t.ID, GroupID: g.ID})
		}
	})
	return out
}
