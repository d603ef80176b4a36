package wire

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"testing"
)

// Conformance checks for stream, topic, partition, segment, consumer-group
// and options vectors.
var (
	catalogRequestVectors = map[string]func(*testing.T, requestVector){
		"describe_options_topic": func(t *testing.T, v requestVector) {
			var in struct{ Scope uint8 }
			decodeInputs(t, v, &in)
			checkBody(t, v.Body, &DescribeOptions{Scope: OptionScope(in.Scope)}, &DescribeOptions{})
		},
		"get_stream_numeric": checkStreamRequest(func(s Identifier) Body { return &GetStream{StreamID: s} }, func() Body { return &GetStream{} }),
		"get_stream_named":   checkStreamRequest(func(s Identifier) Body { return &GetStream{StreamID: s} }, func() Body { return &GetStream{} }),
		"get_streams": func(t *testing.T, v requestVector) {
			checkBody(t, v.Body, &Empty{}, &Empty{})
		},
		"get_topic":  checkTopicRequest(func(s, tp Identifier) Body { return &GetTopic{StreamID: s, TopicID: tp} }, func() Body { return &GetTopic{} }),
		"get_topics": checkStreamRequest(func(s Identifier) Body { return &GetTopics{StreamID: s} }, func() Body { return &GetTopics{} }),
		"get_consumer_group": checkGroupRequest(func(s, tp, g Identifier) Body {
			return &GetConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}
		}, func() Body { return &GetConsumerGroup{} }),
		"get_consumer_groups": checkTopicRequest(func(s, tp Identifier) Body { return &GetConsumerGroups{StreamID: s, TopicID: tp} }, func() Body { return &GetConsumerGroups{} }),
		"sync_consumer_group": checkGroupRequest(func(s, tp, g Identifier) Body {
			return &SyncConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}
		}, func() Body { return &SyncConsumerGroup{} }),
		"create_stream": func(t *testing.T, v requestVector) {
			var in struct {
				Name    string
				Options []optionInput
			}
			decodeInputs(t, v, &in)
			checkBody(t, v.Body, &CreateStream{Name: in.Name, Options: optionsFromInputs(t, in.Options)}, &CreateStream{})
		},
		"update_stream": func(t *testing.T, v requestVector) {
			var in struct {
				StreamID json.RawMessage `json:"stream_id"`
				Name     string
				Options  []optionInput
			}
			decodeInputs(t, v, &in)
			want := UpdateStream{StreamID: idFromInput(t, in.StreamID), Name: in.Name, Options: optionsFromInputs(t, in.Options)}
			checkBody(t, v.Body, &want, &UpdateStream{})
		},
		"delete_stream":             checkStreamRequest(func(s Identifier) Body { return &DeleteStream{StreamID: s} }, func() Body { return &DeleteStream{} }),
		"create_topic_defaults":     checkCreateTopic,
		"create_topic_with_options": checkCreateTopic,
		"update_topic": func(t *testing.T, v requestVector) {
			var in struct {
				StreamID json.RawMessage `json:"stream_id"`
				TopicID  json.RawMessage `json:"topic_id"`
				Name     string
				Options  []optionInput
			}
			decodeInputs(t, v, &in)
			want := UpdateTopic{StreamID: idFromInput(t, in.StreamID), TopicID: idFromInput(t, in.TopicID), Name: in.Name, Options: optionsFromInputs(t, in.Options)}
			checkBody(t, v.Body, &want, &UpdateTopic{})
			if err := ValidateTopicUpdate(want.Options); err != nil {
				t.Errorf("ValidateTopicUpdate: %v", err)
			}
		},
		"delete_topic": checkTopicRequest(func(s, tp Identifier) Body { return &DeleteTopic{StreamID: s, TopicID: tp} }, func() Body { return &DeleteTopic{} }),
		"create_partitions": func(t *testing.T, v requestVector) {
			var in partitionsInput
			decodeInputs(t, v, &in)
			want := CreatePartitions{StreamID: idFromInput(t, in.StreamID), TopicID: idFromInput(t, in.TopicID), PartitionsCount: in.PartitionsCount}
			checkBody(t, v.Body, &want, &CreatePartitions{})
		},
		"delete_partitions": func(t *testing.T, v requestVector) {
			var in partitionsInput
			decodeInputs(t, v, &in)
			want := DeletePartitions{StreamID: idFromInput(t, in.StreamID), TopicID: idFromInput(t, in.TopicID), PartitionsCount: in.PartitionsCount}
			checkBody(t, v.Body, &want, &DeletePartitions{})
		},
		"delete_segments": func(t *testing.T, v requestVector) {
			var in struct {
				StreamID      json.RawMessage `json:"stream_id"`
				TopicID       json.RawMessage `json:"topic_id"`
				PartitionID   uint32          `json:"partition_id"`
				SegmentsCount uint32          `json:"segments_count"`
			}
			decodeInputs(t, v, &in)
			want := DeleteSegments{StreamID: idFromInput(t, in.StreamID), TopicID: idFromInput(t, in.TopicID), PartitionID: in.PartitionID, SegmentsCount: in.SegmentsCount}
			checkBody(t, v.Body, &want, &DeleteSegments{})
		},
		"create_consumer_group": func(t *testing.T, v requestVector) {
			var in struct {
				StreamID json.RawMessage `json:"stream_id"`
				TopicID  json.RawMessage `json:"topic_id"`
				Name     string
			}
			decodeInputs(t, v, &in)
			want := CreateConsumerGroup{StreamID: idFromInput(t, in.StreamID), TopicID: idFromInput(t, in.TopicID), Name: in.Name}
			checkBody(t, v.Body, &want, &CreateConsumerGroup{})
		},
		"join_consumer_group": checkGroupRequest(func(s, tp, g Identifier) Body {
			return &JoinConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}
		}, func() Body { return &JoinConsumerGroup{} }),
		"leave_consumer_group": checkGroupRequest(func(s, tp, g Identifier) Body {
			return &LeaveConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}
		}, func() Body { return &LeaveConsumerGroup{} }),
		"delete_consumer_group": checkGroupRequest(func(s, tp, g Identifier) Body {
			return &DeleteConsumerGroup{StreamID: s, TopicID: tp, GroupID: g}
		}, func() Body { return &DeleteConsumerGroup{} }),
	}

	catalogReplyVectors = map[string]func(*testing.T, replyVector){
		"create_stream_ok": func(t *testing.T, v replyVector) {
			var sdk sdkStream
			unmarshalSDK(t, v, &sdk)
			want := sdk.details()
			checkBody(t, v.Payload, &want, &StreamDetails{})
		},
		"get_stream_one_topic": func(t *testing.T, v replyVector) {
			var sdk sdkStream
			unmarshalSDK(t, v, &sdk)
			want := sdk.details()
			if len(want.Topics) != 1 {
				t.Fatalf("vector has %d topics, want 1", len(want.Topics))
			}
			checkBody(t, v.Payload, &want, &StreamDetails{})
		},
		"get_stream_not_found_empty": func(t *testing.T, v replyVector) {
			if string(v.SDKDecoded) != "null" {
				t.Fatalf("sdk_decoded = %s, want null", v.SDKDecoded)
			}
			var d StreamDetails
			found, err := DecodeIfPresent(v.Payload, &d)
			if found || err != nil {
				t.Errorf("DecodeIfPresent = %v, %v; want not found", found, err)
			}
			if err := d.Decode(v.Payload); err == nil {
				t.Errorf("StreamDetails.Decode accepted an empty payload")
			}
		},
		"get_topics_one": func(t *testing.T, v replyVector) {
			var sdk []sdkTopic
			unmarshalSDK(t, v, &sdk)
			want := Topics{}
			for _, tp := range sdk {
				want = append(want, tp.topic())
			}
			checkBody(t, v.Payload, &want, &Topics{})
		},
		"create_topic_ok_op64": func(t *testing.T, v replyVector) {
			checkReplyOperation(t, v, CmdCreateTopic)
			var sdk struct {
				sdkTopic
				Partitions []struct {
					ID            uint32 `json:"id"`
					MessagesCount uint64 `json:"messagesCount"`
					CreatedAt     uint64 `json:"createdAt"`
					SegmentsCount uint32 `json:"segmentsCount"`
					CurrentOffset uint64 `json:"currentOffset"`
					SizeBytes     uint64 `json:"sizeBytes"`
				} `json:"partitions"`
			}
			unmarshalSDK(t, v, &sdk)
			want := TopicDetails{Topic: sdk.topic()}
			for _, p := range sdk.Partitions {
				want.Partitions = append(want.Partitions, PartitionInfo{ID: p.ID, CreatedAt: p.CreatedAt, SegmentsCount: p.SegmentsCount, CurrentOffset: p.CurrentOffset, SizeBytes: p.SizeBytes, MessagesCount: p.MessagesCount})
			}
			checkBody(t, v.Payload, &want, &TopicDetails{})
		},
		"delete_segments_ok_op68": func(t *testing.T, v replyVector) {
			checkReplyOperation(t, v, CmdDeleteSegments)
			if string(v.SDKDecoded) != "null" {
				t.Fatalf("sdk_decoded = %s, want null", v.SDKDecoded)
			}
			payload, err := SplitResult(v.Body)
			if err != nil {
				t.Fatalf("SplitResult: %v", err)
			}
			checkBody(t, payload, &Empty{}, &Empty{})
		},
		"sync_consumer_group": func(t *testing.T, v replyVector) {
			var sdk struct {
				Generation uint64
				Partitions []uint32
			}
			unmarshalSDK(t, v, &sdk)
			want := ConsumerGroupAssignment(sdk)
			checkBody(t, v.Payload, &want, &ConsumerGroupAssignment{})
			var got ConsumerGroupAssignment
			if found, err := DecodeIfPresent(v.Payload, &got); !found || err != nil {
				t.Errorf("DecodeIfPresent = %v, %v", found, err)
			}
		},
		"create_consumer_group_ok": checkGroupDetailsReply,
		"get_consumer_group_one_member": func(t *testing.T, v replyVector) {
			checkGroupDetailsReply(t, v)
			var d GroupDetails
			if err := d.Decode(v.Payload); err != nil || len(d.Members) != 1 {
				t.Errorf("members = %d (%v), want 1", len(d.Members), err)
			}
		},
		"describe_options_one": func(t *testing.T, v replyVector) {
			var sdk []struct {
				Key          string
				DefaultValue struct {
					Kind  uint8
					Value []byte
				}
				Description string
			}
			unmarshalSDK(t, v, &sdk)
			want := OptionDescriptions{}
			for _, e := range sdk {
				want = append(want, OptionDescription{Key: e.Key, Kind: OptionKind(e.DefaultValue.Kind), Default: e.DefaultValue.Value, Description: e.Description})
			}
			checkBody(t, v.Payload, &want, &OptionDescriptions{})
			// The vector's entry agrees with the catalog's key, kind and default.
			spec, ok := LookupOption(OptionScopeTopic, want[0].Key)
			if !ok || spec.Kind != want[0].Kind || string(spec.Default) != string(want[0].Default) {
				t.Errorf("catalog entry %+v does not match %+v", spec, want[0])
			}
		},
	}
)

// decodeInputs decodes a request vector's inputs (snake_case keys; the
// matching is case-insensitive, so one-word fields need no tag).
func decodeInputs(t *testing.T, v requestVector, dst any) {
	t.Helper()
	if err := json.Unmarshal(v.Inputs, dst); err != nil {
		t.Fatalf("inputs: %v", err)
	}
}

func unmarshalSDK(t *testing.T, v replyVector, dst any) {
	t.Helper()
	if v.SDKDecodeError != "" {
		t.Fatalf("vector records an SDK decode error: %s", v.SDKDecodeError)
	}
	if err := json.Unmarshal(v.SDKDecoded, dst); err != nil {
		t.Fatalf("sdk_decoded: %v", err)
	}
}

// idFromInput turns a JSON number into a numeric Identifier and a JSON
// string into a named one.
func idFromInput(t *testing.T, raw json.RawMessage) Identifier {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return NamedID(s)
	}
	var n uint32
	if err := json.Unmarshal(raw, &n); err != nil {
		t.Fatalf("identifier %s: %v", raw, err)
	}
	return NumericID(n)
}

// optionInput is one options entry of a request vector's inputs: the value
// is a JSON string for String kinds and a number for integer kinds.
type optionInput struct {
	Key   string
	Kind  uint8
	Value json.RawMessage
}

func optionsFromInputs(t *testing.T, in []optionInput) Options {
	t.Helper()
	var out Options
	for _, o := range in {
		opt := Option{Key: o.Key, Kind: OptionKind(o.Kind)}
		switch opt.Kind {
		case OptionKindString:
			var s string
			if err := json.Unmarshal(o.Value, &s); err != nil {
				t.Fatalf("option %s: %v", o.Key, err)
			}
			opt.Value = []byte(s)
		case OptionKindUint64, OptionKindUint32:
			var n uint64
			if err := json.Unmarshal(o.Value, &n); err != nil {
				t.Fatalf("option %s: %v", o.Key, err)
			}
			opt.Value = binary.LittleEndian.AppendUint64(nil, n)[:opt.Kind.FixedSize()]
		case OptionKindBool:
			var b bool
			if err := json.Unmarshal(o.Value, &b); err != nil {
				t.Fatalf("option %s: %v", o.Key, err)
			}
			opt = BoolOption(o.Key, b)
		default:
			t.Fatalf("option %s: kind %d not handled by the test", o.Key, o.Kind)
		}
		out = append(out, opt)
	}
	return out
}

type partitionsInput struct {
	StreamID        json.RawMessage `json:"stream_id"`
	TopicID         json.RawMessage `json:"topic_id"`
	PartitionsCount uint32          `json:"partitions_count"`
}

func checkStreamRequest(mk func(Identifier) Body, fresh func() Body) func(*testing.T, requestVector) {
	return func(t *testing.T, v requestVector) {
		var in struct {
			StreamID json.RawMessage `json:"stream_id"`
		}
		decodeInputs(t, v, &in)
		checkBody(t, v.Body, mk(idFromInput(t, in.StreamID)), fresh())
	}
}

func checkTopicRequest(mk func(s, tp Identifier) Body, fresh func() Body) func(*testing.T, requestVector) {
	return func(t *testing.T, v requestVector) {
		var in struct {
			StreamID json.RawMessage `json:"stream_id"`
			TopicID  json.RawMessage `json:"topic_id"`
		}
		decodeInputs(t, v, &in)
		checkBody(t, v.Body, mk(idFromInput(t, in.StreamID), idFromInput(t, in.TopicID)), fresh())
	}
}

func checkGroupRequest(mk func(s, tp, g Identifier) Body, fresh func() Body) func(*testing.T, requestVector) {
	return func(t *testing.T, v requestVector) {
		var in struct {
			StreamID json.RawMessage `json:"stream_id"`
			TopicID  json.RawMessage `json:"topic_id"`
			GroupID  json.RawMessage `json:"group_id"`
		}
		decodeInputs(t, v, &in)
		checkBody(t, v.Body, mk(idFromInput(t, in.StreamID), idFromInput(t, in.TopicID), idFromInput(t, in.GroupID)), fresh())
	}
}

func checkCreateTopic(t *testing.T, v requestVector) {
	var in struct {
		StreamID        json.RawMessage `json:"stream_id"`
		PartitionsCount uint32          `json:"partitions_count"`
		Name            string
		Options         []optionInput
	}
	decodeInputs(t, v, &in)
	want := CreateTopic{StreamID: idFromInput(t, in.StreamID), PartitionsCount: in.PartitionsCount, Name: in.Name, Options: optionsFromInputs(t, in.Options)}
	checkBody(t, v.Body, &want, &CreateTopic{})
	if err := want.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// What the SDK sends must pass the server-side catalog checks.
	opts, err := NewTopicOptions(want.Options, want.PartitionsCount)
	if err != nil {
		t.Fatalf("NewTopicOptions: %v", err)
	}
	if len(opts.Explicit) != len(want.Options) || len(opts.Explicit)+len(opts.Derived) != len(OptionCatalog(OptionScopeTopic)) {
		t.Errorf("explicit %d + derived %d entries for %d sent", len(opts.Explicit), len(opts.Derived), len(want.Options))
	}
}

// checkReplyOperation asserts the vector's reply operation is the one the
// registry gives the command.
func checkReplyOperation(t *testing.T, v replyVector, code Command) {
	t.Helper()
	info, ok := LookupCommand(code)
	if !ok || v.Operation == nil || info.ReplyOperation != Operation(*v.Operation) {
		t.Errorf("reply operation %v, registry says %+v", v.Operation, info)
	}
}

// sdkStream is the Go SDK's StreamDetails rendered as JSON.
type sdkStream struct {
	ID            uint32     `json:"id"`
	Name          string     `json:"name"`
	SizeBytes     uint64     `json:"sizeBytes"`
	CreatedAt     uint64     `json:"createdAt"`
	MessagesCount uint64     `json:"messagesCount"`
	TopicsCount   uint32     `json:"topicsCount"`
	Topics        []sdkTopic `json:"topics"`
}

func (s sdkStream) details() StreamDetails {
	d := StreamDetails{Stream: Stream{ID: s.ID, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount, SizeBytes: s.SizeBytes, MessagesCount: s.MessagesCount, Name: s.Name}}
	for _, tp := range s.Topics {
		d.Topics = append(d.Topics, tp.topic())
	}
	return d
}

// sdkTopic is the Go SDK's topic rendered as JSON; option maps hold
// {Kind, Value(base64)}.
type sdkTopic struct {
	ID                   uint32               `json:"id"`
	CreatedAt            uint64               `json:"createdAt"`
	Name                 string               `json:"name"`
	Size                 uint64               `json:"size"`
	MessageExpiry        uint64               `json:"messageExpiry"`
	CompressionAlgorithm uint8                `json:"compressionAlgorithm"`
	MaxTopicSize         uint64               `json:"maxTopicSize"`
	MessagesCount        uint64               `json:"messagesCount"`
	PartitionsCount      uint32               `json:"partitionsCount"`
	Options              map[string]sdkOption `json:"options"`
	DerivedOptions       map[string]sdkOption `json:"derivedOptions"`
}

type sdkOption struct {
	Kind  uint8
	Value []byte
}

func (s sdkTopic) topic() Topic {
	return Topic{
		ID: s.ID, CreatedAt: s.CreatedAt, PartitionsCount: s.PartitionsCount,
		MessageExpiry: s.MessageExpiry, CompressionAlgorithm: CompressionAlgorithm(s.CompressionAlgorithm),
		MaxTopicSize: s.MaxTopicSize, SizeBytes: s.Size, MessagesCount: s.MessagesCount, Name: s.Name,
		Options: sdkOptions(s.Options), DerivedOptions: sdkOptions(s.DerivedOptions),
	}
}

// sdkOptions turns an SDK option map into Options sorted by key, the
// order reply blocks use.
func sdkOptions(m map[string]sdkOption) Options {
	var out Options
	for k, o := range m {
		out = append(out, Option{Key: k, Kind: OptionKind(o.Kind), Value: o.Value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func checkGroupDetailsReply(t *testing.T, v replyVector) {
	var sdk struct {
		ID              uint32 `json:"id"`
		Name            string `json:"name"`
		PartitionsCount uint32 `json:"partitionsCount"`
		MembersCount    uint32 `json:"membersCount"`
		Members         []struct {
			ID              uint32
			PartitionsCount uint32
			Partitions      []uint32
		}
	}
	unmarshalSDK(t, v, &sdk)
	want := GroupDetails{ConsumerGroup: ConsumerGroup{ID: sdk.ID, PartitionsCount: sdk.PartitionsCount, MembersCount: sdk.MembersCount, Name: sdk.Name}}
	for _, m := range sdk.Members {
		if int(m.PartitionsCount) != len(m.Partitions) {
			t.Fatalf("member %d: count %d, %d partitions", m.ID, m.PartitionsCount, len(m.Partitions))
		}
		want.Members = append(want.Members, ConsumerGroupMember{ID: m.ID, Partitions: m.Partitions})
	}
	checkBody(t, v.Payload, &want, &GroupDetails{})
}
