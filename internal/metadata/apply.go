package metadata

import (
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// result is what applying one command yields: a committed rejection code
// or a success payload, and the partition-plane effects to run after it.
type result struct {
	// code is 0 on success, else the committed-rejection code.
	code uint32
	// payload is the success payload (after the [count=0] result section).
	payload []byte
	effects []effect
	// secret marks a success whose reply carries a secret the log does
	// not hold (a raw token): the live path builds it, and the client
	// table caches PersonalAccessTokenAlreadyExists (51) instead
	// (semantics.md §1.5).
	secret bool
	// revoking marks a JOIN that may have left pending revocations for
	// the live side to complete at once (groups.go).
	revoking bool
}

func reject(err *wire.Error) result { return result{code: err.Code} }

// effectKind names a catalog.Data call.
type effectKind uint8

const (
	effCreatePartitions effectKind = iota + 1
	effDeletePartitions
	effDeleteTopic
	effPurgeTopic
	effDeleteSegments
	effDeleteGroupOffsets
	effPlace
	effUpdateTopic
)

// effect is one catalog.Data call to make after an entry is applied.
type effect struct {
	kind      effectKind
	ref       catalog.TopicRef
	ids       []uint32
	partition uint32
	count     uint32
	group     uint32
	replicas  []uint8
}

// idempotent reports whether running the effect twice is the same as once.
// A purge or a segment deletion is not: a second run would remove data
// written after the first.
func (f effect) idempotent() bool { return f.kind != effPurgeTopic && f.kind != effDeleteSegments }

// run performs the effect on d.
func (f effect) run(d catalog.Data) error {
	switch f.kind {
	case effCreatePartitions:
		return d.CreatePartitions(f.ref, f.ids)
	case effDeletePartitions:
		return d.DeletePartitions(f.ref, f.ids)
	case effDeleteTopic:
		return d.DeleteTopic(f.ref)
	case effPurgeTopic:
		return d.PurgeTopic(f.ref)
	case effDeleteSegments:
		return d.DeleteSegments(f.ref, f.partition, f.count)
	case effDeleteGroupOffsets:
		return d.DeleteGroupOffsets(f.ref, f.group)
	case effPlace:
		if p, ok := d.(catalog.Placer); ok {
			return p.SetReplicas(f.ref, f.partition, f.replicas)
		}
	case effUpdateTopic:
		if u, ok := d.(catalog.SettingsUpdater); ok {
			return u.UpdateTopic(f.ref)
		}
	}
	return nil
}

// actor is the acting user of an entry: root bypasses every check
// (semantics.md §2.1); a deleted user has no permissions.
type actor struct {
	root  bool
	id    uint32
	perms *auth.Permissions
}

func (s *state) actor(id uint32) actor {
	return actor{root: id == uint32(auth.RootUserID), id: id, perms: s.permissions(id)}
}

// applyCommand applies a KindCommand entry. It must stay deterministic:
// it reads only e and s.
func (s *state) applyCommand(e *Entry) result {
	a := s.actor(e.UserID)
	switch e.Code {
	case wire.CmdCreateStream:
		return s.createStream(e, a)
	case wire.CmdUpdateStream:
		return s.updateStream(e, a)
	case wire.CmdDeleteStream:
		return s.deleteStream(e, a)
	case wire.CmdPurgeStream:
		return s.purgeStream(e, a)
	case wire.CmdCreateTopic:
		return s.createTopic(e, a)
	case wire.CmdUpdateTopic:
		return s.updateTopic(e, a)
	case wire.CmdDeleteTopic:
		return s.deleteTopic(e, a)
	case wire.CmdPurgeTopic:
		return s.purgeTopic(e, a)
	case wire.CmdCreatePartitions:
		return s.createPartitions(e, a)
	case wire.CmdDeletePartitions:
		return s.deletePartitions(e, a)
	case wire.CmdDeleteSegments:
		return s.deleteSegments(e, a)
	case wire.CmdCreateConsumerGroup:
		return s.createGroup(e, a)
	case wire.CmdDeleteConsumerGroup:
		return s.deleteGroup(e, a)
	case wire.CmdJoinConsumerGroup:
		return s.joinGroup(e, a)
	case wire.CmdLeaveConsumerGroup:
		return s.leaveGroup(e, a)
	case wire.CmdCreateUser:
		return s.createUser(e, a)
	case wire.CmdUpdateUser:
		return s.updateUser(e, a)
	case wire.CmdDeleteUser:
		return s.deleteUser(e, a)
	case wire.CmdUpdatePermissions:
		return s.updatePermissions(e, a)
	case wire.CmdChangePassword:
		return s.changePassword(e, a)
	case wire.CmdCreatePersonalAccessToken:
		return s.createPAT(e, a)
	case wire.CmdDeletePersonalAccessToken:
		return s.deletePAT(e, a)
	}
	return reject(wire.ErrFeatureUnavailable)
}

// decodeErr is the committed rejection for a body that no longer decodes
// (only a body the handler did not check can get here).
func decodeErr(err error) result {
	if c := wire.CodeOf(err); c != 0 {
		return result{code: c}
	}
	return reject(wire.ErrInvalidCommand)
}

func (s *state) createStream(e *Entry, a actor) result {
	var req wire.CreateStream
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	if !a.root && !canCreateStream(a.perms) {
		return reject(wire.ErrUnauthorized)
	}
	if err := wire.ValidateOptionKeys(wire.OptionScopeStream, req.Options); err != nil {
		return decodeErr(err)
	}
	if _, dup := s.streamByName[req.Name]; dup {
		return reject(wire.ErrStreamNameAlreadyExists)
	}
	id, ok := lowestFree(s.streams, MaxStreams)
	if !ok {
		return reject(wire.ErrTooManyStreams)
	}
	st := &stream{ID: id, CreatedAt: e.Timestamp, Name: req.Name, Topics: map[uint32]*topic{}, TopicByName: map[string]uint32{}}
	s.streams[id] = st
	s.streamByName[st.Name] = id
	d := wire.StreamDetails{Stream: wire.Stream{ID: id, CreatedAt: st.CreatedAt, Name: st.Name}}
	return result{payload: d.AppendTo(nil)}
}

func (s *state) updateStream(e *Entry, a actor) result {
	var req wire.UpdateStream
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st := s.stream(req.StreamID)
	if st == nil {
		return reject(wire.ErrStreamIDNotFound)
	}
	if !a.root && !canManageStream(a.perms, st.ID) {
		return reject(wire.ErrUnauthorized)
	}
	if err := wire.ValidateOptionKeys(wire.OptionScopeStream, req.Options); err != nil {
		return decodeErr(err)
	}
	if other, dup := s.streamByName[req.Name]; dup && other != st.ID {
		return reject(wire.ErrStreamNameAlreadyExists)
	}
	delete(s.streamByName, st.Name)
	st.Name = req.Name
	s.streamByName[st.Name] = st.ID
	return result{}
}

// streamRef decodes a body that is only a stream identifier and resolves
// it with the manage_stream check.
func (s *state) managedStream(body []byte, a actor) (*stream, result) {
	var req wire.DeleteStream
	if err := req.Decode(body); err != nil {
		return nil, decodeErr(err)
	}
	st := s.stream(req.StreamID)
	if st == nil {
		return nil, reject(wire.ErrStreamIDNotFound)
	}
	if !a.root && !canManageStream(a.perms, st.ID) {
		return nil, reject(wire.ErrUnauthorized)
	}
	return st, result{}
}

func (s *state) deleteStream(e *Entry, a actor) result {
	st, res := s.managedStream(e.Body, a)
	if st == nil {
		return res
	}
	for _, tid := range sortedKeys(st.Topics) {
		res.effects = append(res.effects, effect{kind: effDeleteTopic, ref: ref(st, st.Topics[tid])})
	}
	delete(s.streams, st.ID)
	delete(s.streamByName, st.Name)
	return res
}

func (s *state) purgeStream(e *Entry, a actor) result {
	st, res := s.managedStream(e.Body, a)
	if st == nil {
		return res
	}
	for _, tid := range sortedKeys(st.Topics) {
		t := st.Topics[tid]
		t.purge(e.Op)
		res.effects = append(res.effects, effect{kind: effPurgeTopic, ref: purgeRef(st, t, e.Op)})
	}
	return res
}

func (s *state) createTopic(e *Entry, a actor) result {
	var req wire.CreateTopic
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st := s.stream(req.StreamID)
	if st == nil {
		return reject(wire.ErrStreamIDNotFound)
	}
	if !a.root && !canCreateTopic(a.perms, st.ID) {
		return reject(wire.ErrUnauthorized)
	}
	if req.PartitionsCount > wire.MaxPartitionsPerRequest {
		return reject(wire.ErrTooManyPartitions)
	}
	opts, err := wire.NewTopicOptions(req.Options, req.PartitionsCount)
	if err != nil {
		return decodeErr(err)
	}
	if _, dup := st.TopicByName[req.Name]; dup {
		return reject(wire.ErrTopicNameAlreadyExists)
	}
	id, ok := lowestFree(st.Topics, MaxTopicsPerStream)
	if !ok {
		return reject(wire.ErrTooManyTopics)
	}
	t := &topic{
		ID: id, CreatedAt: e.Timestamp, Name: req.Name, Incarnation: e.Op, Opts: opts,
		Groups: map[uint32]*group{}, GroupByName: map[string]uint32{},
	}
	t.Partitions = make([]partition, req.PartitionsCount)
	lists := decodePlacement(e.Secret, len(t.Partitions))
	for i := range t.Partitions {
		t.Partitions[i] = partition{ID: uint32(i), CreatedAt: e.Timestamp}
		if lists != nil {
			t.Partitions[i].Replicas = lists[i]
		}
	}
	st.Topics[id] = t
	st.TopicByName[t.Name] = id
	res := result{payload: topicDetails(t, nil).appendTo(nil)}
	if len(t.Partitions) > 0 {
		ids := t.partitionIDs()
		res.effects = []effect{{kind: effCreatePartitions, ref: placedRef(ref(st, t), t, ids), ids: ids}}
	}
	return res
}

// topicRule is a per-topic permission rule of semantics.md §2.4.
type topicRule func(p *auth.Permissions, stream, topic uint32) bool

// permittedTopic resolves stream and topic (1009/2010 first: an
// unresolvable target skips authorization) and then checks rule for a
// non-root actor (41).
func (s *state) permittedTopic(sid, tid wire.Identifier, a actor, rule topicRule) (*stream, *topic, result) {
	st, t := s.resolveTopic(sid, tid)
	switch {
	case st == nil:
		return nil, nil, reject(wire.ErrStreamIDNotFound)
	case t == nil:
		return nil, nil, reject(wire.ErrTopicIDNotFound)
	case !a.root && !rule(a.perms, st.ID, t.ID):
		return nil, nil, reject(wire.ErrUnauthorized)
	}
	return st, t, result{}
}

// managedTopic resolves a topic under the manage_topic rule.
func (s *state) managedTopic(sid, tid wire.Identifier, a actor) (*stream, *topic, result) {
	return s.permittedTopic(sid, tid, a, canManageTopic)
}

func (s *state) updateTopic(e *Entry, a actor) result {
	var req wire.UpdateTopic
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	if other, dup := st.TopicByName[req.Name]; dup && other != t.ID {
		return reject(wire.ErrTopicNameAlreadyExists)
	}
	opts := t.Opts
	if err := opts.Update(req.Options); err != nil {
		return decodeErr(err)
	}
	t.Opts = opts
	delete(st.TopicByName, t.Name)
	t.Name = req.Name
	st.TopicByName[t.Name] = t.ID
	return result{effects: []effect{{kind: effUpdateTopic, ref: ref(st, t)}}}
}

func (s *state) deleteTopic(e *Entry, a actor) result {
	var req wire.DeleteTopic
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	delete(st.Topics, t.ID)
	delete(st.TopicByName, t.Name)
	return result{effects: []effect{{kind: effDeleteTopic, ref: ref(st, t)}}}
}

func (s *state) purgeTopic(e *Entry, a actor) result {
	var req wire.PurgeTopic
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	t.purge(e.Op)
	return result{effects: []effect{{kind: effPurgeTopic, ref: purgeRef(st, t, e.Op)}}}
}

func (s *state) createPartitions(e *Entry, a actor) result {
	var req wire.CreatePartitions
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	if req.PartitionsCount == 0 || req.PartitionsCount > wire.MaxPartitionsPerRequest {
		return reject(wire.ErrTooManyPartitions)
	}
	first := uint32(len(t.Partitions))
	if uint64(first)+uint64(req.PartitionsCount) > MaxPartitionID {
		return reject(wire.ErrPartitionIDSpaceExhausted)
	}
	ids := make([]uint32, req.PartitionsCount)
	lists := decodePlacement(e.Secret, len(ids))
	for i := range ids {
		ids[i] = first + uint32(i)
		p := partition{ID: ids[i], CreatedAt: e.Timestamp}
		if lists != nil {
			p.Replicas = lists[i]
		}
		t.Partitions = append(t.Partitions, p)
	}
	t.setPartitions()
	return result{effects: []effect{{kind: effCreatePartitions, ref: placedRef(ref(st, t), t, ids), ids: ids}}}
}

func (s *state) deletePartitions(e *Entry, a actor) result {
	var req wire.DeletePartitions
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	n := req.PartitionsCount
	if n == 0 || n > wire.MaxPartitionsPerRequest {
		return reject(wire.ErrTooManyPartitions)
	}
	if int(n) > len(t.Partitions) {
		return reject(wire.ErrInvalidPartitionsCount)
	}
	keep := len(t.Partitions) - int(n)
	ids := make([]uint32, 0, n)
	for _, p := range t.Partitions[keep:] {
		ids = append(ids, p.ID)
	}
	t.Partitions = append([]partition(nil), t.Partitions[:keep]...)
	t.setPartitions()
	return result{effects: []effect{{kind: effDeletePartitions, ref: ref(st, t), ids: ids}}}
}

func (s *state) deleteSegments(e *Entry, a actor) result {
	var req wire.DeleteSegments
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.managedTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	if req.PartitionID >= uint32(len(t.Partitions)) {
		return reject(wire.ErrPartitionNotFound)
	}
	return result{effects: []effect{{kind: effDeleteSegments, ref: ref(st, t), partition: req.PartitionID, count: req.SegmentsCount}}}
}

// groupTopic resolves the topic of a consumer-group command under the
// get_topic rule (semantics.md §2.4, consumer groups).
func (s *state) groupTopic(sid, tid wire.Identifier, a actor) (*stream, *topic, result) {
	return s.permittedTopic(sid, tid, a, canGetTopic)
}

func (s *state) createGroup(e *Entry, a actor) result {
	var req wire.CreateConsumerGroup
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	_, t, res := s.groupTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	if _, dup := t.GroupByName[req.Name]; dup {
		return reject(wire.ErrConsumerGroupNameAlreadyExists)
	}
	g := newGroup(t.NextGroupID, req.Name, t)
	t.NextGroupID++
	t.Groups[g.ID] = g
	t.GroupByName[g.Name] = g.ID
	d := groupDetails(t, g)
	return result{payload: d.AppendTo(nil)}
}

func (s *state) deleteGroup(e *Entry, a actor) result {
	var req wire.DeleteConsumerGroup
	if err := req.Decode(e.Body); err != nil {
		return decodeErr(err)
	}
	st, t, res := s.groupTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return res
	}
	g := t.group(req.GroupID)
	if g == nil {
		return reject(wire.ErrConsumerGroupIDNotFound)
	}
	delete(t.Groups, g.ID)
	delete(t.GroupByName, g.Name)
	return result{effects: []effect{{kind: effDeleteGroupOffsets, ref: ref(st, t), group: g.ID}}}
}

// memberGroup resolves the group of a JOIN or LEAVE: 1009/2010, the
// get_topic rule, then 5000.
func (s *state) memberGroup(body []byte, a actor) (*group, result) {
	var req wire.JoinConsumerGroup
	if err := req.Decode(body); err != nil {
		return nil, decodeErr(err)
	}
	_, t, res := s.groupTopic(req.StreamID, req.TopicID, a)
	if t == nil {
		return nil, res
	}
	g := t.group(req.GroupID)
	if g == nil {
		return nil, reject(wire.ErrConsumerGroupIDNotFound)
	}
	return g, result{}
}

// joinGroup applies JOIN_CONSUMER_GROUP: membership keyed by the caller's
// client id, cooperative rebalance at the entry's time; a re-join is a
// no-op success (semantics.md §6.1).
func (s *state) joinGroup(e *Entry, a actor) result {
	g, res := s.memberGroup(e.Body, a)
	if g == nil {
		return res
	}
	gen := g.G.Generation()
	if _, err := g.G.JoinPending(groups.ClientID(e.Client), time.UnixMicro(int64(e.Timestamp))); err != nil {
		return reject(wire.ErrError)
	}
	// Every move is deferred: which partitions have in-flight data is
	// known only to the live side (groups.go), which completes the rest.
	return result{revoking: g.G.Generation() != gen}
}

// leaveGroup applies LEAVE_CONSUMER_GROUP: not a member is 5006.
func (s *state) leaveGroup(e *Entry, a actor) result {
	g, res := s.memberGroup(e.Body, a)
	if g == nil {
		return res
	}
	if g.G.Leave(groups.ClientID(e.Client)) != nil {
		return reject(wire.ErrConsumerGroupMemberNotFound)
	}
	return result{}
}

// groupDetails is the GET_CONSUMER_GROUP / CREATE payload of g.
func groupDetails(t *topic, g *group) wire.GroupDetails {
	d := wire.GroupDetails{ConsumerGroup: wire.ConsumerGroup{ID: g.ID, PartitionsCount: uint32(len(t.Partitions)), Name: g.Name}}
	for _, m := range g.G.Members() {
		ids := make([]uint32, len(m.Partitions))
		for i, p := range m.Partitions {
			ids[i] = uint32(p)
		}
		d.Members = append(d.Members, wire.ConsumerGroupMember{ID: uint32(m.ID), Partitions: ids})
	}
	d.MembersCount = uint32(len(d.Members))
	return d
}

// topicView is a topic's reply data with the counters filled later,
// outside the state lock.
type topicView struct {
	header     wire.Topic
	ref        catalog.TopicRef
	partitions []wire.PartitionInfo
}

// topicDetails builds the view of t before fill adds live counters. A
// partition always holds one (empty) active segment from its creation on,
// so the view starts at one segment and zero messages: the CREATE_TOPIC
// reply, which is built here without live counters, then agrees with a
// GET_TOPIC of the same new topic.
func topicDetails(t *topic, st *stream) *topicView {
	v := &topicView{header: wire.Topic{ID: t.ID, CreatedAt: t.CreatedAt, Name: t.Name}}
	t.Opts.FillTopic(&v.header)
	v.header.PartitionsCount = uint32(len(t.Partitions))
	if st != nil {
		v.ref = ref(st, t)
	}
	v.partitions = make([]wire.PartitionInfo, len(t.Partitions))
	for i, p := range t.Partitions {
		v.partitions[i] = wire.PartitionInfo{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: 1}
	}
	return v
}

// fillTopics adds the partition counters from d to every view and rolls
// them up: in one batch when d is a catalog.StatsSource (a cluster node
// asks the nodes that hold the partitions), else partition by partition.
func fillTopics(d catalog.Data, views []*topicView) {
	if d == nil {
		return
	}
	src, batched := d.(catalog.StatsSource)
	var stats []catalog.PartitionStats
	if batched {
		var keys []catalog.PartitionKey
		for _, v := range views {
			for i := range v.partitions {
				keys = append(keys, catalog.PartitionKey{Topic: v.ref, Partition: v.partitions[i].ID})
			}
		}
		stats = src.PartitionStatsOf(keys)
	}
	k := 0
	for _, v := range views {
		v.header.SizeBytes, v.header.MessagesCount = 0, 0
		for i := range v.partitions {
			p := &v.partitions[i]
			var ps catalog.PartitionStats
			if batched {
				if k < len(stats) {
					ps = stats[k]
				}
				k++
			} else {
				ps = d.PartitionStats(v.ref, p.ID)
			}
			p.SegmentsCount, p.CurrentOffset, p.SizeBytes, p.MessagesCount = ps.Segments, ps.CurrentOffset, ps.SizeBytes, ps.Messages
			v.header.SizeBytes += ps.SizeBytes
			v.header.MessagesCount += ps.Messages
		}
	}
}

func (v *topicView) appendTo(dst []byte) []byte {
	d := wire.TopicDetails{Topic: v.header, Partitions: v.partitions}
	return d.AppendTo(dst)
}
