package wire

// Topic request bodies (commands.md, "Topics") and the TopicHeader /
// TopicDetails reply structures ("Shared reply structures").

// MaxPartitionsPerRequest is the most partitions one CREATE_TOPIC,
// CREATE_PARTITIONS or DELETE_PARTITIONS may name (semantics.md §3.1);
// more is TooManyPartitions (2015).
const MaxPartitionsPerRequest = 1000

// GetTopic is the body of GET_TOPIC (code 300, operation 2):
// [stream_id][topic_id]. The reply is TopicDetails, or an empty payload
// when the topic does not exist (see DecodeIfPresent).
type GetTopic struct {
	StreamID Identifier
	TopicID  Identifier
}

// AppendTo appends the body.
func (g *GetTopic) AppendTo(dst []byte) []byte {
	return g.TopicID.AppendTo(g.StreamID.AppendTo(dst))
}

// Decode decodes the identifiers and ignores trailing bytes.
func (g *GetTopic) Decode(src []byte) error {
	return decodeIdentifiers(src, &g.StreamID, &g.TopicID)
}

// Validate checks the identifiers can be encoded.
func (g *GetTopic) Validate() error { return validateIdentifiers(g.StreamID, g.TopicID) }

// GetTopics is the body of GET_TOPICS (code 301, operation 2):
// [stream_id]. The reply is Topics (count-prefixed); a missing stream
// yields count 0.
type GetTopics struct {
	StreamID Identifier
}

// AppendTo appends the body.
func (g *GetTopics) AppendTo(dst []byte) []byte { return g.StreamID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes.
func (g *GetTopics) Decode(src []byte) error { return decodeIdentifiers(src, &g.StreamID) }

// Validate checks the identifier can be encoded.
func (g *GetTopics) Validate() error { return g.StreamID.Validate() }

// CreateTopic is the body of CREATE_TOPIC (code 302, operation 132, reply
// operation 64): [stream_id][partitions_count u32][name Name][options to
// end]. Every topic setting is an option (NewTopicOptions checks them).
// The reply payload is the new topic's TopicDetails.
type CreateTopic struct {
	StreamID        Identifier
	PartitionsCount uint32
	Name            string
	Options         Options
}

// AppendTo appends the body.
func (c *CreateTopic) AppendTo(dst []byte) []byte {
	dst = c.StreamID.AppendTo(dst)
	dst = appendU32(dst, c.PartitionsCount)
	dst = appendName(dst, c.Name)
	return c.Options.AppendTo(dst)
}

// Decode decodes a whole body. It applies only the wire rules; the
// partitions bound and the option catalog are Validate's and
// NewTopicOptions' concern. The options run to the end of the body (no
// trailing bytes by definition).
func (c *CreateTopic) Decode(src []byte) error {
	r := newReader(src)
	c.StreamID = r.identifier()
	c.PartitionsCount = r.u32()
	c.Name = r.name()
	c.Options = r.optionsToEnd()
	return r.finish()
}

// Validate checks the body: identifier, name (ErrInvalidTopicName), the
// structural option rules, and partitions_count ≤ 1000
// (ErrTooManyPartitions; 0 is a legal topic without partitions).
func (c *CreateTopic) Validate() error {
	if err := c.StreamID.Validate(); err != nil {
		return err
	}
	if !validName(c.Name) {
		return ErrInvalidTopicName
	}
	if c.PartitionsCount > MaxPartitionsPerRequest {
		return ErrTooManyPartitions
	}
	return c.Options.Validate()
}

// DeleteTopic is the body of DELETE_TOPIC (code 303, operation 134):
// [stream_id][topic_id]. Reply: empty payload.
type DeleteTopic struct {
	StreamID Identifier
	TopicID  Identifier
}

// AppendTo appends the body.
func (d *DeleteTopic) AppendTo(dst []byte) []byte {
	return d.TopicID.AppendTo(d.StreamID.AppendTo(dst))
}

// Decode decodes the identifiers and ignores trailing bytes.
func (d *DeleteTopic) Decode(src []byte) error {
	return decodeIdentifiers(src, &d.StreamID, &d.TopicID)
}

// Validate checks the identifiers can be encoded.
func (d *DeleteTopic) Validate() error { return validateIdentifiers(d.StreamID, d.TopicID) }

// UpdateTopic is the body of UPDATE_TOPIC (code 304, operation 133):
// [stream_id][topic_id][name Name][options to end]. Only the updatable
// keys are allowed (ValidateTopicUpdate, TopicOptions.Update); absent keys
// keep their values. Reply: empty payload.
type UpdateTopic struct {
	StreamID Identifier
	TopicID  Identifier
	Name     string
	Options  Options
}

// AppendTo appends the body.
func (u *UpdateTopic) AppendTo(dst []byte) []byte {
	dst = u.StreamID.AppendTo(dst)
	dst = u.TopicID.AppendTo(dst)
	dst = appendName(dst, u.Name)
	return u.Options.AppendTo(dst)
}

// Decode decodes a whole body; the options run to the end (no trailing
// bytes by definition).
func (u *UpdateTopic) Decode(src []byte) error {
	r := newReader(src)
	u.StreamID = r.identifier()
	u.TopicID = r.identifier()
	u.Name = r.name()
	u.Options = r.optionsToEnd()
	return r.finish()
}

// Validate checks the body can be encoded.
func (u *UpdateTopic) Validate() error {
	if err := validateIdentifiers(u.StreamID, u.TopicID); err != nil {
		return err
	}
	if !validName(u.Name) {
		return ErrInvalidTopicName
	}
	return u.Options.Validate()
}

// PurgeTopic is the body of PURGE_TOPIC (code 305, operation 135):
// [stream_id][topic_id]. Reply: empty payload.
type PurgeTopic struct {
	StreamID Identifier
	TopicID  Identifier
}

// AppendTo appends the body.
func (p *PurgeTopic) AppendTo(dst []byte) []byte {
	return p.TopicID.AppendTo(p.StreamID.AppendTo(dst))
}

// Decode decodes the identifiers and ignores trailing bytes.
func (p *PurgeTopic) Decode(src []byte) error {
	return decodeIdentifiers(src, &p.StreamID, &p.TopicID)
}

// Validate checks the identifiers can be encoded.
func (p *PurgeTopic) Validate() error { return validateIdentifiers(p.StreamID, p.TopicID) }

// minTopicLen is the smallest TopicHeader: 50 fixed bytes, a 1-byte name
// and two 4-byte option lengths.
const minTopicLen = 50 + 1 + 4 + 4

// Topic is the TopicHeader reply structure (50 + N + 4 + O1 + 4 + O2
// bytes): [id u32][created_at u64][partitions_count u32]
// [message_expiry u64][compression_algorithm u8][max_topic_size u64]
// [size_bytes u64][messages_count u64][name Name]
// [explicit_options_len u32][explicit options]
// [derived_options_len u32][derived options].
//
// MessageExpiry, CompressionAlgorithm and MaxTopicSize are the effective
// values (0 = server default, u64::MAX = never / unlimited). Decode keeps
// any compression byte as sent (forward compatibility); only option values
// are restricted to the defined codes.
type Topic struct {
	ID                   uint32
	CreatedAt            uint64 // microseconds since the Unix epoch
	PartitionsCount      uint32
	MessageExpiry        uint64 // microseconds
	CompressionAlgorithm CompressionAlgorithm
	MaxTopicSize         uint64 // bytes
	SizeBytes            uint64
	MessagesCount        uint64
	Name                 string
	// Options are the explicit options: keys the client sent at create or
	// later updated.
	Options Options
	// DerivedOptions are the keys the server filled with defaults at create.
	DerivedOptions Options
}

// AppendTo appends the structure.
func (t *Topic) AppendTo(dst []byte) []byte { return t.appendWithCount(dst, t.PartitionsCount) }

func (t *Topic) appendWithCount(dst []byte, partitions uint32) []byte {
	dst = appendU32(dst, t.ID)
	dst = appendU64(dst, t.CreatedAt)
	dst = appendU32(dst, partitions)
	dst = appendU64(dst, t.MessageExpiry)
	dst = append(dst, byte(t.CompressionAlgorithm))
	dst = appendU64(dst, t.MaxTopicSize)
	dst = appendU64(dst, t.SizeBytes)
	dst = appendU64(dst, t.MessagesCount)
	dst = appendName(dst, t.Name)
	dst = appendOptionsBlock(dst, t.Options)
	return appendOptionsBlock(dst, t.DerivedOptions)
}

// Decode decodes exactly one Topic.
func (t *Topic) Decode(src []byte) error {
	r := newReader(src)
	t.read(&r)
	return r.finish()
}

func (t *Topic) read(r *reader) {
	t.ID = r.u32()
	t.CreatedAt = r.u64()
	t.PartitionsCount = r.u32()
	t.MessageExpiry = r.u64()
	t.CompressionAlgorithm = CompressionAlgorithm(r.u8())
	t.MaxTopicSize = r.u64()
	t.SizeBytes = r.u64()
	t.MessagesCount = r.u64()
	t.Name = r.name()
	t.Options = r.optionsBlock()
	t.DerivedOptions = r.optionsBlock()
}

// readTopics reads count topics; count is checked against the bytes left
// before the slice is allocated.
func readTopics(r *reader, count uint32) []Topic {
	if r.err != nil || count == 0 {
		return nil
	}
	if uint64(count)*minTopicLen > uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
		return nil
	}
	out := make([]Topic, count)
	for i := range out {
		out[i].read(r)
	}
	return out
}

// Topics is the plain reply payload of GET_TOPICS:
// [topics_count u32][Topic × count] — the only list reply with a count
// prefix. A missing stream is count 0.
type Topics []Topic

// AppendTo appends the payload.
func (t *Topics) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(*t)))
	for i := range *t {
		dst = (*t)[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload.
func (t *Topics) Decode(src []byte) error {
	r := newReader(src)
	n := r.u32()
	*t = readTopics(&r, n)
	return r.finish()
}

// TopicDetails is the reply payload of GET_TOPIC and CREATE_TOPIC:
// [Topic][PartitionInfo × partitions_count]. AppendTo writes
// len(Partitions) as partitions_count (the embedded PartitionsCount is
// ignored) and Decode sets PartitionsCount to the number read. The Rust
// decoder is count-driven and the Go decoder reads to the end, so nothing
// may follow the partitions: Decode is count-driven and rejects trailing
// bytes, which satisfies both.
//
// GET_TOPIC answers an unknown topic with an empty payload (see
// DecodeIfPresent).
type TopicDetails struct {
	Topic
	Partitions []PartitionInfo
}

// AppendTo appends the payload.
func (t *TopicDetails) AppendTo(dst []byte) []byte {
	dst = t.Topic.appendWithCount(dst, uint32(len(t.Partitions)))
	for i := range t.Partitions {
		dst = t.Partitions[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload.
func (t *TopicDetails) Decode(src []byte) error {
	r := newReader(src)
	t.Topic.read(&r)
	t.Partitions = readPartitions(&r, t.PartitionsCount)
	return r.finish()
}
