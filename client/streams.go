package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// GetStream returns a stream with its topics (GET_STREAM, code 200). The
// server's empty "not found" answer is returned as wire.ErrStreamIDNotFound,
// as the official SDKs do.
func (c *Client) GetStream(ctx context.Context, stream wire.Identifier) (*wire.StreamDetails, error) {
	var d wire.StreamDetails
	if err := c.getIfPresent(ctx, wire.CmdGetStream, &wire.GetStream{StreamID: stream}, &d, wire.ErrStreamIDNotFound); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetStreams lists the streams (GET_STREAMS, code 201).
func (c *Client) GetStreams(ctx context.Context) (wire.Streams, error) {
	var s wire.Streams
	if err := c.call(ctx, wire.CmdGetStreams, nil, &s); err != nil {
		return nil, err
	}
	return s, nil
}

// CreateStream creates a stream (CREATE_STREAM, code 202) and returns it.
// The stream option catalog is empty today, so opts is normally empty.
func (c *Client) CreateStream(ctx context.Context, name string, opts ...wire.Option) (*wire.StreamDetails, error) {
	var d wire.StreamDetails
	if err := c.call(ctx, wire.CmdCreateStream, &wire.CreateStream{Name: name, Options: opts}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// UpdateStream renames a stream (UPDATE_STREAM, code 204).
func (c *Client) UpdateStream(ctx context.Context, stream wire.Identifier, name string, opts ...wire.Option) error {
	return c.call(ctx, wire.CmdUpdateStream, &wire.UpdateStream{StreamID: stream, Name: name, Options: opts}, nil)
}

// DeleteStream deletes a stream with everything in it (DELETE_STREAM,
// code 203).
func (c *Client) DeleteStream(ctx context.Context, stream wire.Identifier) error {
	return c.call(ctx, wire.CmdDeleteStream, &wire.DeleteStream{StreamID: stream}, nil)
}

// PurgeStream deletes every message of every topic of a stream
// (PURGE_STREAM, code 205).
func (c *Client) PurgeStream(ctx context.Context, stream wire.Identifier) error {
	return c.call(ctx, wire.CmdPurgeStream, &wire.PurgeStream{StreamID: stream}, nil)
}

// GetTopic returns a topic with its partitions (GET_TOPIC, code 300). The
// server's empty "not found" answer is returned as wire.ErrTopicIDNotFound.
func (c *Client) GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error) {
	var d wire.TopicDetails
	if err := c.getIfPresent(ctx, wire.CmdGetTopic, &wire.GetTopic{StreamID: stream, TopicID: topic}, &d, wire.ErrTopicIDNotFound); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetTopics lists a stream's topics (GET_TOPICS, code 301); a missing
// stream yields an empty list (server behaviour, commands.md §301).
func (c *Client) GetTopics(ctx context.Context, stream wire.Identifier) (wire.Topics, error) {
	var t wire.Topics
	if err := c.call(ctx, wire.CmdGetTopics, &wire.GetTopics{StreamID: stream}, &t); err != nil {
		return nil, err
	}
	return t, nil
}

// CreateTopic creates a topic with partitions partitions (CREATE_TOPIC,
// code 302) and returns it. Settings such as message expiry, maximum size
// or compression are topic options (wire.TopicOpt* keys; DescribeOptions
// lists them).
func (c *Client) CreateTopic(ctx context.Context, stream wire.Identifier, name string, partitions uint32, opts ...wire.Option) (*wire.TopicDetails, error) {
	var d wire.TopicDetails
	req := &wire.CreateTopic{StreamID: stream, PartitionsCount: partitions, Name: name, Options: opts}
	if err := c.call(ctx, wire.CmdCreateTopic, req, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// UpdateTopic renames a topic and patches its updatable options
// (UPDATE_TOPIC, code 304): keys not given are unchanged.
func (c *Client) UpdateTopic(ctx context.Context, stream, topic wire.Identifier, name string, opts ...wire.Option) error {
	return c.call(ctx, wire.CmdUpdateTopic, &wire.UpdateTopic{StreamID: stream, TopicID: topic, Name: name, Options: opts}, nil)
}

// DeleteTopic deletes a topic (DELETE_TOPIC, code 303).
func (c *Client) DeleteTopic(ctx context.Context, stream, topic wire.Identifier) error {
	return c.call(ctx, wire.CmdDeleteTopic, &wire.DeleteTopic{StreamID: stream, TopicID: topic}, nil)
}

// PurgeTopic deletes every message of a topic (PURGE_TOPIC, code 305).
func (c *Client) PurgeTopic(ctx context.Context, stream, topic wire.Identifier) error {
	return c.call(ctx, wire.CmdPurgeTopic, &wire.PurgeTopic{StreamID: stream, TopicID: topic}, nil)
}

// CreatePartitions adds count partitions to a topic (CREATE_PARTITIONS,
// code 402).
func (c *Client) CreatePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	return c.call(ctx, wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: stream, TopicID: topic, PartitionsCount: count}, nil)
}

// DeletePartitions removes the count highest partitions of a topic
// (DELETE_PARTITIONS, code 403).
func (c *Client) DeletePartitions(ctx context.Context, stream, topic wire.Identifier, count uint32) error {
	return c.call(ctx, wire.CmdDeletePartitions, &wire.DeletePartitions{StreamID: stream, TopicID: topic, PartitionsCount: count}, nil)
}

// DeleteSegments deletes the count oldest sealed segments of a partition
// (DELETE_SEGMENTS, code 503); the active segment is never deleted.
func (c *Client) DeleteSegments(ctx context.Context, stream, topic wire.Identifier, partition, count uint32) error {
	req := &wire.DeleteSegments{StreamID: stream, TopicID: topic, PartitionID: partition, SegmentsCount: count}
	return c.call(ctx, wire.CmdDeleteSegments, req, nil)
}
