package wire

// Stream request bodies (commands.md, "Streams") and the Stream /
// StreamDetails reply structures ("Shared reply structures").
//
// GET_STREAMS (201) has an empty request body: use Empty.

// GetStream is the body of GET_STREAM (code 200, operation 2):
// [stream_id Identifier]. The reply is StreamDetails, or an empty payload
// when the stream does not exist (the SDK maps that to 1009); see
// DecodeIfPresent.
type GetStream struct {
	StreamID Identifier
}

// AppendTo appends the body.
func (g *GetStream) AppendTo(dst []byte) []byte { return g.StreamID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes (a request
// body: the reference decodes a prefix).
func (g *GetStream) Decode(src []byte) error { return decodeIdentifiers(src, &g.StreamID) }

// Validate checks the identifier can be encoded (ErrInvalidIdentifier).
func (g *GetStream) Validate() error { return g.StreamID.Validate() }

// CreateStream is the body of CREATE_STREAM (code 202, operation 128):
// [name Name][options to end]. The stream catalog is empty, so a server
// refuses any option key with 4041 (ValidateOptionKeys). The reply payload
// is the new stream's StreamDetails.
type CreateStream struct {
	Name    string
	Options Options
}

// AppendTo appends the body.
func (c *CreateStream) AppendTo(dst []byte) []byte {
	dst = appendName(dst, c.Name)
	return c.Options.AppendTo(dst)
}

// Decode decodes a whole body; option-block violations are reported as
// Options.Decode reports them. The options run to the end of the body,
// so there are no trailing bytes: bytes after the name that do not form
// a valid block are a decode error, as in the reference.
func (c *CreateStream) Decode(src []byte) error {
	r := newReader(src)
	c.Name = r.name()
	c.Options = r.optionsToEnd()
	return r.finish()
}

// Validate checks the body can be encoded: a 1..255-byte UTF-8 name
// (ErrInvalidStreamName) and a structurally valid options block.
func (c *CreateStream) Validate() error {
	if !validName(c.Name) {
		return ErrInvalidStreamName
	}
	return c.Options.Validate()
}

// DeleteStream is the body of DELETE_STREAM (code 203, operation 130):
// [stream_id Identifier]. Reply: empty payload.
type DeleteStream struct {
	StreamID Identifier
}

// AppendTo appends the body.
func (d *DeleteStream) AppendTo(dst []byte) []byte { return d.StreamID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes.
func (d *DeleteStream) Decode(src []byte) error { return decodeIdentifiers(src, &d.StreamID) }

// Validate checks the identifier can be encoded.
func (d *DeleteStream) Validate() error { return d.StreamID.Validate() }

// UpdateStream is the body of UPDATE_STREAM (code 204, operation 129):
// [stream_id Identifier][name Name][options to end]. Reply: empty payload.
type UpdateStream struct {
	StreamID Identifier
	Name     string
	Options  Options
}

// AppendTo appends the body.
func (u *UpdateStream) AppendTo(dst []byte) []byte {
	dst = u.StreamID.AppendTo(dst)
	dst = appendName(dst, u.Name)
	return u.Options.AppendTo(dst)
}

// Decode decodes a whole body; the options run to the end (no trailing
// bytes by definition).
func (u *UpdateStream) Decode(src []byte) error {
	r := newReader(src)
	u.StreamID = r.identifier()
	u.Name = r.name()
	u.Options = r.optionsToEnd()
	return r.finish()
}

// Validate checks the body can be encoded.
func (u *UpdateStream) Validate() error {
	if err := u.StreamID.Validate(); err != nil {
		return err
	}
	if !validName(u.Name) {
		return ErrInvalidStreamName
	}
	return u.Options.Validate()
}

// PurgeStream is the body of PURGE_STREAM (code 205, operation 131):
// [stream_id Identifier]. Reply: empty payload.
type PurgeStream struct {
	StreamID Identifier
}

// AppendTo appends the body.
func (p *PurgeStream) AppendTo(dst []byte) []byte { return p.StreamID.AppendTo(dst) }

// Decode decodes the identifier and ignores trailing bytes.
func (p *PurgeStream) Decode(src []byte) error { return decodeIdentifiers(src, &p.StreamID) }

// Validate checks the identifier can be encoded.
func (p *PurgeStream) Validate() error { return p.StreamID.Validate() }

// decodeIdentifiers decodes a request body made only of identifiers, in
// order, and ignores any bytes after them (the reference decodes a
// prefix).
func decodeIdentifiers(src []byte, ids ...*Identifier) error {
	r := newReader(src)
	for _, id := range ids {
		*id = r.identifier()
	}
	return r.done()
}

// validateIdentifiers validates identifiers in order.
func validateIdentifiers(ids ...Identifier) error {
	for _, id := range ids {
		if err := id.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Stream is the StreamHeader reply structure (33 + N + 4 + O bytes):
// [id u32][created_at u64 µs][topics_count u32][size_bytes u64]
// [messages_count u64][name Name][options_len u32][options]. Streams have
// no catalog keys, so Options is normally empty.
type Stream struct {
	ID            uint32
	CreatedAt     uint64 // microseconds since the Unix epoch
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	Options       Options
}

// AppendTo appends the structure.
func (s *Stream) AppendTo(dst []byte) []byte { return s.appendWithCount(dst, s.TopicsCount) }

func (s *Stream) appendWithCount(dst []byte, topics uint32) []byte {
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, topics)
	dst = appendU64(dst, s.SizeBytes)
	dst = appendU64(dst, s.MessagesCount)
	dst = appendName(dst, s.Name)
	return appendOptionsBlock(dst, s.Options)
}

// Decode decodes exactly one Stream.
func (s *Stream) Decode(src []byte) error {
	r := newReader(src)
	s.read(&r)
	return r.finish()
}

func (s *Stream) read(r *reader) {
	s.ID = r.u32()
	s.CreatedAt = r.u64()
	s.TopicsCount = r.u32()
	s.SizeBytes = r.u64()
	s.MessagesCount = r.u64()
	s.Name = r.name()
	s.Options = r.optionsBlock()
}

// StreamDetails is the reply payload of GET_STREAM and CREATE_STREAM:
// [Stream][Topic × topics_count]. The topics are count-driven by
// topics_count, so AppendTo writes len(Topics) as topics_count (the
// embedded TopicsCount is ignored) and Decode sets TopicsCount to the
// number of topics read.
//
// GET_STREAM answers an unknown stream with an empty payload, which Decode
// refuses (ErrInvalidCommand): use DecodeIfPresent to tell the two apart.
type StreamDetails struct {
	Stream
	Topics []Topic
}

// AppendTo appends the payload.
func (s *StreamDetails) AppendTo(dst []byte) []byte {
	dst = s.Stream.appendWithCount(dst, uint32(len(s.Topics)))
	for i := range s.Topics {
		dst = s.Topics[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload. topics_count is checked against the
// bytes present before the topic slice is allocated.
func (s *StreamDetails) Decode(src []byte) error {
	r := newReader(src)
	s.Stream.read(&r)
	s.Topics = readTopics(&r, s.TopicsCount)
	return r.finish()
}

// Streams is the plain reply payload of GET_STREAMS: Stream* until the end
// of the payload, no count; an empty payload is an empty list.
type Streams []Stream

// AppendTo appends the payload.
func (s *Streams) AppendTo(dst []byte) []byte {
	for i := range *s {
		dst = (*s)[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes a whole payload.
func (s *Streams) Decode(src []byte) error {
	r := newReader(src)
	var out Streams
	for r.err == nil && r.remaining() > 0 {
		var st Stream
		st.read(&r)
		out = append(out, st)
	}
	*s = out
	return r.finish()
}

// DecodeIfPresent decodes a plain "X or empty" reply payload (GET_STREAM,
// GET_TOPIC, GET_CONSUMER_GROUP, SYNC_CONSUMER_GROUP, ...): an empty
// payload means "not found" and returns false without touching b; anything
// else must decode into b. The caller maps false to its error (the SDKs
// use 1009 for a stream, 2010 for a topic, 5000 for a group and 5006 for a
// sync by a non-member).
func DecodeIfPresent(payload []byte, b Body) (bool, error) {
	if len(payload) == 0 {
		return false, nil
	}
	if err := b.Decode(payload); err != nil {
		return false, err
	}
	return true, nil
}
