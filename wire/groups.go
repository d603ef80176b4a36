package wire

// Consumer-group request bodies (commands.md, "Consumer groups") and the
// ConsumerGroup / ConsumerGroupMember / GroupDetails reply structures.

// groupRef is the [stream_id][topic_id][group_id] body shared by
// GET_CONSUMER_GROUP, DELETE, JOIN, LEAVE and SYNC.
type groupRef struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

func (g *groupRef) appendTo(dst []byte) []byte {
	return g.GroupID.AppendTo(g.TopicID.AppendTo(g.StreamID.AppendTo(dst)))
}

func (g *groupRef) decode(src []byte) error {
	return decodeIdentifiers(src, &g.StreamID, &g.TopicID, &g.GroupID)
}

func (g *groupRef) validate() error { return validateIdentifiers(g.StreamID, g.TopicID, g.GroupID) }

// GetConsumerGroup is the body of GET_CONSUMER_GROUP (code 600, operation
// 2): [stream_id][topic_id][group_id]. The reply is GroupDetails, or an
// empty payload when the group does not exist (see DecodeIfPresent); a
// missing stream or topic is denied 1009/2010.
type GetConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

// AppendTo appends the body.
func (g *GetConsumerGroup) AppendTo(dst []byte) []byte { return (*groupRef)(g).appendTo(dst) }

// Decode decodes the identifiers and ignores trailing bytes.
func (g *GetConsumerGroup) Decode(src []byte) error { return (*groupRef)(g).decode(src) }

// Validate checks the identifiers can be encoded.
func (g *GetConsumerGroup) Validate() error { return (*groupRef)(g).validate() }

// GetConsumerGroups is the body of GET_CONSUMER_GROUPS (code 601,
// operation 2): [stream_id][topic_id]. The reply is ConsumerGroups.
type GetConsumerGroups struct {
	StreamID Identifier
	TopicID  Identifier
}

// AppendTo appends the body.
func (g *GetConsumerGroups) AppendTo(dst []byte) []byte {
	return g.TopicID.AppendTo(g.StreamID.AppendTo(dst))
}

// Decode decodes the identifiers and ignores trailing bytes.
func (g *GetConsumerGroups) Decode(src []byte) error {
	return decodeIdentifiers(src, &g.StreamID, &g.TopicID)
}

// Validate checks the identifiers can be encoded.
func (g *GetConsumerGroups) Validate() error { return validateIdentifiers(g.StreamID, g.TopicID) }

// CreateConsumerGroup is the body of CREATE_CONSUMER_GROUP (code 602,
// operation 139): [stream_id][topic_id][name Name]. There is no group id
// on the wire; the server assigns ids from 0 per topic. The reply payload
// is GroupDetails with no members.
type CreateConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	Name     string
}

// AppendTo appends the body.
func (c *CreateConsumerGroup) AppendTo(dst []byte) []byte {
	dst = c.StreamID.AppendTo(dst)
	dst = c.TopicID.AppendTo(dst)
	return appendName(dst, c.Name)
}

// Decode decodes the fields and ignores trailing bytes.
func (c *CreateConsumerGroup) Decode(src []byte) error {
	r := newReader(src)
	c.StreamID = r.identifier()
	c.TopicID = r.identifier()
	c.Name = r.name()
	return r.done()
}

// Validate checks the identifiers and the name (ErrInvalidConsumerGroupName).
func (c *CreateConsumerGroup) Validate() error {
	if err := validateIdentifiers(c.StreamID, c.TopicID); err != nil {
		return err
	}
	if !validName(c.Name) {
		return ErrInvalidConsumerGroupName
	}
	return nil
}

// DeleteConsumerGroup is the body of DELETE_CONSUMER_GROUP (code 603,
// operation 140): [stream_id][topic_id][group_id]. Reply: empty payload.
type DeleteConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

// AppendTo appends the body.
func (d *DeleteConsumerGroup) AppendTo(dst []byte) []byte { return (*groupRef)(d).appendTo(dst) }

// Decode decodes the identifiers and ignores trailing bytes.
func (d *DeleteConsumerGroup) Decode(src []byte) error { return (*groupRef)(d).decode(src) }

// Validate checks the identifiers can be encoded.
func (d *DeleteConsumerGroup) Validate() error { return (*groupRef)(d).validate() }

// JoinConsumerGroup is the body of JOIN_CONSUMER_GROUP (code 604,
// operation 148): [stream_id][topic_id][group_id]. The member is the
// caller's session; no member id is on the wire. Reply: empty payload.
type JoinConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

// AppendTo appends the body.
func (j *JoinConsumerGroup) AppendTo(dst []byte) []byte { return (*groupRef)(j).appendTo(dst) }

// Decode decodes the identifiers and ignores trailing bytes.
func (j *JoinConsumerGroup) Decode(src []byte) error { return (*groupRef)(j).decode(src) }

// Validate checks the identifiers can be encoded.
func (j *JoinConsumerGroup) Validate() error { return (*groupRef)(j).validate() }

// LeaveConsumerGroup is the body of LEAVE_CONSUMER_GROUP (code 605,
// operation 149): [stream_id][topic_id][group_id]. Reply: empty payload.
type LeaveConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

// AppendTo appends the body.
func (l *LeaveConsumerGroup) AppendTo(dst []byte) []byte { return (*groupRef)(l).appendTo(dst) }

// Decode decodes the identifiers and ignores trailing bytes.
func (l *LeaveConsumerGroup) Decode(src []byte) error { return (*groupRef)(l).decode(src) }

// Validate checks the identifiers can be encoded.
func (l *LeaveConsumerGroup) Validate() error { return (*groupRef)(l).validate() }

// SyncConsumerGroup is the body of SYNC_CONSUMER_GROUP (code 606,
// operation 2): [stream_id][topic_id][group_id]. The reply is
// ConsumerGroupAssignment, or an empty payload when the caller is not a
// member (the SDK maps it to 5006; see DecodeIfPresent).
type SyncConsumerGroup struct {
	StreamID Identifier
	TopicID  Identifier
	GroupID  Identifier
}

// AppendTo appends the body.
func (s *SyncConsumerGroup) AppendTo(dst []byte) []byte { return (*groupRef)(s).appendTo(dst) }

// Decode decodes the identifiers and ignores trailing bytes.
func (s *SyncConsumerGroup) Decode(src []byte) error { return (*groupRef)(s).decode(src) }

// Validate checks the identifiers can be encoded.
func (s *SyncConsumerGroup) Validate() error { return (*groupRef)(s).validate() }

// ConsumerGroup is the group header reply structure (13 + N bytes):
// [id u32][partitions_count u32][members_count u32][name Name].
type ConsumerGroup struct {
	ID              uint32
	PartitionsCount uint32
	MembersCount    uint32
	Name            string
}

// AppendTo appends the structure.
func (g *ConsumerGroup) AppendTo(dst []byte) []byte { return g.appendWithCount(dst, g.MembersCount) }

func (g *ConsumerGroup) appendWithCount(dst []byte, members uint32) []byte {
	dst = appendU32(dst, g.ID)
	dst = appendU32(dst, g.PartitionsCount)
	dst = appendU32(dst, members)
	return appendName(dst, g.Name)
}

// Decode decodes exactly one ConsumerGroup.
func (g *ConsumerGroup) Decode(src []byte) error {
	r := newReader(src)
	g.read(&r)
	return r.finish()
}

func (g *ConsumerGroup) read(r *reader) {
	g.ID = r.u32()
	g.PartitionsCount = r.u32()
	g.MembersCount = r.u32()
	g.Name = r.name()
}

// ConsumerGroups is the plain reply payload of GET_CONSUMER_GROUPS:
// ConsumerGroup* until the end, no count; empty = no groups.
type ConsumerGroups []ConsumerGroup

// AppendTo appends the payload.
func (g *ConsumerGroups) AppendTo(dst []byte) []byte {
	for i := range *g {
		dst = (*g)[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload.
func (g *ConsumerGroups) Decode(src []byte) error {
	r := newReader(src)
	var out ConsumerGroups
	for r.err == nil && r.remaining() > 0 {
		var cg ConsumerGroup
		cg.read(&r)
		out = append(out, cg)
	}
	*g = out
	return r.finish()
}

// minGroupMemberLen is the smallest ConsumerGroupMember: id and count.
const minGroupMemberLen = 8

// ConsumerGroupMember is one member entry of GroupDetails (8 + 4·k
// bytes): [id u32][partitions_count u32 = k][partition_id u32 × k].
// partitions_count is len(Partitions).
type ConsumerGroupMember struct {
	ID         uint32
	Partitions []uint32
}

// AppendTo appends the structure.
func (m *ConsumerGroupMember) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, m.ID)
	return appendPartitionIDs(dst, m.Partitions)
}

// Decode decodes exactly one member.
func (m *ConsumerGroupMember) Decode(src []byte) error {
	r := newReader(src)
	m.read(&r)
	return r.finish()
}

func (m *ConsumerGroupMember) read(r *reader) {
	m.ID = r.u32()
	m.Partitions = r.partitionIDs()
}

// appendPartitionIDs appends [count u32][partition_id u32 × count].
func appendPartitionIDs(dst []byte, ids []uint32) []byte {
	dst = appendU32(dst, uint32(len(ids)))
	for _, id := range ids {
		dst = appendU32(dst, id)
	}
	return dst
}

// partitionIDs reads [count u32][partition_id u32 × count], checking count
// against the bytes left before allocating.
func (r *reader) partitionIDs() []uint32 {
	n := r.u32()
	if r.err != nil || n == 0 {
		return nil
	}
	if uint64(n)*4 > uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = r.u32()
	}
	return out
}

// GroupDetails is the reply payload of GET_CONSUMER_GROUP and
// CREATE_CONSUMER_GROUP: [ConsumerGroup][ConsumerGroupMember ×
// members_count]. AppendTo writes len(Members) as members_count (the
// embedded MembersCount is ignored); Decode is count-driven, sets
// MembersCount to the number read and rejects trailing bytes (the Go SDK
// reads members to the end, which agrees when nothing trails).
//
// GET_CONSUMER_GROUP answers an unknown group with an empty payload (see
// DecodeIfPresent).
type GroupDetails struct {
	ConsumerGroup
	Members []ConsumerGroupMember
}

// AppendTo appends the payload.
func (g *GroupDetails) AppendTo(dst []byte) []byte {
	dst = g.ConsumerGroup.appendWithCount(dst, uint32(len(g.Members)))
	for i := range g.Members {
		dst = g.Members[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload.
func (g *GroupDetails) Decode(src []byte) error {
	r := newReader(src)
	g.ConsumerGroup.read(&r)
	g.Members = nil
	if n := g.MembersCount; r.err == nil && n > 0 {
		if uint64(n)*minGroupMemberLen > uint64(r.remaining()) {
			return ErrInvalidCommand
		}
		g.Members = make([]ConsumerGroupMember, n)
		for i := range g.Members {
			g.Members[i].read(&r)
		}
	}
	return r.finish()
}

// ConsumerGroupAssignment is the plain reply payload of
// SYNC_CONSUMER_GROUP: [generation u64][partitions_count u32]
// [partition_id u32 × count] — the caller's pollable partitions and the
// group generation, exactly 12 + 4·count bytes. An empty payload means
// the caller is not a member (see DecodeIfPresent).
type ConsumerGroupAssignment struct {
	Generation uint64
	Partitions []uint32
}

// AppendTo appends the payload.
func (a *ConsumerGroupAssignment) AppendTo(dst []byte) []byte {
	dst = appendU64(dst, a.Generation)
	return appendPartitionIDs(dst, a.Partitions)
}

// Decode decodes a whole payload.
func (a *ConsumerGroupAssignment) Decode(src []byte) error {
	r := newReader(src)
	a.Generation = r.u64()
	a.Partitions = r.partitionIDs()
	return r.finish()
}
