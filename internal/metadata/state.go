package metadata

import (
	"slices"
	"sort"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// Limits of the metadata state (semantics.md §3.1, §8).
const (
	// MaxStreams bounds stream ids: a new id must be below 2^20
	// (TooManyStreams 1020).
	MaxStreams = 1 << 20
	// MaxTopicsPerStream bounds topic ids within a stream (TooManyTopics 2021).
	MaxTopicsPerStream = 4096
	// MaxPartitionID bounds partition ids (PartitionIdSpaceExhausted 3013).
	MaxPartitionID = 1_000_000
	// MinUsernameLen and MaxUsernameLen bound usernames on create and
	// update (InvalidUsername 43), checked at apply.
	MinUsernameLen = 3
	MaxUsernameLen = 50
)

// partition is one partition of a topic; ids are dense 0..n-1.
type partition struct {
	ID        uint32
	CreatedAt uint64
	// PurgedAt is the op of the last PURGE_TOPIC or PURGE_STREAM that
	// covered the partition (0: none since it was created): the purge's
	// identity for the partition plane (catalog.TopicRef.PurgedAt).
	PurgedAt uint64
	// Replicas is the ordered replica list in cluster mode (placement.go);
	// nil: every voter holds the partition.
	Replicas []uint8
	// Target is the replica list a move in progress leads to (nil: no
	// move). While it is set, the nodes of both lists hold the partition.
	Target []uint8
}

// holders are the nodes that hold p's data: Replicas and, during a move,
// Target (nil: every voter). During a move the Target comes first, in its
// order, then the members leaving: the list is also the partition's
// leader preference, so leadership goes to the Target's preferred member
// once it votes, and never back to a member that is leaving.
func (p *partition) holders() []uint8 {
	if len(p.Target) == 0 {
		return p.Replicas
	}
	out := slices.Clone(p.Target)
	for _, r := range p.Replicas {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// group is a consumer group of a topic; G is its membership and
// assignment state machine.
type group struct {
	ID   uint32
	Name string
	G    *groups.Group
}

// groupPartitions converts partition ids for the groups package.
func groupPartitions(ids []uint32) []groups.PartitionID {
	out := make([]groups.PartitionID, len(ids))
	for i, id := range ids {
		out[i] = groups.PartitionID(id)
	}
	return out
}

// newGroup returns a consumer group over t's partitions.
func newGroup(id uint32, name string, t *topic) *group {
	g, err := groups.New(groups.Config{}, groupPartitions(t.partitionIDs()))
	if err != nil {
		// Partition ids are dense and below MaxPartitionID: unreachable.
		panic("metadata: consumer group over invalid partitions: " + err.Error())
	}
	return &group{ID: id, Name: name, G: g}
}

// setPartitions rebalances every group of t after its partitions changed
// (semantics.md §3.5: full rebalance).
func (t *topic) setPartitions() {
	ids := groupPartitions(t.partitionIDs())
	for _, gid := range sortedKeys(t.Groups) {
		_ = t.Groups[gid].G.SetPartitions(ids)
	}
}

// eachGroup calls f for every consumer group in ascending (stream, topic,
// group) order.
func (s *state) eachGroup(f func(st *stream, t *topic, g *group)) {
	for _, sid := range sortedKeys(s.streams) {
		st := s.streams[sid]
		for _, tid := range sortedKeys(st.Topics) {
			t := st.Topics[tid]
			for _, gid := range sortedKeys(t.Groups) {
				f(st, t, t.Groups[gid])
			}
		}
	}
}

// removeClient ends client's memberships in every group (Logout,
// semantics.md §1.8), each with a full rebalance.
func (s *state) removeClient(client wire.Uint128) {
	s.eachGroup(func(_ *stream, _ *topic, g *group) { g.G.RemoveClient(groups.ClientID(client)) })
}

// hasMembers reports whether any group has a member.
func (s *state) hasMembers() bool {
	found := false
	s.eachGroup(func(_ *stream, _ *topic, g *group) { found = found || g.G.Len() > 0 })
	return found
}

// topic is one topic of a stream.
type topic struct {
	ID        uint32
	CreatedAt uint64
	Name      string
	// Incarnation is the op that created the topic (catalog.TopicRef).
	Incarnation uint64
	Opts        wire.TopicOptions
	Partitions  []partition
	Groups      map[uint32]*group
	GroupByName map[string]uint32
	// NextGroupID is the id of the next group: group ids are never reused
	// (semantics.md §3.1).
	NextGroupID uint32
}

// stream is one stream.
type stream struct {
	ID          uint32
	CreatedAt   uint64
	Name        string
	Topics      map[uint32]*topic
	TopicByName map[string]uint32
}

// user is one user with its tokens. Perms is the permission set as the
// client sent it (echoed by GET_USER); User.Permissions is its map form
// for the checks.
type user struct {
	auth.User
	Perms *wire.Permissions
	PATs  map[string]*pat
}

// pat is one stored personal access token (only its hash).
type pat struct {
	UserID   uint32
	Name     string
	Hash     string
	ExpiryAt uint64
}

// state is the metadata state machine's data. It is changed only by
// apply and read under Store.mu.
type state struct {
	streams      map[uint32]*stream
	streamByName map[string]uint32
	users        map[uint32]*user
	userByName   map[string]uint32
	patByHash    map[string]*pat
	// roster is the cluster roster committed by the last KindRoster
	// entry (JSON as the broker encodes it), nil until one commits.
	roster []byte
	// revoked are the HTTP tokens revoked by a logout (revoked.go).
	revoked revokedTokens
}

func newState() *state {
	return &state{
		streams: map[uint32]*stream{}, streamByName: map[string]uint32{},
		users: map[uint32]*user{}, userByName: map[string]uint32{}, patByHash: map[string]*pat{},
		revoked: newRevokedTokens(),
	}
}

// lowestFree returns the lowest id not in used, or false when it would be
// limit or more.
func lowestFree[V any](used map[uint32]V, limit uint32) (uint32, bool) {
	for id := uint32(0); id < limit; id++ {
		if _, ok := used[id]; !ok {
			return id, true
		}
	}
	return 0, false
}

// sortedKeys returns the map's keys in ascending order.
func sortedKeys[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// lookup resolves an identifier against an id-keyed map and its name
// index: an exact (case-sensitive) name match or a numeric id; nil when
// missing.
func lookup[T any](id wire.Identifier, byID map[uint32]*T, byName map[string]uint32) *T {
	if id.Kind == wire.IDString {
		n, ok := byName[id.Str]
		if !ok {
			return nil
		}
		return byID[n]
	}
	return byID[id.Num]
}

// stream resolves a stream identifier.
func (s *state) stream(id wire.Identifier) *stream { return lookup(id, s.streams, s.streamByName) }

// topic resolves a topic identifier within st.
func (st *stream) topic(id wire.Identifier) *topic { return lookup(id, st.Topics, st.TopicByName) }

// group resolves a group identifier within t.
func (t *topic) group(id wire.Identifier) *group { return lookup(id, t.Groups, t.GroupByName) }

// user resolves a user identifier.
func (s *state) user(id wire.Identifier) *user { return lookup(id, s.users, s.userByName) }

// resolveTopic resolves both identifiers: the stream (nil when missing)
// and the topic (nil when missing).
func (s *state) resolveTopic(sid, tid wire.Identifier) (*stream, *topic) {
	st := s.stream(sid)
	if st == nil {
		return nil, nil
	}
	return st, st.topic(tid)
}

// ref is the catalog reference of t in st.
func ref(st *stream, t *topic) catalog.TopicRef {
	return catalog.TopicRef{StreamID: st.ID, TopicID: t.ID, Incarnation: t.Incarnation, Settings: t.Opts.Settings}
}

// purge marks every partition of t purged at op.
func (t *topic) purge(op uint64) {
	for i := range t.Partitions {
		t.Partitions[i].PurgedAt = op
	}
}

// purgeRef is the catalog reference of t for a PurgeTopic at op.
func purgeRef(st *stream, t *topic, op uint64) catalog.TopicRef {
	r := ref(st, t)
	r.PurgedAt = op
	return r
}

// partitionIDs returns t's partition ids in ascending order.
func (t *topic) partitionIDs() []uint32 {
	out := make([]uint32, len(t.Partitions))
	for i, p := range t.Partitions {
		out[i] = p.ID
	}
	return out
}

// permissions returns the checked form of user id's permissions: nil when
// the user does not exist or has none.
func (s *state) permissions(id uint32) *auth.Permissions {
	if u := s.users[id]; u != nil {
		return u.Permissions
	}
	return nil
}

// authPermissions converts the wire permission set to the map form the
// rules use. A repeated id keeps the last entry, as the reference does.
func authPermissions(p *wire.Permissions) *auth.Permissions {
	if p == nil {
		return nil
	}
	out := &auth.Permissions{Global: p.Global}
	if len(p.Streams) > 0 {
		out.Streams = make(map[uint32]auth.StreamPermissions, len(p.Streams))
	}
	for _, sp := range p.Streams {
		e := auth.StreamPermissions{
			ManageStream: sp.ManageStream, ReadStream: sp.ReadStream, ManageTopics: sp.ManageTopics,
			ReadTopics: sp.ReadTopics, PollMessages: sp.PollMessages, SendMessages: sp.SendMessages,
		}
		if len(sp.Topics) > 0 {
			e.Topics = make(map[uint32]auth.TopicPermissions, len(sp.Topics))
		}
		for _, tp := range sp.Topics {
			e.Topics[tp.TopicID] = auth.TopicPermissions{
				ManageTopic: tp.ManageTopic, ReadTopic: tp.ReadTopic, PollMessages: tp.PollMessages, SendMessages: tp.SendMessages,
			}
		}
		out.Streams[sp.StreamID] = e
	}
	return out
}

// rootPermissions is the root user's permission set: every global flag.
func rootPermissions() *wire.Permissions {
	return &wire.Permissions{Global: auth.AllGlobal}
}

// counts are the entity totals GET_STATS reports.
type counts struct {
	streams, topics, partitions, groups uint32
}

func (s *state) counts() counts {
	var c counts
	c.streams = uint32(len(s.streams))
	for _, st := range s.streams {
		c.topics += uint32(len(st.Topics))
		for _, t := range st.Topics {
			c.partitions += uint32(len(t.Partitions))
			c.groups += uint32(len(t.Groups))
		}
	}
	return c
}
