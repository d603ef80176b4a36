package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Fuzz targets for every decoder of the catalog area. Each checks that
// decoding never panics and that anything that decodes re-encodes to the
// same bytes (the encodings are canonical) and decodes again to an equal
// value. A request body decoded as a prefix (prefixDecoded) re-encodes to
// the consumed prefix of the input: the bytes after it were ignored.

func fuzzDecoder[T any, P interface {
	*T
	Body
}](f *testing.F, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var x T
		if P(&x).Decode(data) != nil {
			return
		}
		enc := P(&x).AppendTo(nil)
		if !sameEncoding(P(&x), enc, data) {
			t.Fatalf("re-encode differs:\n got %x\nwant %x", enc, data)
		}
		var y T
		if err := P(&y).Decode(enc); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := cmpDiff(&x, &y); d != "" {
			t.Fatalf("re-decode differs:\n%s", d)
		}
	})
}

// sameEncoding reports whether enc, the re-encoding of b decoded from
// data, matches data: byte for byte, or as its prefix when b is a request
// body that ignores trailing bytes.
func sameEncoding(b Body, enc, data []byte) bool {
	if prefixDecoded(b) {
		return bytes.HasPrefix(data, enc)
	}
	return bytes.Equal(enc, data)
}

// vectorSeeds returns the bodies (requests.json) or payloads
// (replies.json) of the named vectors; none when ../shared is absent.
func vectorSeeds(f *testing.F, file string, names ...string) [][]byte {
	f.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if err != nil {
		return nil
	}
	var doc struct {
		Vectors []struct {
			Name    string `json:"name"`
			Body    string `json:"body_hex"`
			Payload string `json:"payload_after_result_section_hex"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		f.Fatalf("parse %s: %v", file, err)
	}
	var out [][]byte
	for _, v := range doc.Vectors {
		for _, n := range names {
			if v.Name != n {
				continue
			}
			h := v.Body
			if file == "replies.json" {
				h = v.Payload
			}
			b, err := hex.DecodeString(h)
			if err != nil {
				f.Fatalf("vector %s: %v", n, err)
			}
			out = append(out, b)
		}
	}
	return out
}

func requestSeeds(f *testing.F, names ...string) [][]byte {
	return vectorSeeds(f, "requests.json", names...)
}

func replySeeds(f *testing.F, names ...string) [][]byte {
	return vectorSeeds(f, "replies.json", names...)
}

// encodeSeeds encodes bodies as fuzz seeds.
func encodeSeeds(bodies ...Body) [][]byte {
	out := make([][]byte, len(bodies))
	for i, b := range bodies {
		out[i] = b.AppendTo(nil)
	}
	return out
}

// seeds concatenates seed lists.
func seeds(groups ...[][]byte) [][]byte {
	var out [][]byte
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var sampleOpts = Options{StringOption(TopicOptCompressionAlgorithm, "gzip"), Uint64Option(TopicOptMessageExpiry, 1), {Key: "x", Kind: 200, Value: []byte{1}}}

func FuzzOptions(f *testing.F) {
	fuzzDecoder[Options](f, seeds(encodeSeeds(&sampleOpts, &Options{}), [][]byte{cat(tlvField(2, 1, "k"), tlvField(1, 1, "v"))})...)
}

func FuzzDescribeOptions(f *testing.F) {
	fuzzDecoder[DescribeOptions](f, seeds(requestSeeds(f, "describe_options_topic"), [][]byte{{0}, {2}, {3}, {4}})...)
}

func FuzzOptionDescriptions(f *testing.F) {
	all := DescribeCatalog(OptionScopeTopic)
	fuzzDecoder[OptionDescriptions](f, seeds(replySeeds(f, "describe_options_one"), encodeSeeds(&all, &OptionDescriptions{}))...)
}

func FuzzGetStream(f *testing.F) {
	fuzzDecoder[GetStream](f, requestSeeds(f, "get_stream_numeric", "get_stream_named")...)
}

func FuzzCreateStream(f *testing.F) {
	fuzzDecoder[CreateStream](f, seeds(requestSeeds(f, "create_stream"), encodeSeeds(&CreateStream{Name: "s", Options: sampleOpts}))...)
}

func FuzzDeleteStream(f *testing.F) {
	fuzzDecoder[DeleteStream](f, requestSeeds(f, "delete_stream")...)
}

func FuzzUpdateStream(f *testing.F) {
	fuzzDecoder[UpdateStream](f, seeds(requestSeeds(f, "update_stream"), encodeSeeds(&UpdateStream{StreamID: NamedID("a"), Name: "b", Options: sampleOpts}))...)
}

func FuzzPurgeStream(f *testing.F) {
	fuzzDecoder[PurgeStream](f, encodeSeeds(&PurgeStream{StreamID: NumericID(1)}, &PurgeStream{StreamID: NamedID("orders")})...)
}

func FuzzStream(f *testing.F) {
	s := sampleStream(1, 2)
	s.Options = sampleOpts
	fuzzDecoder[Stream](f, seeds(replySeeds(f, "create_stream_ok"), encodeSeeds(&s))...)
}

func FuzzStreamDetails(f *testing.F) {
	d := StreamDetails{Stream: sampleStream(1, 0), Topics: []Topic{sampleTopic(0, 1)}}
	fuzzDecoder[StreamDetails](f, seeds(replySeeds(f, "create_stream_ok", "get_stream_one_topic"), encodeSeeds(&d))...)
}

func FuzzStreams(f *testing.F) {
	fuzzDecoder[Streams](f, seeds(replySeeds(f, "create_stream_ok"), encodeSeeds(&Streams{sampleStream(0, 0), sampleStream(1, 3)}))...)
}

func FuzzGetTopic(f *testing.F) {
	fuzzDecoder[GetTopic](f, requestSeeds(f, "get_topic")...)
}

func FuzzGetTopics(f *testing.F) {
	fuzzDecoder[GetTopics](f, requestSeeds(f, "get_topics")...)
}

func FuzzCreateTopic(f *testing.F) {
	fuzzDecoder[CreateTopic](f, requestSeeds(f, "create_topic_defaults", "create_topic_with_options")...)
}

func FuzzDeleteTopic(f *testing.F) {
	fuzzDecoder[DeleteTopic](f, requestSeeds(f, "delete_topic")...)
}

func FuzzUpdateTopic(f *testing.F) {
	fuzzDecoder[UpdateTopic](f, requestSeeds(f, "update_topic")...)
}

func FuzzPurgeTopic(f *testing.F) {
	fuzzDecoder[PurgeTopic](f, encodeSeeds(&PurgeTopic{StreamID: NumericID(1), TopicID: NamedID("t")})...)
}

func FuzzTopic(f *testing.F) {
	fuzzDecoder[Topic](f, encodeSeeds(ptr(sampleTopic(1, 2)), &Topic{Name: "t"})...)
}

func FuzzTopics(f *testing.F) {
	fuzzDecoder[Topics](f, seeds(replySeeds(f, "get_topics_one"), encodeSeeds(&Topics{}, &Topics{sampleTopic(0, 0), sampleTopic(1, 1)}))...)
}

func FuzzTopicDetails(f *testing.F) {
	d := TopicDetails{Topic: sampleTopic(1, 0), Partitions: []PartitionInfo{samplePartition(0), samplePartition(1)}}
	fuzzDecoder[TopicDetails](f, seeds(replySeeds(f, "create_topic_ok_op64"), encodeSeeds(&d))...)
}

func FuzzCreatePartitions(f *testing.F) {
	fuzzDecoder[CreatePartitions](f, requestSeeds(f, "create_partitions")...)
}

func FuzzDeletePartitions(f *testing.F) {
	fuzzDecoder[DeletePartitions](f, requestSeeds(f, "delete_partitions")...)
}

func FuzzDeleteSegments(f *testing.F) {
	fuzzDecoder[DeleteSegments](f, requestSeeds(f, "delete_segments")...)
}

func FuzzPartitionInfo(f *testing.F) {
	fuzzDecoder[PartitionInfo](f, encodeSeeds(ptr(samplePartition(3)))...)
}

func FuzzGetConsumerGroup(f *testing.F) {
	fuzzDecoder[GetConsumerGroup](f, requestSeeds(f, "get_consumer_group")...)
}

func FuzzGetConsumerGroups(f *testing.F) {
	fuzzDecoder[GetConsumerGroups](f, requestSeeds(f, "get_consumer_groups")...)
}

func FuzzCreateConsumerGroup(f *testing.F) {
	fuzzDecoder[CreateConsumerGroup](f, requestSeeds(f, "create_consumer_group")...)
}

func FuzzDeleteConsumerGroup(f *testing.F) {
	fuzzDecoder[DeleteConsumerGroup](f, requestSeeds(f, "delete_consumer_group")...)
}

func FuzzJoinConsumerGroup(f *testing.F) {
	fuzzDecoder[JoinConsumerGroup](f, requestSeeds(f, "join_consumer_group")...)
}

func FuzzLeaveConsumerGroup(f *testing.F) {
	fuzzDecoder[LeaveConsumerGroup](f, requestSeeds(f, "leave_consumer_group")...)
}

func FuzzSyncConsumerGroup(f *testing.F) {
	fuzzDecoder[SyncConsumerGroup](f, requestSeeds(f, "sync_consumer_group")...)
}

func FuzzConsumerGroup(f *testing.F) {
	fuzzDecoder[ConsumerGroup](f, encodeSeeds(&ConsumerGroup{ID: 1, PartitionsCount: 2, MembersCount: 3, Name: "g"})...)
}

func FuzzConsumerGroups(f *testing.F) {
	fuzzDecoder[ConsumerGroups](f, encodeSeeds(&ConsumerGroups{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}})...)
}

func FuzzConsumerGroupMember(f *testing.F) {
	fuzzDecoder[ConsumerGroupMember](f, encodeSeeds(&ConsumerGroupMember{ID: 5, Partitions: []uint32{0, 1}})...)
}

func FuzzGroupDetails(f *testing.F) {
	fuzzDecoder[GroupDetails](f, replySeeds(f, "create_consumer_group_ok", "get_consumer_group_one_member")...)
}

func FuzzConsumerGroupAssignment(f *testing.F) {
	fuzzDecoder[ConsumerGroupAssignment](f, replySeeds(f, "sync_consumer_group")...)
}

// FuzzTopicOptions drives the catalog checks with arbitrary blocks: no
// panic; a block that resolves covers the catalog exactly once, its
// canonical explicit entries resolve to the same settings, and an update
// that succeeds leaves a consistent state.
func FuzzTopicOptions(f *testing.F) {
	for _, b := range seeds(requestSeeds(f, "create_topic_with_options"), encodeSeeds(&sampleOpts)) {
		f.Add(b, uint32(1))
	}
	f.Add(Options{StringOption(TopicOptSegmentSize, "1 MiB"), StringOption(TopicOptPreallocateSegments, "true")}.AppendTo(nil), uint32(1000))
	f.Add(Options{StringOption(TopicOptMessageExpiry, "1h 5m"), Uint8Option(TopicOptCompressionAlgorithm, 2)}.AppendTo(nil), uint32(0))
	f.Add(Options{StringOption(TopicOptLocalRetentionSize, "10 GiB"), StringOption(TopicOptLocalRetentionAge, "never")}.AppendTo(nil), uint32(1))
	f.Fuzz(func(t *testing.T, data []byte, partitions uint32) {
		var o Options
		if o.Decode(data) != nil {
			// A CreateTopic body carries the block at its end; fuzz the
			// catalog with the raw bytes too when they happen to parse
			// after a header.
			var c CreateTopic
			if c.Decode(data) != nil {
				return
			}
			o = c.Options
		}
		got, err := NewTopicOptions(o, partitions)
		if err != nil {
			// Whatever create refused, an update must not panic and must
			// leave the topic unchanged when it fails.
			def, _ := NewTopicOptions(nil, partitions)
			upd, _ := NewTopicOptions(nil, partitions)
			if upd.Update(o) != nil && cmpDiff(def, upd) != "" {
				t.Fatalf("failed update changed the topic")
			}
			return
		}
		// Keys given as an explicit zero (UnsetByZero) are not explicit.
		if given := withoutUnset(o); len(got.Explicit)+len(got.Derived) != len(topicCatalog) || len(got.Explicit) != len(given) {
			t.Fatalf("explicit %d + derived %d for %d keys", len(got.Explicit), len(got.Derived), len(given))
		}
		again, err := NewTopicOptions(got.Explicit, partitions)
		if err != nil || again.Settings != got.Settings {
			t.Fatalf("canonical explicit block: %+v, %v; want %+v", again.Settings, err, got.Settings)
		}
		if ValidateTopicUpdate(o) == nil {
			before := got.Settings
			if err := got.Update(o); err != nil {
				// Re-applying the create-time values can only fail the
				// topic-size rule, which create already checked.
				t.Fatalf("update with the create block: %v", err)
			}
			if got.Settings != before {
				t.Fatalf("update with the create block changed %+v to %+v", before, got.Settings)
			}
		}
	})
}

// FuzzParseExpiry checks the duration parser never panics and that every
// value it produces is reachable from its microsecond form.
func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{"7 days", "1h 30m", "none", "250ms", "1500ns", "18446744073709551615us", "1M 2y 3w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseExpiry(s)
		if !ok || v == ExpiryNever {
			return
		}
		if back, ok := parseExpiry(strconv.FormatUint(v, 10) + "us"); !ok || back != v {
			t.Fatalf("%q → %d, but %dus → %d, %v", s, v, v, back, ok)
		}
	})
}

// FuzzParseByteSize checks the size parser never panics and that every
// value it produces parses back from its plain byte count.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"1 GiB", "128MiB", "1.5 GB", "unlimited", "0", "18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseByteSize(s)
		if !ok {
			return
		}
		if back, ok := parseByteSize(strconv.FormatUint(v, 10)); !ok || back != v {
			t.Fatalf("%q → %d, but it does not parse back (%d, %v)", s, v, back, ok)
		}
	})
}
