package cli

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// The JSON shapes of --output json. Field names are snake_case like the
// protocol documentation; times are RFC 3339 in UTC; "never" and
// "unlimited" (0 and u64::MAX on the wire) are null.

type streamView struct {
	ID            uint32      `json:"id"`
	Name          string      `json:"name"`
	CreatedAt     time.Time   `json:"created_at"`
	TopicsCount   uint32      `json:"topics_count"`
	MessagesCount uint64      `json:"messages_count"`
	SizeBytes     uint64      `json:"size_bytes"`
	Topics        []topicView `json:"topics,omitempty"`
}

func newStreamView(s *wire.Stream) streamView {
	return streamView{ID: s.ID, Name: s.Name, CreatedAt: microsTime(s.CreatedAt), TopicsCount: s.TopicsCount, MessagesCount: s.MessagesCount, SizeBytes: s.SizeBytes}
}

type topicView struct {
	ID                   uint32          `json:"id"`
	Name                 string          `json:"name"`
	CreatedAt            time.Time       `json:"created_at"`
	PartitionsCount      uint32          `json:"partitions_count"`
	MessagesCount        uint64          `json:"messages_count"`
	SizeBytes            uint64          `json:"size_bytes"`
	MessageExpiryMicros  *uint64         `json:"message_expiry_us"`
	MaxTopicSize         *uint64         `json:"max_topic_size"`
	CompressionAlgorithm string          `json:"compression_algorithm"`
	Options              map[string]any  `json:"options,omitempty"`
	Partitions           []partitionView `json:"partitions,omitempty"`
}

func newTopicView(t *wire.Topic) topicView {
	v := topicView{
		ID: t.ID, Name: t.Name, CreatedAt: microsTime(t.CreatedAt), PartitionsCount: t.PartitionsCount,
		MessagesCount: t.MessagesCount, SizeBytes: t.SizeBytes,
		MessageExpiryMicros: optionalU64(t.MessageExpiry), MaxTopicSize: optionalU64(t.MaxTopicSize),
		CompressionAlgorithm: t.CompressionAlgorithm.String(),
	}
	if len(t.Options)+len(t.DerivedOptions) > 0 {
		v.Options = map[string]any{}
		for _, o := range t.DerivedOptions {
			v.Options[o.Key] = optionValue(o.Kind, o.Value)
		}
		for _, o := range t.Options {
			v.Options[o.Key] = optionValue(o.Kind, o.Value)
		}
	}
	return v
}

type partitionView struct {
	ID            uint32    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
	SegmentsCount uint32    `json:"segments_count"`
	CurrentOffset uint64    `json:"current_offset"`
	MessagesCount uint64    `json:"messages_count"`
	SizeBytes     uint64    `json:"size_bytes"`
	// The tier fields are set by `topic get` when the server reports them
	// (tiered storage on, tiers.go), with the HTTP API's names.
	LocalSizeBytes       *uint64 `json:"local_size_bytes,omitempty"`
	RemoteSizeBytes      *uint64 `json:"remote_size_bytes,omitempty"`
	RemoteOnlySizeBytes  *uint64 `json:"remote_only_size_bytes,omitempty"`
	PendingSizeBytes     *uint64 `json:"pending_size_bytes,omitempty"`
	RemoteSegmentsCount  *uint32 `json:"remote_segments_count,omitempty"`
	PendingSegmentsCount *uint32 `json:"pending_segments_count,omitempty"`
}

func newPartitionView(p *wire.PartitionInfo) partitionView {
	return partitionView{ID: p.ID, CreatedAt: microsTime(p.CreatedAt), SegmentsCount: p.SegmentsCount, CurrentOffset: p.CurrentOffset, MessagesCount: p.MessagesCount, SizeBytes: p.SizeBytes}
}

type groupView struct {
	ID              uint32       `json:"id"`
	Name            string       `json:"name"`
	PartitionsCount uint32       `json:"partitions_count"`
	MembersCount    uint32       `json:"members_count"`
	Members         []memberView `json:"members,omitempty"`
	// Offsets and TotalLag are filled by `group get` only.
	Offsets  []groupOffsetView `json:"offsets,omitempty"`
	TotalLag *uint64           `json:"total_lag,omitempty"`
}

type memberView struct {
	ID         uint32   `json:"id"`
	Partitions []uint32 `json:"partitions"`
}

func newGroupView(g *wire.ConsumerGroup) groupView {
	return groupView{ID: g.ID, Name: g.Name, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount}
}

type userView struct {
	ID          uint32           `json:"id"`
	Username    string           `json:"username"`
	Status      string           `json:"status"`
	CreatedAt   time.Time        `json:"created_at"`
	Permissions *permissionsView `json:"permissions,omitempty"`
}

func newUserView(u *wire.User) userView {
	return userView{ID: u.ID, Username: u.Username, Status: u.Status.String(), CreatedAt: microsTime(u.CreatedAt)}
}

type permissionsView struct {
	Global  []string               `json:"global"`
	Streams []streamPermissionView `json:"streams,omitempty"`
}

type streamPermissionView struct {
	StreamID    uint32                `json:"stream_id"`
	Permissions []string              `json:"permissions"`
	Topics      []topicPermissionView `json:"topics,omitempty"`
}

type topicPermissionView struct {
	TopicID     uint32   `json:"topic_id"`
	Permissions []string `json:"permissions"`
}

func newPermissionsView(p *wire.Permissions) *permissionsView {
	if p == nil {
		return nil
	}
	v := &permissionsView{Global: names(globalPermissionFields(&p.Global))}
	for i := range p.Streams {
		s := &p.Streams[i]
		sv := streamPermissionView{StreamID: s.StreamID, Permissions: names(streamPermissionFields(s))}
		for j := range s.Topics {
			t := &s.Topics[j]
			sv.Topics = append(sv.Topics, topicPermissionView{TopicID: t.TopicID, Permissions: names(topicPermissionFields(t))})
		}
		v.Streams = append(v.Streams, sv)
	}
	return v
}

type clientView struct {
	ClientID            uint32          `json:"client_id"`
	UserID              *uint32         `json:"user_id"`
	Transport           string          `json:"transport"`
	Address             string          `json:"address"`
	ConsumerGroupsCount uint32          `json:"consumer_groups_count"`
	ConsumerGroups      []clientGroupVw `json:"consumer_groups,omitempty"`
}

type clientGroupVw struct {
	StreamID uint32 `json:"stream_id"`
	TopicID  uint32 `json:"topic_id"`
	GroupID  uint32 `json:"group_id"`
}

// userID maps u32::MAX (not logged in) to nil.
func userID(id uint32) *uint32 {
	if id == math.MaxUint32 {
		return nil
	}
	return &id
}

func fmtUserID(id uint32) string {
	if id == math.MaxUint32 {
		return "-"
	}
	return strconv.FormatUint(uint64(id), 10)
}

func newClientView(c *wire.Client) clientView {
	return clientView{ClientID: c.ClientID, UserID: userID(c.UserID), Transport: c.Transport.String(), Address: c.Address, ConsumerGroupsCount: c.ConsumerGroupsCount}
}

func newClientDetailsView(d *wire.ClientDetails) clientView {
	h := d.Header()
	v := newClientView(&h)
	for _, g := range d.ConsumerGroups {
		v.ConsumerGroups = append(v.ConsumerGroups, clientGroupVw{StreamID: g.StreamID, TopicID: g.TopicID, GroupID: g.GroupID})
	}
	return v
}

// optionValue decodes an option or header value for JSON: text for
// String, booleans, numbers for the numeric kinds, base64 otherwise.
func optionValue(kind wire.OptionKind, v []byte) any {
	le := binary.LittleEndian
	switch {
	case kind == wire.OptionKindString:
		return string(v)
	case kind == wire.OptionKindBool && len(v) == 1:
		return v[0] == 1
	case kind == wire.OptionKindUint8 && len(v) == 1:
		return v[0]
	case kind == wire.OptionKindUint16 && len(v) == 2:
		return le.Uint16(v)
	case kind == wire.OptionKindUint32 && len(v) == 4:
		return le.Uint32(v)
	case kind == wire.OptionKindUint64 && len(v) == 8:
		return le.Uint64(v)
	case kind == wire.OptionKindInt8 && len(v) == 1:
		return int8(v[0])
	case kind == wire.OptionKindInt16 && len(v) == 2:
		return int16(le.Uint16(v))
	case kind == wire.OptionKindInt32 && len(v) == 4:
		return int32(le.Uint32(v))
	case kind == wire.OptionKindInt64 && len(v) == 8:
		return int64(le.Uint64(v))
	case kind == wire.OptionKindFloat32 && len(v) == 4:
		return math.Float32frombits(le.Uint32(v))
	case kind == wire.OptionKindFloat64 && len(v) == 8:
		return math.Float64frombits(le.Uint64(v))
	}
	return base64.StdEncoding.EncodeToString(v)
}

// fmtOptionValue renders an option value for tables, with the units of
// the topic catalog keys.
func fmtOptionValue(key string, kind wire.OptionKind, v []byte) string {
	val := optionValue(kind, v)
	if n, ok := val.(uint64); ok {
		switch key {
		case wire.TopicOptMessageExpiry:
			return fmtExpiry(n)
		case wire.TopicOptMaxTopicSize:
			return fmtMaxSize(n)
		case wire.TopicOptSegmentSize, wire.TopicOptSizeOfMessagesRequiredToSave:
			return fmtSize(n)
		case wire.TopicOptLocalRetentionSize:
			return fmtLocalRetentionSize(n)
		case wire.TopicOptLocalRetentionAge:
			return fmtLocalRetentionAge(n)
		}
	}
	switch x := val.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return jsonScalar(val)
}

// jsonScalar renders a number (or base64 text) as JSON would.
func jsonScalar(v any) string {
	switch x := v.(type) {
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return ""
}
