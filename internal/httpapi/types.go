package httpapi

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/iggo-dev/iggo/wire"
)

// The JSON reply shapes of http-api.md §7, with explicit field order.

// optionValue is one entry of an "options" object.
type optionValue struct {
	Value    string `json:"value"`
	Explicit bool   `json:"explicit"`
}

// optionsJSON renders explicit options and derived defaults.
func optionsJSON(explicit, derived wire.Options) map[string]optionValue {
	out := map[string]optionValue{}
	for _, o := range derived {
		out[o.Key] = optionValue{Value: optionText(o), Explicit: false}
	}
	for _, o := range explicit {
		out[o.Key] = optionValue{Value: optionText(o), Explicit: true}
	}
	return out
}

// optionText is the readable string of a typed option value.
func optionText(o wire.Option) string {
	v := o.Value
	switch o.Kind {
	case wire.OptionKindString:
		return string(v)
	case wire.OptionKindBool:
		if len(v) == 1 && v[0] == 1 {
			return "true"
		}
		return "false"
	case wire.OptionKindUint8:
		if len(v) == 1 {
			return strconv.FormatUint(uint64(v[0]), 10)
		}
	case wire.OptionKindUint16:
		if len(v) == 2 {
			return strconv.FormatUint(uint64(binary.LittleEndian.Uint16(v)), 10)
		}
	case wire.OptionKindUint32:
		if len(v) == 4 {
			return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(v)), 10)
		}
	case wire.OptionKindUint64:
		if len(v) == 8 {
			return strconv.FormatUint(binary.LittleEndian.Uint64(v), 10)
		}
	case wire.OptionKindInt8:
		if len(v) == 1 {
			return strconv.FormatInt(int64(int8(v[0])), 10)
		}
	case wire.OptionKindInt16:
		if len(v) == 2 {
			return strconv.FormatInt(int64(int16(binary.LittleEndian.Uint16(v))), 10)
		}
	case wire.OptionKindInt32:
		if len(v) == 4 {
			return strconv.FormatInt(int64(int32(binary.LittleEndian.Uint32(v))), 10)
		}
	case wire.OptionKindInt64:
		if len(v) == 8 {
			return strconv.FormatInt(int64(binary.LittleEndian.Uint64(v)), 10)
		}
	case wire.OptionKindFloat32:
		if len(v) == 4 {
			return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 'g', -1, 32)
		}
	case wire.OptionKindFloat64:
		if len(v) == 8 {
			return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(v)), 'g', -1, 64)
		}
	}
	return string(v)
}

// Stream is a stream in a list.
type Stream struct {
	ID            uint32                 `json:"id"`
	CreatedAt     uint64                 `json:"created_at"`
	Name          string                 `json:"name"`
	Size          Size                   `json:"size"`
	MessagesCount uint64                 `json:"messages_count"`
	TopicsCount   uint32                 `json:"topics_count"`
	Options       map[string]optionValue `json:"options"`
}

// StreamDetails is a stream with its topics.
type StreamDetails struct {
	ID            uint32                 `json:"id"`
	CreatedAt     uint64                 `json:"created_at"`
	Name          string                 `json:"name"`
	Size          Size                   `json:"size"`
	MessagesCount uint64                 `json:"messages_count"`
	TopicsCount   uint32                 `json:"topics_count"`
	Topics        []Topic                `json:"topics"`
	Options       map[string]optionValue `json:"options"`
}

func streamJSON(s *wire.Stream) Stream {
	return Stream{ID: s.ID, CreatedAt: s.CreatedAt, Name: s.Name, Size: Size(s.SizeBytes), MessagesCount: s.MessagesCount,
		TopicsCount: s.TopicsCount, Options: optionsJSON(s.Options, nil)}
}

func streamDetailsJSON(d *wire.StreamDetails) StreamDetails {
	s := streamJSON(&d.Stream)
	topics := make([]Topic, 0, len(d.Topics))
	for i := range d.Topics {
		topics = append(topics, topicJSON(&d.Topics[i]))
	}
	return StreamDetails{ID: s.ID, CreatedAt: s.CreatedAt, Name: s.Name, Size: s.Size, MessagesCount: s.MessagesCount,
		TopicsCount: s.TopicsCount, Topics: topics, Options: s.Options}
}

// Topic is a topic in a list.
type Topic struct {
	ID                   uint32                 `json:"id"`
	CreatedAt            uint64                 `json:"created_at"`
	Name                 string                 `json:"name"`
	Size                 Size                   `json:"size"`
	MessageExpiry        uint64                 `json:"message_expiry"`
	CompressionAlgorithm string                 `json:"compression_algorithm"`
	MaxTopicSize         uint64                 `json:"max_topic_size"`
	MessagesCount        uint64                 `json:"messages_count"`
	PartitionsCount      uint32                 `json:"partitions_count"`
	Options              map[string]optionValue `json:"options"`
}

// Partition is a partition of TopicDetails.
type Partition struct {
	ID            uint32 `json:"id"`
	CreatedAt     uint64 `json:"created_at"`
	SegmentsCount uint32 `json:"segments_count"`
	CurrentOffset uint64 `json:"current_offset"`
	Size          Size   `json:"size"`
	MessagesCount uint64 `json:"messages_count"`
	// The fields below are set by GET topic when tiered storage is on
	// (tiers.go), and absent otherwise: the bytes on local disk, in the
	// bucket (some may also be local), only in the bucket, and sealed
	// but not uploaded yet, and the segments in the bucket and not
	// uploaded yet.
	LocalSizeBytes       *uint64 `json:"local_size_bytes,omitempty"`
	RemoteSizeBytes      *uint64 `json:"remote_size_bytes,omitempty"`
	RemoteOnlySizeBytes  *uint64 `json:"remote_only_size_bytes,omitempty"`
	PendingSizeBytes     *uint64 `json:"pending_size_bytes,omitempty"`
	RemoteSegmentsCount  *uint32 `json:"remote_segments_count,omitempty"`
	PendingSegmentsCount *uint32 `json:"pending_segments_count,omitempty"`
}

// TopicDetails is a topic with its partitions.
type TopicDetails struct {
	ID                   uint32                 `json:"id"`
	CreatedAt            uint64                 `json:"created_at"`
	Name                 string                 `json:"name"`
	Size                 Size                   `json:"size"`
	MessageExpiry        uint64                 `json:"message_expiry"`
	CompressionAlgorithm string                 `json:"compression_algorithm"`
	MaxTopicSize         uint64                 `json:"max_topic_size"`
	MessagesCount        uint64                 `json:"messages_count"`
	PartitionsCount      uint32                 `json:"partitions_count"`
	Partitions           []Partition            `json:"partitions"`
	Options              map[string]optionValue `json:"options"`
}

func compressionName(c wire.CompressionAlgorithm) string {
	if c == wire.CompressionGzip {
		return "gzip"
	}
	return "none"
}

func topicJSON(t *wire.Topic) Topic {
	return Topic{ID: t.ID, CreatedAt: t.CreatedAt, Name: t.Name, Size: Size(t.SizeBytes), MessageExpiry: t.MessageExpiry,
		CompressionAlgorithm: compressionName(t.CompressionAlgorithm), MaxTopicSize: t.MaxTopicSize,
		MessagesCount: t.MessagesCount, PartitionsCount: t.PartitionsCount, Options: optionsJSON(t.Options, t.DerivedOptions)}
}

func topicDetailsJSON(d *wire.TopicDetails) TopicDetails {
	t := topicJSON(&d.Topic)
	parts := make([]Partition, 0, len(d.Partitions))
	for _, p := range d.Partitions {
		parts = append(parts, Partition{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: p.SegmentsCount,
			CurrentOffset: p.CurrentOffset, Size: Size(p.SizeBytes), MessagesCount: p.MessagesCount})
	}
	return TopicDetails{ID: t.ID, CreatedAt: t.CreatedAt, Name: t.Name, Size: t.Size, MessageExpiry: t.MessageExpiry,
		CompressionAlgorithm: t.CompressionAlgorithm, MaxTopicSize: t.MaxTopicSize, MessagesCount: t.MessagesCount,
		PartitionsCount: t.PartitionsCount, Partitions: parts, Options: t.Options}
}

// ConsumerGroup is a consumer group in a list.
type ConsumerGroup struct {
	ID              uint32 `json:"id"`
	Name            string `json:"name"`
	PartitionsCount uint32 `json:"partitions_count"`
	MembersCount    uint32 `json:"members_count"`
}

// GroupMember is a member of ConsumerGroupDetails.
type GroupMember struct {
	ID              uint32   `json:"id"`
	PartitionsCount uint32   `json:"partitions_count"`
	Partitions      []uint32 `json:"partitions"`
}

// ConsumerGroupDetails is a consumer group with its members.
type ConsumerGroupDetails struct {
	ID              uint32        `json:"id"`
	Name            string        `json:"name"`
	PartitionsCount uint32        `json:"partitions_count"`
	MembersCount    uint32        `json:"members_count"`
	Members         []GroupMember `json:"members"`
}

func groupJSON(g *wire.ConsumerGroup) ConsumerGroup {
	return ConsumerGroup{ID: g.ID, Name: g.Name, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount}
}

func groupDetailsJSON(d *wire.GroupDetails) ConsumerGroupDetails {
	out := ConsumerGroupDetails{ID: d.ID, Name: d.Name, PartitionsCount: d.PartitionsCount, MembersCount: d.MembersCount, Members: []GroupMember{}}
	for _, m := range d.Members {
		ps := append([]uint32{}, m.Partitions...)
		out.Members = append(out.Members, GroupMember{ID: m.ID, PartitionsCount: uint32(len(ps)), Partitions: ps})
	}
	return out
}
