package httpapi

import (
	"net/http"
	"sort"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/wire"
)

// Request bodies of the stream, topic, partition and group routes.

// CreateStreamRequest is POST /streams.
type CreateStreamRequest struct {
	Name    *string           `json:"name"`
	Options map[string]string `json:"options,omitempty"`
}

// UpdateStreamRequest is PUT /streams/{stream_id}.
type UpdateStreamRequest struct {
	Name    *string           `json:"name"`
	Options map[string]string `json:"options,omitempty"`
}

// CreateTopicRequest is POST /streams/{stream_id}/topics; the first five
// fields are required.
type CreateTopicRequest struct {
	Name                 *string           `json:"name"`
	PartitionsCount      *uint32           `json:"partitions_count"`
	CompressionAlgorithm *string           `json:"compression_algorithm"`
	MessageExpiry        *uint64           `json:"message_expiry"`
	MaxTopicSize         *uint64           `json:"max_topic_size"`
	Options              map[string]string `json:"options,omitempty"`
}

// UpdateTopicRequest is PUT .../topics/{topic_id}: name required, the rest
// a patch.
type UpdateTopicRequest struct {
	Name                 *string           `json:"name"`
	CompressionAlgorithm *string           `json:"compression_algorithm,omitempty"`
	MessageExpiry        *uint64           `json:"message_expiry,omitempty"`
	MaxTopicSize         *uint64           `json:"max_topic_size,omitempty"`
	Options              map[string]string `json:"options,omitempty"`
}

// CreatePartitionsRequest is POST .../partitions.
type CreatePartitionsRequest struct {
	PartitionsCount *uint32 `json:"partitions_count"`
}

// CreateGroupRequest is POST .../consumer-groups.
type CreateGroupRequest struct {
	Name *string `json:"name"`
}

// maxPartitions is the partitions_count limit (2015 above it).
const maxPartitions = 1000

// stringOptions turns a request's options object into String options,
// sorted by key (the binary option checks parse the strings).
func stringOptions(m map[string]string) wire.Options {
	var out wire.Options
	for k, v := range m {
		out = append(out, wire.StringOption(k, v))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func validName(s string) bool { return len(s) >= 1 && len(s) <= wire.MaxNameLen && utf8.ValidString(s) }

func (c *call) getStreams() error {
	out, err := c.read(wire.CmdGetStreams, nil)
	if err != nil {
		return err
	}
	var ss wire.Streams
	if err := decodeReply(out.payload, &ss); err != nil {
		return err
	}
	list := make([]Stream, 0, len(ss))
	for i := range ss {
		list = append(list, streamJSON(&ss[i]))
	}
	return c.json(http.StatusOK, list)
}

func (c *call) getStream() error {
	id, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetStream, &wire.GetStream{StreamID: id})
	if err != nil {
		return err
	}
	if len(out.payload) == 0 {
		return codeError(wire.ErrStreamIDNotFound.Code)
	}
	var d wire.StreamDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, streamDetailsJSON(&d))
}

func (c *call) createStream() error {
	var req CreateStreamRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil {
		return errUnprocessable("name is required")
	}
	if !validName(*req.Name) {
		return codeError(wire.ErrInvalidStreamName.Code)
	}
	out, err := c.write(wire.CmdCreateStream, &wire.CreateStream{Name: *req.Name, Options: stringOptions(req.Options)})
	if err != nil {
		return err
	}
	var d wire.StreamDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, streamDetailsJSON(&d))
}

func (c *call) updateStream() error {
	id, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	var req UpdateStreamRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil {
		return errUnprocessable("name is required")
	}
	if !validName(*req.Name) {
		return codeError(wire.ErrInvalidStreamName.Code)
	}
	if _, err := c.write(wire.CmdUpdateStream, &wire.UpdateStream{StreamID: id, Name: *req.Name, Options: stringOptions(req.Options)}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) deleteStream() error {
	id, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdDeleteStream, &wire.DeleteStream{StreamID: id}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) purgeStream() error {
	id, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdPurgeStream, &wire.PurgeStream{StreamID: id}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

// streamTopic reads {stream_id} and {topic_id}.
func (c *call) streamTopic() (wire.Identifier, wire.Identifier, error) {
	s, err := c.ident("stream_id")
	if err != nil {
		return s, s, err
	}
	t, err := c.ident("topic_id")
	return s, t, err
}

func (c *call) getTopics() error {
	s, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetTopics, &wire.GetTopics{StreamID: s})
	if err != nil {
		return err
	}
	var ts wire.Topics
	if err := decodeReply(out.payload, &ts); err != nil {
		return err
	}
	list := make([]Topic, 0, len(ts))
	for i := range ts {
		list = append(list, topicJSON(&ts[i]))
	}
	return c.json(http.StatusOK, list)
}

func (c *call) getTopic() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetTopic, &wire.GetTopic{StreamID: s, TopicID: t})
	if err != nil {
		return err
	}
	if len(out.payload) == 0 {
		return codeError(wire.ErrTopicIDNotFound.Code)
	}
	var d wire.TopicDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	doc := topicDetailsJSON(&d)
	c.addPartitionTiers(s, t, &doc)
	return c.json(http.StatusOK, doc)
}

// typedTopicOptions folds the typed topic fields into options: values
// other than none/0 become explicit options (http-api.md §7.4).
func typedTopicOptions(opts wire.Options, compression *string, expiry, maxSize *uint64) (wire.Options, error) {
	if compression != nil {
		ca, err := wire.ParseCompressionAlgorithm(*compression)
		if err != nil {
			return nil, errUnprocessable("compression_algorithm must be none or gzip")
		}
		if ca != wire.CompressionNone {
			opts = append(opts, wire.StringOption(wire.TopicOptCompressionAlgorithm, compressionName(ca)))
		}
	}
	if expiry != nil && *expiry != 0 {
		opts = append(opts, wire.Uint64Option(wire.TopicOptMessageExpiry, *expiry))
	}
	if maxSize != nil && *maxSize != 0 {
		opts = append(opts, wire.Uint64Option(wire.TopicOptMaxTopicSize, *maxSize))
	}
	return opts, nil
}

func (c *call) createTopic() error {
	s, err := c.ident("stream_id")
	if err != nil {
		return err
	}
	var req CreateTopicRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil || req.PartitionsCount == nil || req.CompressionAlgorithm == nil || req.MessageExpiry == nil || req.MaxTopicSize == nil {
		return errUnprocessable("name, partitions_count, compression_algorithm, message_expiry and max_topic_size are required")
	}
	if !validName(*req.Name) {
		return codeError(wire.ErrInvalidTopicName.Code)
	}
	if *req.PartitionsCount > maxPartitions {
		return codeError(wire.ErrTooManyPartitions.Code)
	}
	opts, err := typedTopicOptions(stringOptions(req.Options), req.CompressionAlgorithm, req.MessageExpiry, req.MaxTopicSize)
	if err != nil {
		return err
	}
	out, err := c.write(wire.CmdCreateTopic, &wire.CreateTopic{StreamID: s, PartitionsCount: *req.PartitionsCount, Name: *req.Name, Options: opts})
	if err != nil {
		return err
	}
	var d wire.TopicDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, topicDetailsJSON(&d))
}

func (c *call) updateTopic() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	var req UpdateTopicRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil {
		return errUnprocessable("name is required")
	}
	if !validName(*req.Name) {
		return codeError(wire.ErrInvalidTopicName.Code)
	}
	for k := range req.Options {
		// Only the catalog's updatable keys (compression_algorithm,
		// message_expiry, max_topic_size, local_retention_size,
		// local_retention_age); the others are create-only.
		if spec, ok := wire.LookupOption(wire.OptionScopeTopic, k); !ok || !spec.Updatable {
			return codeError(wire.ErrUnsupportedOptionKey.Code)
		}
	}
	opts := stringOptions(req.Options)
	if req.CompressionAlgorithm != nil {
		if _, err := wire.ParseCompressionAlgorithm(*req.CompressionAlgorithm); err != nil {
			return errUnprocessable("compression_algorithm must be none or gzip")
		}
		opts = append(opts, wire.StringOption(wire.TopicOptCompressionAlgorithm, *req.CompressionAlgorithm))
	}
	if req.MessageExpiry != nil {
		opts = append(opts, wire.Uint64Option(wire.TopicOptMessageExpiry, *req.MessageExpiry))
	}
	if req.MaxTopicSize != nil {
		opts = append(opts, wire.Uint64Option(wire.TopicOptMaxTopicSize, *req.MaxTopicSize))
	}
	if _, err := c.write(wire.CmdUpdateTopic, &wire.UpdateTopic{StreamID: s, TopicID: t, Name: *req.Name, Options: opts}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) deleteTopic() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdDeleteTopic, &wire.DeleteTopic{StreamID: s, TopicID: t}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) purgeTopic() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdPurgeTopic, &wire.PurgeTopic{StreamID: s, TopicID: t}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) createPartitions() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	var req CreatePartitionsRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.PartitionsCount == nil {
		return errUnprocessable("partitions_count is required")
	}
	if *req.PartitionsCount < 1 || *req.PartitionsCount > maxPartitions {
		return codeError(wire.ErrTooManyPartitions.Code)
	}
	if _, err := c.write(wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: s, TopicID: t, PartitionsCount: *req.PartitionsCount}); err != nil {
		return err
	}
	return c.empty(http.StatusOK)
}

func (c *call) deletePartitions() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	n, present, err := c.queryU64("partitions_count", 0, 32)
	if err != nil {
		return err
	}
	if !present {
		return errBadRequest("partitions_count is required")
	}
	if n < 1 || n > maxPartitions {
		return codeError(wire.ErrTooManyPartitions.Code)
	}
	if _, err := c.write(wire.CmdDeletePartitions, &wire.DeletePartitions{StreamID: s, TopicID: t, PartitionsCount: uint32(n)}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) deleteSegments() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	p, err := c.u32Path("partition_id")
	if err != nil {
		return err
	}
	n, present, err := c.queryU64("segments_count", 0, 32)
	if err != nil {
		return err
	}
	if !present {
		return errBadRequest("segments_count is required")
	}
	req := &wire.DeleteSegments{StreamID: s, TopicID: t, PartitionID: p, SegmentsCount: uint32(n)}
	if _, err := c.write(wire.CmdDeleteSegments, req); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) getGroups() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: s, TopicID: t})
	if err != nil {
		return err
	}
	var gs wire.ConsumerGroups
	if err := decodeReply(out.payload, &gs); err != nil {
		return err
	}
	list := make([]ConsumerGroup, 0, len(gs))
	for i := range gs {
		list = append(list, groupJSON(&gs[i]))
	}
	return c.json(http.StatusOK, list)
}

func (c *call) getGroup() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	g, err := c.ident("group_id")
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetConsumerGroup, &wire.GetConsumerGroup{StreamID: s, TopicID: t, GroupID: g})
	if err != nil {
		return err
	}
	if len(out.payload) == 0 {
		return codeError(wire.ErrConsumerGroupIDNotFound.Code)
	}
	var d wire.GroupDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, groupDetailsJSON(&d))
}

func (c *call) createGroup() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	var req CreateGroupRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Name == nil {
		return errUnprocessable("name is required")
	}
	if !validName(*req.Name) {
		return codeError(wire.ErrInvalidConsumerGroupName.Code)
	}
	out, err := c.write(wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: s, TopicID: t, Name: *req.Name})
	if err != nil {
		return err
	}
	var d wire.GroupDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	return c.json(http.StatusOK, groupDetailsJSON(&d))
}

func (c *call) deleteGroup() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	g, err := c.ident("group_id")
	if err != nil {
		return err
	}
	if _, err := c.write(wire.CmdDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: s, TopicID: t, GroupID: g}); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}
