package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// GetConsumerGroup returns a group with its members (GET_CONSUMER_GROUP,
// code 600). The server's empty "not found" answer is returned as
// wire.ErrConsumerGroupIDNotFound.
func (c *Client) GetConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.GroupDetails, error) {
	var d wire.GroupDetails
	req := &wire.GetConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}
	if err := c.getIfPresent(ctx, wire.CmdGetConsumerGroup, req, &d, wire.ErrConsumerGroupIDNotFound); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetConsumerGroups lists a topic's groups (GET_CONSUMER_GROUPS, code 601).
func (c *Client) GetConsumerGroups(ctx context.Context, stream, topic wire.Identifier) (wire.ConsumerGroups, error) {
	var g wire.ConsumerGroups
	if err := c.call(ctx, wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: stream, TopicID: topic}, &g); err != nil {
		return nil, err
	}
	return g, nil
}

// CreateConsumerGroup creates a group (CREATE_CONSUMER_GROUP, code 602);
// the server assigns its id.
func (c *Client) CreateConsumerGroup(ctx context.Context, stream, topic wire.Identifier, name string) (*wire.GroupDetails, error) {
	var d wire.GroupDetails
	if err := c.call(ctx, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: stream, TopicID: topic, Name: name}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DeleteConsumerGroup deletes a group with its offsets
// (DELETE_CONSUMER_GROUP, code 603).
func (c *Client) DeleteConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return c.call(ctx, wire.CmdDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}, nil)
}

// JoinConsumerGroup makes this client (its session) a member of a group
// (JOIN_CONSUMER_GROUP, code 604); joining again is a no-op.
func (c *Client) JoinConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return c.call(ctx, wire.CmdJoinConsumerGroup, &wire.JoinConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}, nil)
}

// LeaveConsumerGroup ends this client's membership (LEAVE_CONSUMER_GROUP,
// code 605); wire.ErrConsumerGroupMemberNotFound when not a member.
func (c *Client) LeaveConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) error {
	return c.call(ctx, wire.CmdLeaveConsumerGroup, &wire.LeaveConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}, nil)
}

// SyncConsumerGroup returns this member's pollable partitions and the
// group generation (SYNC_CONSUMER_GROUP, code 606). The server's empty
// answer for a non-member is returned as wire.ErrConsumerGroupMemberNotFound,
// as the official Go SDK does.
func (c *Client) SyncConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.ConsumerGroupAssignment, error) {
	var a wire.ConsumerGroupAssignment
	req := &wire.SyncConsumerGroup{StreamID: stream, TopicID: topic, GroupID: group}
	if err := c.getIfPresent(ctx, wire.CmdSyncConsumerGroup, req, &a, wire.ErrConsumerGroupMemberNotFound); err != nil {
		return nil, err
	}
	return &a, nil
}

// GetConsumerOffset returns the stored offset of a consumer or group on a
// partition (GET_CONSUMER_OFFSET, code 120). When nothing is stored the
// server answers with an empty body and GetConsumerOffset returns
// (nil, nil): having no offset yet is a normal state, not an error. An
// absent partition means partition 0 for a single consumer; groups must
// name it.
func (c *Client) GetConsumerOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition wire.OptPartition) (*wire.ConsumerOffset, error) {
	if err := validateTarget(consumer, stream, topic); err != nil {
		return nil, wrapCmd(wire.CmdGetConsumerOffset, err)
	}
	payload, err := c.invoke(ctx, wire.CmdGetConsumerOffset, &wire.GetConsumerOffset{Consumer: consumer, StreamID: stream, TopicID: topic, Partition: partition})
	if err != nil {
		return nil, err
	}
	off, found, err := wire.DecodeConsumerOffsetReply(payload)
	if err != nil {
		return nil, wrapCmd(wire.CmdGetConsumerOffset, &ProtocolError{Reason: "undecodable GET_CONSUMER_OFFSET reply: " + err.Error()})
	}
	if !found {
		return nil, nil
	}
	return &off, nil
}

// StoreConsumerOffset stores offset as the consumer's or group's position
// on a partition (STORE_CONSUMER_OFFSET, code 121) with quorum
// acknowledgement (ack 1, the protocol default).
func (c *Client) StoreConsumerOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition wire.OptPartition, offset uint64) error {
	if err := validateTarget(consumer, stream, topic); err != nil {
		return wrapCmd(wire.CmdStoreConsumerOffset, err)
	}
	req := &wire.StoreConsumerOffset{Consumer: consumer, StreamID: stream, TopicID: topic, Partition: partition, Offset: offset, Ack: wire.AckQuorum}
	return c.call(ctx, wire.CmdStoreConsumerOffset, req, nil)
}

// DeleteConsumerOffset deletes a stored offset (DELETE_CONSUMER_OFFSET,
// code 122); wire.ErrConsumerOffsetNotFound when none is stored.
func (c *Client) DeleteConsumerOffset(ctx context.Context, consumer wire.Consumer, stream, topic wire.Identifier, partition wire.OptPartition) error {
	if err := validateTarget(consumer, stream, topic); err != nil {
		return wrapCmd(wire.CmdDeleteConsumerOffset, err)
	}
	req := &wire.DeleteConsumerOffset{Consumer: consumer, StreamID: stream, TopicID: topic, Partition: partition, Ack: wire.AckQuorum}
	return c.call(ctx, wire.CmdDeleteConsumerOffset, req, nil)
}

// validateTarget checks a consumer and the stream and topic identifiers.
func validateTarget(consumer wire.Consumer, stream, topic wire.Identifier) error {
	if err := consumer.Validate(); err != nil {
		return err
	}
	if err := stream.Validate(); err != nil {
		return err
	}
	return topic.Validate()
}
