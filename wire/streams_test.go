package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var (
	longName = strings.Repeat("n", MaxNameLen)
	utfName  = "zamówienia-注文"
)

func sampleStream(id uint32, topics uint32) Stream {
	return Stream{ID: id, CreatedAt: 1700000000000000 + uint64(id), TopicsCount: topics, SizeBytes: 1 << 40, MessagesCount: 1<<63 + 5, Name: "stream-" + itoa(uint64(id))}
}

func TestStreamRoundTrip(t *testing.T) {
	withOpts := sampleStream(7, 0)
	withOpts.Options = Options{StringOption("future-key", "v")}
	details := StreamDetails{Stream: sampleStream(1, 2), Topics: []Topic{sampleTopic(0, 1), sampleTopic(1, 0)}}
	runRoundTrips(t, []roundTripCase{
		{name: "get stream numeric", in: &GetStream{StreamID: NumericID(0)}, fresh: func() Body { return &GetStream{} }, strict: true},
		{name: "get stream named", in: &GetStream{StreamID: NamedID(longName)}, fresh: func() Body { return &GetStream{} }, strict: true},
		{name: "create stream", in: &CreateStream{Name: utfName}, fresh: func() Body { return &CreateStream{} }},
		{name: "create stream with options", in: &CreateStream{Name: "s", Options: Options{StringOption("k", "v")}}, fresh: func() Body { return &CreateStream{} }},
		{name: "delete stream", in: &DeleteStream{StreamID: NamedID("orders")}, fresh: func() Body { return &DeleteStream{} }, strict: true},
		{name: "update stream", in: &UpdateStream{StreamID: NumericID(1<<20 - 1), Name: longName}, fresh: func() Body { return &UpdateStream{} }},
		{name: "update stream with options", in: &UpdateStream{StreamID: NumericID(3), Name: "x", Options: Options{BoolOption("b", true)}}, fresh: func() Body { return &UpdateStream{} }},
		{name: "purge stream", in: &PurgeStream{StreamID: NumericID(9)}, fresh: func() Body { return &PurgeStream{} }, strict: true},
		{name: "stream", in: ptr(sampleStream(3, 17)), fresh: func() Body { return &Stream{} }, strict: true},
		{name: "stream with options", in: &withOpts, fresh: func() Body { return &Stream{} }, strict: true},
		{name: "stream details no topics", in: &StreamDetails{Stream: sampleStream(1, 0)}, fresh: func() Body { return &StreamDetails{} }, strict: true},
		{name: "stream details two topics", in: &details, fresh: func() Body { return &StreamDetails{} }, strict: true},
		{name: "streams empty", in: &Streams{}, fresh: func() Body { return &Streams{} }},
		{name: "streams three", in: &Streams{sampleStream(0, 0), withOpts, sampleStream(2, 5)}, fresh: func() Body { return &Streams{} }},
	})
}

// TestStreamLayout pins the StreamHeader offsets of commands.md.
func TestStreamLayout(t *testing.T) {
	s := Stream{ID: 0x11223344, CreatedAt: 0x0102030405060708, TopicsCount: 5, SizeBytes: 6, MessagesCount: 7, Name: "ab", Options: Options{StringOption("k", "v")}}
	b := s.AppendTo(nil)
	opts := s.Options.AppendTo(nil)
	if len(b) != 33+2+4+len(opts) {
		t.Fatalf("length %d", len(b))
	}
	for _, f := range []struct {
		name string
		off  int
		want []byte
	}{
		{"id", 0, appendU32(nil, 0x11223344)},
		{"created_at", 4, appendU64(nil, 0x0102030405060708)},
		{"topics_count", 12, appendU32(nil, 5)},
		{"size_bytes", 16, appendU64(nil, 6)},
		{"messages_count", 24, appendU64(nil, 7)},
		{"name", 32, []byte{2, 'a', 'b'}},
		{"options_len", 35, appendU32(nil, uint32(len(opts)))},
		{"options", 39, opts},
	} {
		if got := b[f.off : f.off+len(f.want)]; !bytes.Equal(got, f.want) {
			t.Errorf("%s at %d = %x, want %x", f.name, f.off, got, f.want)
		}
	}
}

// TestStreamDetailsCount checks that topics_count on the wire is the
// number of topics, whatever the embedded field says.
func TestStreamDetailsCount(t *testing.T) {
	d := StreamDetails{Stream: sampleStream(1, 99), Topics: []Topic{sampleTopic(0, 0)}}
	b := d.AppendTo(nil)
	if got := b[12:16]; !bytes.Equal(got, appendU32(nil, 1)) {
		t.Errorf("topics_count = %x, want 1", got)
	}
	var got StreamDetails
	if err := got.Decode(b); err != nil || got.TopicsCount != 1 {
		t.Errorf("decoded count %d, %v", got.TopicsCount, err)
	}
}

func TestStreamDecodeErrors(t *testing.T) {
	stream := sampleStream(1, 0)
	enc := stream.AppendTo(nil)
	nameOff := 32
	withCount := func(n uint32) []byte {
		b := append([]byte(nil), enc...)
		copy(b[12:16], appendU32(nil, n))
		return b
	}
	for _, tc := range []struct {
		name  string
		fresh Body
		in    []byte
		want  error
	}{
		{"get stream empty", &GetStream{}, nil, ErrInvalidCommand},
		{"get stream bad kind", &GetStream{}, []byte{3, 4, 1, 0, 0, 0}, ErrInvalidCommand},
		{"get stream numeric len 2", &GetStream{}, []byte{1, 2, 1, 0}, ErrInvalidCommand},
		{"get stream empty name", &GetStream{}, []byte{2, 0}, ErrInvalidCommand},
		{"get stream bad utf-8", &GetStream{}, []byte{2, 1, 0xff}, ErrInvalidCommand},
		{"create stream empty", &CreateStream{}, nil, ErrInvalidCommand},
		{"create stream zero-length name", &CreateStream{}, []byte{0}, ErrInvalidCommand},
		{"create stream name past end", &CreateStream{}, []byte{5, 'a'}, ErrInvalidCommand},
		{"create stream bad option", &CreateStream{}, cat([]byte{1, 's'}, tlvField(1, 1, "k"), tlvField(1, 1, "v")), ErrInvalidCommand},
		{"create stream options too big", &CreateStream{}, cat([]byte{1, 's'}, make([]byte, MaxOptionsBlockBytes+1)), ErrOptionsBlockTooLarge},
		{"update stream no name", &UpdateStream{}, NumericID(1).AppendTo(nil), ErrInvalidCommand},
		{"stream name zero", &Stream{}, cat(enc[:nameOff], []byte{0}), ErrInvalidCommand},
		{"stream no options length", &Stream{}, enc[:len(enc)-4], ErrInvalidCommand},
		{"details topics missing", &StreamDetails{}, withCount(1), ErrInvalidCommand},
		{"details huge count", &StreamDetails{}, withCount(0xffffffff), ErrInvalidCommand},
		{"streams partial element", &Streams{}, cat(enc, enc[:10]), ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fresh.Decode(tc.in); !errors.Is(err, tc.want) {
				t.Errorf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestStreamValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    interface{ Validate() error }
		want error
	}{
		{"get ok", &GetStream{StreamID: NamedID("a")}, nil},
		{"get zero identifier", &GetStream{}, ErrInvalidIdentifier},
		{"get long name", &GetStream{StreamID: NamedID(longName + "x")}, ErrInvalidIdentifier},
		{"create ok", &CreateStream{Name: utfName}, nil},
		{"create empty name", &CreateStream{}, ErrInvalidStreamName},
		{"create long name", &CreateStream{Name: longName + "x"}, ErrInvalidStreamName},
		{"create bad utf-8", &CreateStream{Name: "\xff"}, ErrInvalidStreamName},
		{"create bad options", &CreateStream{Name: "s", Options: Options{{Key: "k"}}}, ErrInvalidCommand},
		{"delete bad id", &DeleteStream{StreamID: Identifier{Kind: 9}}, ErrInvalidIdentifier},
		{"update ok", &UpdateStream{StreamID: NumericID(1), Name: "n"}, nil},
		{"update bad id", &UpdateStream{Name: "n"}, ErrInvalidIdentifier},
		{"update bad name", &UpdateStream{StreamID: NumericID(1)}, ErrInvalidStreamName},
		{"update too many options", &UpdateStream{StreamID: NumericID(1), Name: "n", Options: manyOptions(MaxOptionPairs+1, 1)}, ErrOptionsBlockTooLarge},
		{"purge bad id", &PurgeStream{StreamID: NamedID("")}, ErrInvalidIdentifier},
		{"purge ok", &PurgeStream{StreamID: NumericID(0)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.v.Validate(); !sameErr(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeIfPresent(t *testing.T) {
	details := StreamDetails{Stream: sampleStream(1, 0)}
	for _, tc := range []struct {
		name      string
		payload   []byte
		wantFound bool
		wantErr   error
	}{
		{"empty is not found", nil, false, nil},
		{"present", details.AppendTo(nil), true, nil},
		{"garbage", []byte{1, 2, 3}, false, ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got StreamDetails
			found, err := DecodeIfPresent(tc.payload, &got)
			if found != tc.wantFound || !sameErr(err, tc.wantErr) {
				t.Fatalf("got %v, %v; want %v, %v", found, err, tc.wantFound, tc.wantErr)
			}
			if found {
				if d := cmpDiff(details, got); d != "" {
					t.Error(d)
				}
			}
		})
	}
}
