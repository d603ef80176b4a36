// Package catalogtest is an in-memory catalog.Topics for tests of the
// partition plane and the broker while (and besides) the metadata plane:
// topics are added directly and their partitions created through the
// catalog.Data given to New. Every user is allowed everything unless Deny
// says otherwise; consumer groups map members to partitions explicitly.
package catalogtest

import (
	"slices"
	"sync"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

// Topics is a fake catalog.Topics. It is safe for concurrent use.
type Topics struct {
	data catalog.Data

	mu     sync.Mutex
	next   uint64
	topics map[[2]uint32]*Topic
	deny   map[denyKey]bool
	events []GroupEvent
}

type denyKey struct {
	user   uint32
	action catalog.Action
}

// Topic is one fake topic.
type Topic struct {
	Ref        catalog.TopicRef
	StreamName string
	Name       string
	Partitions []uint32
	// Groups maps group id -> name; Members maps (group, client) -> the
	// partitions the member owns.
	Groups  map[uint32]string
	Members map[uint32]map[wire.Uint128][]uint32
	// pending holds the (group, partition) pairs pending revocation.
	pending map[groupPartition]bool
}

var _ catalog.Topics = (*Topics)(nil)

// New returns an empty catalog creating partitions through data.
func New(data catalog.Data) *Topics {
	return &Topics{data: data, topics: map[[2]uint32]*Topic{}, deny: map[denyKey]bool{}}
}

// AddTopic creates a topic with partitions 0..partitions-1 (incarnation
// chosen by the catalog when incarnation is 0) and calls
// Data.CreatePartitions.
func (c *Topics) AddTopic(stream uint32, streamName string, topic uint32, name string, partitions uint32, incarnation uint64, s wire.TopicSettings) (*Topic, error) {
	c.mu.Lock()
	if incarnation == 0 {
		c.next++
		incarnation = c.next
	}
	t := &Topic{
		Ref:        catalog.TopicRef{StreamID: stream, TopicID: topic, Incarnation: incarnation, Settings: s},
		StreamName: streamName, Name: name,
		Groups: map[uint32]string{}, Members: map[uint32]map[wire.Uint128][]uint32{},
		pending: map[groupPartition]bool{},
	}
	for i := range partitions {
		t.Partitions = append(t.Partitions, i)
	}
	c.topics[[2]uint32{stream, topic}] = t
	c.mu.Unlock()
	return t, c.data.CreatePartitions(t.Ref, t.Partitions)
}

// Ref returns the TopicRef of a topic (zero if unknown).
func (c *Topics) Ref(stream, topic uint32) catalog.TopicRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.topics[[2]uint32{stream, topic}]; t != nil {
		return t.Ref
	}
	return catalog.TopicRef{}
}

// RemoveTopic forgets a topic and calls Data.DeleteTopic.
func (c *Topics) RemoveTopic(stream, topic uint32) error {
	c.mu.Lock()
	t, ok := c.topics[[2]uint32{stream, topic}]
	delete(c.topics, [2]uint32{stream, topic})
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return c.data.DeleteTopic(t.Ref)
}

// AddGroup adds a consumer group with members owning partitions.
func (c *Topics) AddGroup(stream, topic, group uint32, name string, members map[wire.Uint128][]uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.topics[[2]uint32{stream, topic}]
	t.Groups[group] = name
	t.Members[group] = members
}

// Deny makes Allowed refuse action to user.
func (c *Topics) Deny(user uint32, action catalog.Action) {
	c.mu.Lock()
	c.deny[denyKey{user, action}] = true
	c.mu.Unlock()
}

func matches(id wire.Identifier, num uint32, name string) bool {
	if id.Kind == wire.IDString {
		return id.Str == name
	}
	return id.Num == num
}

// ResolveTopic implements catalog.Topics.
func (c *Topics) ResolveTopic(stream, topic wire.Identifier) (catalog.TopicRef, []uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	streamFound := false
	for _, t := range c.topics {
		if !matches(stream, t.Ref.StreamID, t.StreamName) {
			continue
		}
		streamFound = true
		if matches(topic, t.Ref.TopicID, t.Name) {
			return t.Ref, t.Partitions, nil
		}
	}
	if !streamFound {
		return catalog.TopicRef{}, nil, wire.ErrStreamIDNotFound
	}
	return catalog.TopicRef{}, nil, wire.ErrTopicIDNotFound
}

// Allowed implements catalog.Topics.
func (c *Topics) Allowed(user uint32, action catalog.Action, stream, topic uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.deny[denyKey{user, action}]
}

func (c *Topics) topicOf(ref catalog.TopicRef) *Topic {
	t := c.topics[[2]uint32{ref.StreamID, ref.TopicID}]
	if t == nil || t.Ref.Incarnation != ref.Incarnation {
		return nil
	}
	return t
}

// ResolveGroup implements catalog.Topics.
func (c *Topics) ResolveGroup(ref catalog.TopicRef, group wire.Identifier) (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.topicOf(ref); t != nil {
		for id, name := range t.Groups {
			if matches(group, id, name) {
				return id, nil
			}
		}
	}
	return 0, wire.ErrConsumerGroupIDNotFound
}

// GroupPartition implements catalog.Topics: the member must own the
// partition; a poll is refused while the partition is pending (SetPending).
func (c *Topics) GroupPartition(ref catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, access catalog.GroupAccess) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groupAccessLocked(ref, group, client, partition, access)
}

func (c *Topics) groupAccessLocked(ref catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, access catalog.GroupAccess) error {
	t := c.topicOf(ref)
	if t == nil {
		return wire.ErrConsumerGroupIDNotFound
	}
	if _, ok := t.Groups[group]; !ok {
		return wire.ErrConsumerGroupIDNotFound
	}
	owned, ok := t.Members[group][client]
	if !ok {
		return wire.ErrConsumerGroupMemberNotFound
	}
	if !slices.Contains(owned, partition) {
		return wire.ErrConsumerGroupPartitionNotOwned
	}
	if access == catalog.GroupPoll && t.pending[groupPartition{group, partition}] {
		return wire.ErrConsumerGroupPartitionNotOwned
	}
	return nil
}

// GroupPolled implements catalog.Topics: it checks like GroupPartition
// (GroupPoll) and records the event.
func (c *Topics) GroupPolled(ref catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, last uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.groupAccessLocked(ref, group, client, partition, catalog.GroupPoll); err != nil {
		return err
	}
	c.events = append(c.events, GroupEvent{Polled: true, Group: group, Client: client, Partition: partition, Offset: last})
	return nil
}

// Replicas implements catalog.Topics: the fake places nothing.
func (c *Topics) Replicas(catalog.TopicRef, uint32) []uint8 { return nil }

// GroupCommitted implements catalog.Topics: it records the event.
func (c *Topics) GroupCommitted(ref catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, offset uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, GroupEvent{Group: group, Client: client, Partition: partition, Offset: offset})
}

// GroupEvent is a GroupPolled (Polled) or GroupCommitted call.
type GroupEvent struct {
	Polled    bool
	Group     uint32
	Client    wire.Uint128
	Partition uint32
	Offset    uint64
}

// Events returns the recorded GroupPolled and GroupCommitted calls in
// order and forgets them.
func (c *Topics) Events() []GroupEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.events
	c.events = nil
	return out
}

// SetPending marks a group's partition as pending revocation (its owner
// may commit but not poll it) or clears the mark.
func (c *Topics) SetPending(stream, topic, group, partition uint32, pending bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.topics[[2]uint32{stream, topic}]
	if pending {
		t.pending[groupPartition{group, partition}] = true
	} else {
		delete(t.pending, groupPartition{group, partition})
	}
}

type groupPartition struct{ group, partition uint32 }
