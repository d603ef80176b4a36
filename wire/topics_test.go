package wire

import (
	"bytes"
	"errors"
	"testing"
)

func sampleTopic(id, partitions uint32) Topic {
	return Topic{
		ID: id, CreatedAt: 1700000000000001 + uint64(id), PartitionsCount: partitions,
		MessageExpiry: ExpiryNever, CompressionAlgorithm: CompressionGzip, MaxTopicSize: 1 << 30,
		SizeBytes: 10, MessagesCount: 3, Name: "topic-" + itoa(uint64(id)),
		Options:        Options{Uint64Option(TopicOptMaxTopicSize, 1<<30)},
		DerivedOptions: Options{BoolOption(TopicOptEnforceFsync, false), Uint64Option(TopicOptSegmentSize, 1<<30)},
	}
}

func samplePartition(id uint32) PartitionInfo {
	return PartitionInfo{ID: id, CreatedAt: 1700000000000002, SegmentsCount: 4, CurrentOffset: 1<<64 - 1, SizeBytes: 1 << 33, MessagesCount: 12345}
}

func TestTopicRoundTrip(t *testing.T) {
	bare := Topic{ID: 0, Name: "t", CompressionAlgorithm: 77}
	details := TopicDetails{Topic: sampleTopic(2, 3), Partitions: []PartitionInfo{samplePartition(0), samplePartition(1), samplePartition(2)}}
	runRoundTrips(t, []roundTripCase{
		{name: "get topic", in: &GetTopic{StreamID: NumericID(1), TopicID: NamedID("events")}, fresh: func() Body { return &GetTopic{} }, strict: true},
		{name: "get topics", in: &GetTopics{StreamID: NamedID(utfName)}, fresh: func() Body { return &GetTopics{} }, strict: true},
		{name: "create topic", in: &CreateTopic{StreamID: NumericID(1), PartitionsCount: 1000, Name: longName}, fresh: func() Body { return &CreateTopic{} }},
		{name: "create topic zero partitions", in: &CreateTopic{StreamID: NamedID("s"), Name: "t"}, fresh: func() Body { return &CreateTopic{} }},
		{name: "create topic with options", in: &CreateTopic{StreamID: NumericID(1), PartitionsCount: 2, Name: "events", Options: Options{
			StringOption(TopicOptCompressionAlgorithm, "gzip"), Uint64Option(TopicOptMessageExpiry, 3600000000),
		}}, fresh: func() Body { return &CreateTopic{} }},
		{name: "delete topic", in: &DeleteTopic{StreamID: NumericID(1), TopicID: NumericID(2)}, fresh: func() Body { return &DeleteTopic{} }, strict: true},
		{name: "update topic", in: &UpdateTopic{StreamID: NumericID(1), TopicID: NamedID("a"), Name: "b"}, fresh: func() Body { return &UpdateTopic{} }},
		{name: "update topic with options", in: &UpdateTopic{StreamID: NumericID(1), TopicID: NumericID(2), Name: "events2", Options: Options{
			Uint64Option(TopicOptMaxTopicSize, 2<<30),
		}}, fresh: func() Body { return &UpdateTopic{} }},
		{name: "purge topic", in: &PurgeTopic{StreamID: NamedID("s"), TopicID: NamedID("t")}, fresh: func() Body { return &PurgeTopic{} }, strict: true},
		{name: "topic", in: ptr(sampleTopic(5, 9)), fresh: func() Body { return &Topic{} }, strict: true},
		{name: "topic bare", in: &bare, fresh: func() Body { return &Topic{} }, strict: true},
		{name: "topics empty", in: &Topics{}, fresh: func() Body { return &Topics{} }, strict: true},
		{name: "topics two", in: &Topics{sampleTopic(0, 1), bare}, fresh: func() Body { return &Topics{} }, strict: true},
		{name: "topic details", in: &details, fresh: func() Body { return &TopicDetails{} }, strict: true},
		{name: "topic details no partitions", in: &TopicDetails{Topic: sampleTopic(0, 0)}, fresh: func() Body { return &TopicDetails{} }, strict: true},
	})
}

// TestTopicLayout pins the TopicHeader offsets of commands.md.
func TestTopicLayout(t *testing.T) {
	tp := Topic{ID: 1, CreatedAt: 2, PartitionsCount: 3, MessageExpiry: 4, CompressionAlgorithm: CompressionGzip,
		MaxTopicSize: 5, SizeBytes: 6, MessagesCount: 7, Name: "abc",
		Options: Options{StringOption("a", "b")}, DerivedOptions: Options{BoolOption("c", true)}}
	b := tp.AppendTo(nil)
	o1 := tp.Options.AppendTo(nil)
	o2 := tp.DerivedOptions.AppendTo(nil)
	n := 3
	if len(b) != 50+n+4+len(o1)+4+len(o2) {
		t.Fatalf("length %d", len(b))
	}
	for _, f := range []struct {
		name string
		off  int
		want []byte
	}{
		{"id", 0, appendU32(nil, 1)},
		{"created_at", 4, appendU64(nil, 2)},
		{"partitions_count", 12, appendU32(nil, 3)},
		{"message_expiry", 16, appendU64(nil, 4)},
		{"compression_algorithm", 24, []byte{2}},
		{"max_topic_size", 25, appendU64(nil, 5)},
		{"size_bytes", 33, appendU64(nil, 6)},
		{"messages_count", 41, appendU64(nil, 7)},
		{"name", 49, []byte{3, 'a', 'b', 'c'}},
		{"explicit_options_len", 50 + n, appendU32(nil, uint32(len(o1)))},
		{"explicit options", 54 + n, o1},
		{"derived_options_len", 54 + n + len(o1), appendU32(nil, uint32(len(o2)))},
		{"derived options", 58 + n + len(o1), o2},
	} {
		if got := b[f.off : f.off+len(f.want)]; !bytes.Equal(got, f.want) {
			t.Errorf("%s at %d = %x, want %x", f.name, f.off, got, f.want)
		}
	}
}

// TestCreateTopicLayout pins CREATE_TOPIC's field order.
func TestCreateTopicLayout(t *testing.T) {
	c := CreateTopic{StreamID: NumericID(1), PartitionsCount: 3, Name: "events", Options: Options{BoolOption("k", true)}}
	want := cat(NumericID(1).AppendTo(nil), appendU32(nil, 3), []byte("\x06events"), c.Options.AppendTo(nil))
	if got := c.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}

func TestTopicDetailsCount(t *testing.T) {
	d := TopicDetails{Topic: sampleTopic(1, 42), Partitions: []PartitionInfo{samplePartition(0)}}
	b := d.AppendTo(nil)
	if got := b[12:16]; !bytes.Equal(got, appendU32(nil, 1)) {
		t.Errorf("partitions_count = %x, want 1", got)
	}
	var got TopicDetails
	if err := got.Decode(b); err != nil || got.PartitionsCount != 1 {
		t.Errorf("decoded count %d, %v", got.PartitionsCount, err)
	}
}

func TestTopicDecodeErrors(t *testing.T) {
	tp := sampleTopic(1, 0)
	enc := tp.AppendTo(nil)
	withCount := func(n uint32) []byte {
		b := append([]byte(nil), enc...)
		copy(b[12:16], appendU32(nil, n))
		return b
	}
	withExplicitLen := func(n uint32) []byte {
		b := append([]byte(nil), enc...)
		off := 50 + len(tp.Name)
		copy(b[off:off+4], appendU32(nil, n))
		return b
	}
	for _, tc := range []struct {
		name  string
		fresh Body
		in    []byte
		want  error
	}{
		{"get topic one identifier", &GetTopic{}, NumericID(1).AppendTo(nil), ErrInvalidCommand},
		{"create topic no count", &CreateTopic{}, NumericID(1).AppendTo(nil), ErrInvalidCommand},
		{"create topic no name", &CreateTopic{}, cat(NumericID(1).AppendTo(nil), appendU32(nil, 1)), ErrInvalidCommand},
		{"create topic bad option", &CreateTopic{}, cat(NumericID(1).AppendTo(nil), appendU32(nil, 1), []byte{1, 't'}, tlvField(2, 1, "k")), ErrInvalidCommand},
		{"update topic bad option", &UpdateTopic{}, cat(NumericID(1).AppendTo(nil), NumericID(2).AppendTo(nil), []byte{1, 't'}, []byte{2}), ErrInvalidCommand},
		{"topic truncated", &Topic{}, enc[:49], ErrInvalidCommand},
		{"topic explicit len past end", &Topic{}, withExplicitLen(1000), ErrInvalidCommand},
		{"topic explicit len over limit", &Topic{}, withExplicitLen(MaxOptionsBlockBytes + 1), ErrOptionsBlockTooLarge},
		{"details partitions missing", &TopicDetails{}, withCount(1), ErrInvalidCommand},
		{"details huge count", &TopicDetails{}, withCount(0xffffffff), ErrInvalidCommand},
		{"details partial partition", &TopicDetails{}, cat(withCount(1), make([]byte, PartitionInfoLen-1)), ErrInvalidCommand},
		{"topics count too high", &Topics{}, cat(appendU32(nil, 2), enc), ErrInvalidCommand},
		{"topics huge count", &Topics{}, cat(appendU32(nil, 0xffffffff), enc), ErrInvalidCommand},
		{"topics no count", &Topics{}, nil, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fresh.Decode(tc.in); !errors.Is(err, tc.want) {
				t.Errorf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTopicValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    interface{ Validate() error }
		want error
	}{
		{"get ok", &GetTopic{StreamID: NumericID(1), TopicID: NamedID("t")}, nil},
		{"get bad topic id", &GetTopic{StreamID: NumericID(1)}, ErrInvalidIdentifier},
		{"get bad stream id", &GetTopic{TopicID: NumericID(1)}, ErrInvalidIdentifier},
		{"get topics bad id", &GetTopics{}, ErrInvalidIdentifier},
		{"create ok", &CreateTopic{StreamID: NumericID(1), PartitionsCount: 1000, Name: "t"}, nil},
		{"create zero partitions", &CreateTopic{StreamID: NumericID(1), Name: "t"}, nil},
		{"create 1001 partitions", &CreateTopic{StreamID: NumericID(1), PartitionsCount: 1001, Name: "t"}, ErrTooManyPartitions},
		{"create bad name", &CreateTopic{StreamID: NumericID(1), Name: ""}, ErrInvalidTopicName},
		{"create bad stream", &CreateTopic{Name: "t"}, ErrInvalidIdentifier},
		{"create bad options", &CreateTopic{StreamID: NumericID(1), Name: "t", Options: Options{StringOption("a", ""), StringOption("a", "")}}, ErrInvalidCommand},
		{"delete bad id", &DeleteTopic{StreamID: NumericID(1)}, ErrInvalidIdentifier},
		{"update ok", &UpdateTopic{StreamID: NumericID(1), TopicID: NumericID(1), Name: "t"}, nil},
		{"update bad name", &UpdateTopic{StreamID: NumericID(1), TopicID: NumericID(1), Name: longName + "x"}, ErrInvalidTopicName},
		{"update bad id", &UpdateTopic{StreamID: NumericID(1), Name: "t"}, ErrInvalidIdentifier},
		{"update bad options", &UpdateTopic{StreamID: NumericID(1), TopicID: NumericID(1), Name: "t", Options: manyOptions(400, 250)}, ErrOptionsBlockTooLarge},
		{"purge bad id", &PurgeTopic{TopicID: NumericID(1)}, ErrInvalidIdentifier},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.v.Validate(); !sameErr(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func benchTopicDetails() TopicDetails {
	d := TopicDetails{Topic: sampleTopic(1, 0)}
	for i := range uint32(16) {
		d.Partitions = append(d.Partitions, samplePartition(i))
	}
	return d
}

func BenchmarkEncodeTopicDetails(b *testing.B) {
	d := benchTopicDetails()
	buf := d.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = d.AppendTo(buf[:0])
	}
}

func BenchmarkDecodeTopicDetails(b *testing.B) {
	d := benchTopicDetails()
	buf := d.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var got TopicDetails
	for b.Loop() {
		if err := got.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCreateTopic(b *testing.B) {
	c := CreateTopic{StreamID: NumericID(1), PartitionsCount: 3, Name: "events", Options: Options{
		StringOption(TopicOptCompressionAlgorithm, "gzip"), Uint64Option(TopicOptMessageExpiry, 3600000000), Uint64Option(TopicOptMaxTopicSize, 1<<30),
	}}
	buf := c.AppendTo(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var got CreateTopic
	for b.Loop() {
		if err := got.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewTopicOptions(b *testing.B) {
	o := Options{StringOption(TopicOptCompressionAlgorithm, "gzip"), StringOption(TopicOptMessageExpiry, "7 days"), StringOption(TopicOptSegmentSize, "128MiB")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTopicOptions(o, 3); err != nil {
			b.Fatal(err)
		}
	}
}
