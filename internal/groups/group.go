package groups

import (
	"errors"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// MemberID identifies a member inside one group. It is the lowest id not used
// by another current member when the member joins (GET group reports it as
// u32).
type MemberID uint32

// ClientID is the VSR client id of the session that joined (semantics §6.1:
// membership is keyed by the caller's session client id, a u128).
type ClientID wire.Uint128

// PartitionID is a partition id of the group's topic.
type PartitionID uint32

// Generation counts the rebalances of a group (§6.2).
type Generation uint64

// Limits. They bound Join, SetPartitions and the snapshot decoder.
const (
	// MaxMembers bounds the members of one group: a member is a session and
	// the client table holds at most 65,536 sessions (§1.5).
	MaxMembers = 65536
	// MaxPartitionID is one past the highest valid partition id (§8: partition
	// ids are < 1,000,000, PartitionIdSpaceExhausted otherwise).
	MaxPartitionID = 1_000_000
	// MaxPartitions bounds the partitions of one group's topic; ids are
	// distinct and below MaxPartitionID.
	MaxPartitions = MaxPartitionID
)

// DefaultRebalancingTimeout is `[consumer_group] rebalancing_timeout` (config.md
// §3): the longest a partition stays pending revocation.
const DefaultRebalancingTimeout = 30 * time.Second

var (
	// ErrMemberNotFound reports that the client is not a member of the group.
	// It is wire.ErrConsumerGroupMemberNotFound (5006), so the server can send
	// it as is.
	ErrMemberNotFound = wire.ErrConsumerGroupMemberNotFound
	// ErrPartitionNotOwned reports that the member does not own the partition
	// (or, for polls, that it is pending revocation away from it). It is
	// wire.ErrConsumerGroupPartitionNotOwned (5009).
	ErrPartitionNotOwned = wire.ErrConsumerGroupPartitionNotOwned
	// ErrTooManyMembers reports a join beyond MaxMembers; the client table
	// makes it unreachable in practice.
	ErrTooManyMembers = errors.New("groups: too many members")
	// ErrInvalidPartitions reports a partition list with a duplicate id, an id
	// >= MaxPartitionID or more than MaxPartitions ids.
	ErrInvalidPartitions = errors.New("groups: invalid partition ids")
	// ErrInvalidConfig reports a negative rebalancing timeout.
	ErrInvalidConfig = errors.New("groups: invalid config")
)

// Config holds the group settings that are not part of its state.
type Config struct {
	// RebalancingTimeout is how long a partition may stay pending revocation
	// before it moves anyway; zero means DefaultRebalancingTimeout.
	RebalancingTimeout time.Duration
}

// Group is the membership and assignment state of one consumer group. The
// zero value is not usable; call New. See the package doc for the rules.
type Group struct {
	timeout    int64 // rebalancing timeout in nanoseconds, > 0
	generation Generation
	parts      []partition           // the topic's partitions, ascending id
	members    []member              // ascending id
	revs       []revocation          // pending revocations, in creation order
	byClient   map[ClientID]MemberID // client -> member; never iterated
}

// partition is the per-partition state.
type partition struct {
	id       PartitionID
	owner    MemberID // valid when owned
	owned    bool
	revoking bool // a revocation in g.revs names this partition
	marks
}

// marks is the in-flight tracking of the partition's current owner.
type marks struct {
	polled       uint64 // highest offset the owner polled
	committed    uint64 // last offset the owner committed
	hasPolled    bool
	hasCommitted bool
}

// inFlight reports polled-but-not-committed data (§6.3 step 3).
func (p *partition) inFlight() bool { return p.marks.inFlight() }

// inFlight reports polled-but-not-committed data (§6.3 step 3).
func (m *marks) inFlight() bool {
	return m.hasPolled && (!m.hasCommitted || m.committed < m.polled)
}

// member is one member of the group.
type member struct {
	id     MemberID
	client ClientID
	// partitions it owns, in arrival order, including those pending
	// revocation away from it.
	partitions []PartitionID
}

// revocation is a partition on its way from source to target (§6.3 step 3).
type revocation struct {
	partition PartitionID
	source    MemberID
	target    MemberID
	since     int64 // UnixNano of the join that created it
}

// New returns an empty group (generation 0, no members) over the topic's
// partition ids (any order; stored ascending).
func New(cfg Config, partitions []PartitionID) (*Group, error) {
	g := &Group{byClient: make(map[ClientID]MemberID)}
	if err := g.setConfig(cfg); err != nil {
		return nil, err
	}
	ids, err := sortedPartitions(partitions)
	if err != nil {
		return nil, err
	}
	g.parts = make([]partition, len(ids))
	for i, id := range ids {
		g.parts[i].id = id
	}
	return g, nil
}

func (g *Group) setConfig(cfg Config) error {
	switch {
	case cfg.RebalancingTimeout < 0:
		return ErrInvalidConfig
	case cfg.RebalancingTimeout == 0:
		g.timeout = int64(DefaultRebalancingTimeout)
	default:
		g.timeout = int64(cfg.RebalancingTimeout)
	}
	return nil
}

// sortedPartitions validates ids and returns a sorted copy.
func sortedPartitions(ids []PartitionID) ([]PartitionID, error) {
	if len(ids) > MaxPartitions {
		return nil, ErrInvalidPartitions
	}
	s := slices.Clone(ids)
	slices.Sort(s)
	for i, id := range s {
		if id >= MaxPartitionID || (i > 0 && s[i-1] == id) {
			return nil, ErrInvalidPartitions
		}
	}
	return s, nil
}

// Generation returns the current generation.
func (g *Group) Generation() Generation { return g.generation }

// Len returns the number of members.
func (g *Group) Len() int { return len(g.members) }

// Partitions returns the topic's partition ids in ascending order.
func (g *Group) Partitions() []PartitionID {
	out := make([]PartitionID, len(g.parts))
	for i := range g.parts {
		out[i] = g.parts[i].id
	}
	return out
}

// MemberOf returns the member id of client, if it is a member (GET_CLIENT
// lists the groups a client belongs to).
func (g *Group) MemberOf(client ClientID) (MemberID, bool) {
	id, ok := g.byClient[client]
	return id, ok
}

// Join adds client as a member and runs the cooperative rebalance (§6.3) at
// time now (the metadata log entry's timestamp; it starts the timeout of the
// revocations this join creates). A client that is already a member gets its
// member id back and nothing changes. The new member gets the lowest member id
// not in use.
func (g *Group) Join(client ClientID, now time.Time) (MemberID, error) {
	return g.join(client, now, (*partition).inFlight)
}

// JoinPending is Join for a caller that keeps the in-flight marks outside
// the replicated state (the metadata log, see the package doc): every
// partition the cooperative rebalance takes away from a member becomes a
// pending revocation, whatever the marks say, so the result depends only
// on the membership and the arguments. The caller then completes at once
// (CompleteRevocation) the revocations Settled reports, which reaches the
// same ownership as Join would have (the generation is higher by one per
// completed revocation).
func (g *Group) JoinPending(client ClientID, now time.Time) (MemberID, error) {
	return g.join(client, now, func(*partition) bool { return true })
}

// join adds client; inFlight decides which moving partitions become
// pending revocations.
func (g *Group) join(client ClientID, now time.Time, inFlight func(*partition) bool) (MemberID, error) {
	if id, ok := g.byClient[client]; ok {
		return id, nil
	}
	if len(g.members) >= MaxMembers {
		return 0, ErrTooManyMembers
	}
	// Members are sorted by id, so the first position whose id differs from
	// its index is the lowest unused id (or the end).
	pos := 0
	for pos < len(g.members) && g.members[pos].id == MemberID(pos) {
		pos++
	}
	id := MemberID(pos)
	g.members = slices.Insert(g.members, pos, member{id: id, client: client})
	g.byClient[client] = id
	g.generation++
	g.cooperativeRebalance(now.UnixNano(), inFlight)
	return id, nil
}

// Leave removes client from the group and runs a full rebalance (§6.1 LEAVE).
// A client that is not a member gets ErrMemberNotFound and nothing changes.
func (g *Group) Leave(client ClientID) error {
	if !g.RemoveClient(client) {
		return ErrMemberNotFound
	}
	return nil
}

// RemoveClient removes client's membership, if any, with a full rebalance
// (logout, disconnect, stale-client eviction: §1.8–1.10). It reports whether
// client was a member.
func (g *Group) RemoveClient(client ClientID) bool {
	id, ok := g.byClient[client]
	if !ok {
		return false
	}
	delete(g.byClient, client)
	g.members = slices.Delete(g.members, g.memberIndex(id), g.memberIndex(id)+1)
	g.fullRebalance()
	return true
}

// DropMembers removes every member (boot in single-node mode, see the package
// doc) and reports how many there were. Removing at least one is a rebalance
// (generation + 1); an empty group is left unchanged.
func (g *Group) DropMembers() int {
	n := len(g.members)
	if n == 0 {
		return 0
	}
	g.members = g.members[:0]
	clear(g.byClient)
	g.fullRebalance()
	return n
}

// SetPartitions replaces the topic's partition ids (partitions created or
// deleted, §3.5) and runs a full rebalance. It is always a rebalance, even if
// the set did not change (the server only calls it when it did). In-flight
// marks survive for partitions that keep their owner.
func (g *Group) SetPartitions(ids []PartitionID) error {
	s, err := sortedPartitions(ids)
	if err != nil {
		return err
	}
	parts := make([]partition, len(s))
	for i, id := range s {
		if j, ok := g.partIndex(id); ok {
			parts[i] = g.parts[j]
		} else {
			parts[i].id = id
		}
	}
	g.parts = parts
	g.fullRebalance()
	return nil
}

// MemberInfo is one member as GET group (600) reports it.
type MemberInfo struct {
	ID     MemberID
	Client ClientID
	// Partitions the member owns, in list order, including those pending
	// revocation away from it (UNKNOWN in the reference; see the package doc).
	Partitions []PartitionID
}

// Members returns the members in ascending id order. The slices are copies.
func (g *Group) Members() []MemberInfo {
	out := make([]MemberInfo, len(g.members))
	for i := range g.members {
		m := &g.members[i]
		out[i] = MemberInfo{ID: m.id, Client: m.client, Partitions: slices.Clone(m.partitions)}
		if out[i].Partitions == nil {
			out[i].Partitions = []PartitionID{}
		}
	}
	return out
}

// Revocation is a pending revocation (§6.3 step 3).
type Revocation struct {
	Partition PartitionID
	Source    MemberID // owns the partition until the revocation completes
	Target    MemberID // gets it when the revocation completes
	Since     time.Time
}

// Revocations returns the pending revocations in creation order.
func (g *Group) Revocations() []Revocation {
	out := make([]Revocation, len(g.revs))
	for i, r := range g.revs {
		out[i] = Revocation{Partition: r.partition, Source: r.source, Target: r.target, Since: time.Unix(0, r.since)}
	}
	return out
}

// Assignment returns the generation and the partitions client may poll: the
// ones it owns minus those pending revocation, in list order (SYNC, §6.1). A
// non-member gets ErrMemberNotFound (SYNC then answers an empty body).
func (g *Group) Assignment(client ClientID) (Generation, []PartitionID, error) {
	id, ok := g.byClient[client]
	if !ok {
		return g.generation, nil, ErrMemberNotFound
	}
	m := &g.members[g.memberIndex(id)]
	out := make([]PartitionID, 0, len(m.partitions))
	for _, p := range m.partitions {
		if !g.parts[g.mustPartIndex(p)].revoking {
			out = append(out, p)
		}
	}
	return g.generation, out, nil
}

// memberIndex returns the position of member id; the id must exist.
func (g *Group) memberIndex(id MemberID) int {
	i, ok := slices.BinarySearchFunc(g.members, id, func(m member, id MemberID) int {
		return cmpUint(uint64(m.id), uint64(id))
	})
	if !ok {
		panic("groups: member index out of sync")
	}
	return i
}

// partIndex returns the position of partition id in g.parts.
// It reads only the ids (never copies a partition), so it may run while a
// recorder holding the caller's mark lock writes the marks.
func (g *Group) partIndex(id PartitionID) (int, bool) {
	lo, hi := 0, len(g.parts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if g.parts[mid].id < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(g.parts) && g.parts[lo].id == id
}

// mustPartIndex is partIndex for ids that the state says exist.
func (g *Group) mustPartIndex(id PartitionID) int {
	i, ok := g.partIndex(id)
	if !ok {
		panic("groups: partition index out of sync")
	}
	return i
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
