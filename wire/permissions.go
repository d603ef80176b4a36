package wire

import "slices"

// Limits and sizes of the binary permissions layout (encodings.md,
// "Permissions (binary)").
const (
	// MaxPermissionStreams bounds the per-stream entries of one permission
	// set. Stream ids are below 2^20 (semantics.md 3.1), so no more distinct
	// entries can name a stream that may exist.
	MaxPermissionStreams = 1 << 20
	// MaxPermissionTopics bounds the per-topic entries inside one stream
	// entry: a stream holds fewer than 4096 topics (semantics.md 3.1).
	MaxPermissionTopics = 4096

	// permGlobalLen is the 10 global booleans.
	permGlobalLen = 10
	// permStreamEntryLen is [stream_id u32] + 6 booleans + [has_topics u8]
	// + [has_next_stream u8].
	permStreamEntryLen = 12
	// permTopicEntryLen is [topic_id u32] + 4 booleans + [has_next_topic u8].
	permTopicEntryLen = 9
)

// GlobalPermissions are the ten server-wide permission booleans, in wire
// order (semantics.md 2.3).
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// StreamPermissions is one per-stream entry: the stream's numeric id, six
// booleans in wire order and optional per-topic entries.
type StreamPermissions struct {
	StreamID     uint32
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	// Topics are the per-topic entries in wire order; empty encodes as
	// has_topics = 0.
	Topics []TopicPermissions
}

// TopicPermissions is one per-topic entry inside a stream entry: the
// topic's numeric id and four booleans in wire order.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// Permissions is a user's permission set as it travels in CreateUser,
// UpdatePermissions and UserDetails (encodings.md, "Permissions (binary)"):
//
//	[10 global booleans][has_streams u8]
//	per stream: [stream_id u32][6 booleans][has_topics u8]
//	            per topic: [topic_id u32][4 booleans][has_next_topic u8]
//	            [has_next_stream u8]
//
// Entries keep their wire order: the Rust encoder sorts them by id, the Go
// SDK writes them in map order, and both are accepted. An empty Streams (or
// Topics) encodes as a zero has_streams (has_topics) flag; the layout cannot
// say "present but empty".
//
// Decoding choices: a permission boolean is true for any non-zero byte, as
// in the reference (Rust) decoder; encoders write 0/1. The structural flags
// (has_streams, has_topics, has_next_*) must be 0 or 1. A stream id repeated
// in one set, or a topic id repeated in one stream entry, is refused: the
// official SDKs encode maps and cannot produce one, and the reference would
// silently keep the last entry.
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// EncodedLen is the permissions' length on the wire:
// 11 + Σ_streams (12 + 9·topics).
func (p *Permissions) EncodedLen() int {
	n := permGlobalLen + 1
	for i := range p.Streams {
		n += permStreamEntryLen + permTopicEntryLen*len(p.Streams[i].Topics)
	}
	return n
}

// Validate checks that p can be encoded and decoded back: entry counts
// within MaxPermissionStreams / MaxPermissionTopics and no repeated stream
// id, nor topic id within a stream. It returns ErrInvalidCommand otherwise.
func (p *Permissions) Validate() error {
	if len(p.Streams) > MaxPermissionStreams {
		return ErrInvalidCommand
	}
	ids := make([]uint32, 0, len(p.Streams))
	for i := range p.Streams {
		s := &p.Streams[i]
		if len(s.Topics) > MaxPermissionTopics {
			return ErrInvalidCommand
		}
		ids = append(ids, s.StreamID)
		tids := make([]uint32, 0, len(s.Topics))
		for j := range s.Topics {
			tids = append(tids, s.Topics[j].TopicID)
		}
		if hasRepeatedID(tids) {
			return ErrInvalidCommand
		}
	}
	if hasRepeatedID(ids) {
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the permissions. Call Validate first to refuse sets the
// decoder would reject.
func (p *Permissions) AppendTo(dst []byte) []byte {
	g := &p.Global
	dst = append(dst,
		boolByte(g.ManageServers), boolByte(g.ReadServers),
		boolByte(g.ManageUsers), boolByte(g.ReadUsers),
		boolByte(g.ManageStreams), boolByte(g.ReadStreams),
		boolByte(g.ManageTopics), boolByte(g.ReadTopics),
		boolByte(g.PollMessages), boolByte(g.SendMessages),
		boolByte(len(p.Streams) > 0))
	for i := range p.Streams {
		s := &p.Streams[i]
		dst = appendU32(dst, s.StreamID)
		dst = append(dst,
			boolByte(s.ManageStream), boolByte(s.ReadStream),
			boolByte(s.ManageTopics), boolByte(s.ReadTopics),
			boolByte(s.PollMessages), boolByte(s.SendMessages),
			boolByte(len(s.Topics) > 0))
		for j := range s.Topics {
			t := &s.Topics[j]
			dst = appendU32(dst, t.TopicID)
			dst = append(dst,
				boolByte(t.ManageTopic), boolByte(t.ReadTopic),
				boolByte(t.PollMessages), boolByte(t.SendMessages),
				boolByte(j+1 < len(s.Topics)))
		}
		dst = append(dst, boolByte(i+1 < len(p.Streams)))
	}
	return dst
}

// Decode decodes exactly one permission set from src (no trailing bytes).
func (p *Permissions) Decode(src []byte) error {
	r := newReader(src)
	p.read(&r)
	if err := r.finish(); err != nil {
		*p = Permissions{}
		return err
	}
	return nil
}

// read decodes a permission set. Every loop iteration consumes at least
// permTopicEntryLen bytes, so the loops are bounded by the input; the
// count limits refuse sets no server could hold.
func (p *Permissions) read(r *reader) {
	*p = Permissions{}
	g := r.take(permGlobalLen)
	if g == nil {
		return
	}
	p.Global = GlobalPermissions{
		ManageServers: g[0] != 0, ReadServers: g[1] != 0,
		ManageUsers: g[2] != 0, ReadUsers: g[3] != 0,
		ManageStreams: g[4] != 0, ReadStreams: g[5] != 0,
		ManageTopics: g[6] != 0, ReadTopics: g[7] != 0,
		PollMessages: g[8] != 0, SendMessages: g[9] != 0,
	}
	more := r.flag()
	for more && r.err == nil {
		if len(p.Streams) == MaxPermissionStreams {
			r.fail(ErrInvalidCommand)
			return
		}
		id := r.u32()
		f := r.take(7)
		if f == nil {
			return
		}
		s := StreamPermissions{
			StreamID:     id,
			ManageStream: f[0] != 0, ReadStream: f[1] != 0,
			ManageTopics: f[2] != 0, ReadTopics: f[3] != 0,
			PollMessages: f[4] != 0, SendMessages: f[5] != 0,
		}
		if f[6] > 1 {
			r.fail(ErrInvalidCommand)
			return
		}
		if f[6] == 1 {
			s.Topics = readTopicPermissions(r)
		}
		p.Streams = append(p.Streams, s)
		more = r.flag()
	}
	if r.err != nil {
		return
	}
	ids := make([]uint32, len(p.Streams))
	for i := range p.Streams {
		ids[i] = p.Streams[i].StreamID
	}
	if hasRepeatedID(ids) {
		r.fail(ErrInvalidCommand)
	}
}

// readTopicPermissions reads the topic entries of one stream entry, after a
// has_topics flag of 1.
func readTopicPermissions(r *reader) []TopicPermissions {
	var topics []TopicPermissions
	for more := true; more && r.err == nil; {
		if len(topics) == MaxPermissionTopics {
			r.fail(ErrInvalidCommand)
			return nil
		}
		id := r.u32()
		f := r.take(5)
		if f == nil {
			return nil
		}
		if f[4] > 1 {
			r.fail(ErrInvalidCommand)
			return nil
		}
		topics = append(topics, TopicPermissions{
			TopicID:     id,
			ManageTopic: f[0] != 0, ReadTopic: f[1] != 0,
			PollMessages: f[2] != 0, SendMessages: f[3] != 0,
		})
		more = f[4] == 1
	}
	ids := make([]uint32, len(topics))
	for i := range topics {
		ids[i] = topics[i].TopicID
	}
	if hasRepeatedID(ids) {
		r.fail(ErrInvalidCommand)
	}
	return topics
}

// appendPermissionsBlock appends [permissions_len u32][permissions], the
// form behind a has_permissions flag of 1.
func appendPermissionsBlock(dst []byte, p *Permissions) []byte {
	at := len(dst)
	dst = appendU32(dst, 0)
	dst = p.AppendTo(dst)
	n := uint32(len(dst) - at - 4)
	dst[at], dst[at+1], dst[at+2], dst[at+3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return dst
}

// permissionsBlock reads [permissions_len u32][permissions]; the length
// must equal the decoded size exactly (commands.md §33).
func (r *reader) permissionsBlock() *Permissions {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
		return nil
	}
	b := r.take(int(n))
	if r.err != nil {
		return nil
	}
	p := new(Permissions)
	if err := p.Decode(b); err != nil {
		r.fail(err)
		return nil
	}
	return p
}

// hasRepeatedID reports whether ids holds a value twice. Ids in strictly
// ascending order (the Rust encoder's order) are checked without sorting;
// otherwise ids is sorted in place.
func hasRepeatedID(ids []uint32) bool {
	ascending := true
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			ascending = false
			break
		}
	}
	if ascending {
		return false
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return true
		}
	}
	return false
}
