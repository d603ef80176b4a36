package wire

import (
	"bytes"
	"testing"
)

// encodingsExamplePermissions is the worked example of encodings.md,
// "Permissions (binary)", with its 32 bytes.
var (
	encodingsExamplePermissions = Permissions{
		Global: GlobalPermissions{ReadServers: true, ReadUsers: true, ReadStreams: true, PollMessages: true},
		Streams: []StreamPermissions{{
			StreamID: 1, ReadStream: true, SendMessages: true,
			Topics: []TopicPermissions{{TopicID: 2, ManageTopic: true, PollMessages: true}},
		}},
	}
	encodingsExampleBytes = sysHex("00 01 00 01 00 01 00 00 01 00  01  01000000 00 01 00 00 00 01  01  02000000 01 00 01 00  00  00")
)

var samplePermissions = map[string]Permissions{
	"none":              {},
	"encodings example": encodingsExamplePermissions,
	"all global":        {Global: GlobalPermissions{true, true, true, true, true, true, true, true, true, true}},
	"streams without topics": {Streams: []StreamPermissions{
		{StreamID: 0, ManageStream: true},
		{StreamID: 7, ReadTopics: true, PollMessages: true},
	}},
	"unsorted streams and topics (Go SDK map order)": {
		Global: GlobalPermissions{SendMessages: true},
		Streams: []StreamPermissions{
			{StreamID: 9, ManageTopics: true, Topics: []TopicPermissions{{TopicID: 3, ReadTopic: true}, {TopicID: 1, SendMessages: true}, {TopicID: 2}}},
			{StreamID: 4},
			{StreamID: 1 << 19, SendMessages: true, Topics: []TopicPermissions{{TopicID: 4095, ManageTopic: true, ReadTopic: true, PollMessages: true, SendMessages: true}}},
		},
	},
	"max topics in a stream": {Streams: []StreamPermissions{{StreamID: 1, Topics: permTopicRange(MaxPermissionTopics)}}},
}

// permTopicRange returns n topic entries with ids 0..n-1.
func permTopicRange(n int) []TopicPermissions {
	ts := make([]TopicPermissions, n)
	for i := range ts {
		ts[i] = TopicPermissions{TopicID: uint32(i), ReadTopic: i%2 == 0}
	}
	return ts
}

func TestPermissionsRoundTrip(t *testing.T) {
	for name, p := range samplePermissions {
		t.Run(name, func(t *testing.T) {
			if err := p.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			enc := sysRoundTrip(t, &p, &Permissions{})
			if len(enc) != p.EncodedLen() {
				t.Errorf("encoded %d bytes, EncodedLen %d", len(enc), p.EncodedLen())
			}
		})
	}
}

func TestPermissionsEncodingsExample(t *testing.T) {
	if len(encodingsExampleBytes) != 32 {
		t.Fatalf("fixture is %d bytes", len(encodingsExampleBytes))
	}
	p := encodingsExamplePermissions
	checkBody(t, encodingsExampleBytes, &p, &Permissions{})
	if p.EncodedLen() != 11+12+9 {
		t.Errorf("EncodedLen = %d", p.EncodedLen())
	}
}

// TestPermissionsLenientBooleans checks that any non-zero boolean byte
// reads as true (the reference decoder's rule) and re-encodes as 1.
func TestPermissionsLenientBooleans(t *testing.T) {
	b := bytes.Clone(encodingsExampleBytes)
	b[0] = 0x02  // manage_servers
	b[17] = 0xff // stream manage_topics
	b[27] = 0x80 // topic read_topic
	var p Permissions
	if err := p.Decode(b); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !p.Global.ManageServers || !p.Streams[0].ManageTopics || !p.Streams[0].Topics[0].ReadTopic {
		t.Errorf("non-zero booleans not read as true: %+v", p)
	}
	want := bytes.Clone(b)
	want[0], want[17], want[27] = 1, 1, 1
	if got := p.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("re-encode:\n got %x\nwant %x", got, want)
	}
}

func TestPermissionsDecodeErrors(t *testing.T) {
	ex := encodingsExampleBytes
	with := func(off int, v byte) []byte { b := bytes.Clone(ex); b[off] = v; return b }
	dupStreams := Permissions{Streams: []StreamPermissions{{StreamID: 5}, {StreamID: 6}, {StreamID: 5}}}
	dupTopics := Permissions{Streams: []StreamPermissions{{StreamID: 5, Topics: []TopicPermissions{{TopicID: 2}, {TopicID: 1}, {TopicID: 2}}}}}
	tooManyTopics := Permissions{Streams: []StreamPermissions{{StreamID: 1, Topics: permTopicRange(MaxPermissionTopics + 1)}}}
	dec := (&Permissions{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "global only", body: ex[:10], dec: dec},
		{name: "has_streams 2", body: sysHex("00000000000000000000 02"), dec: dec},
		{name: "has_streams without entry", body: sysHex("00000000000000000000 01"), dec: dec},
		{name: "stream entry truncated", body: ex[:18], dec: dec},
		{name: "has_topics 2", body: with(21, 2), dec: dec},
		{name: "topic entry truncated", body: ex[:27], dec: dec},
		{name: "has_next_topic 2", body: with(30, 2), dec: dec},
		{name: "has_next_topic 1 without entry", body: with(30, 1), dec: dec},
		{name: "has_next_stream 2", body: with(31, 2), dec: dec},
		{name: "has_next_stream 1 without entry", body: with(31, 1), dec: dec},
		{name: "missing has_next_stream", body: ex[:31], dec: dec},
		{name: "trailing byte", body: append(bytes.Clone(ex), 0), dec: dec},
		{name: "repeated stream id", body: dupStreams.AppendTo(nil), dec: dec},
		{name: "repeated topic id", body: dupTopics.AppendTo(nil), dec: dec},
		{name: "too many topics", body: tooManyTopics.AppendTo(nil), dec: dec},
	})
}

// TestPermissionsTooManyStreams builds MaxPermissionStreams+1 stream entries
// (about 12 MiB) and checks the decoder refuses them while accepting the
// maximum.
func TestPermissionsTooManyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 12 MiB permission set")
	}
	p := Permissions{Streams: make([]StreamPermissions, MaxPermissionStreams+1)}
	for i := range p.Streams {
		p.Streams[i].StreamID = uint32(i)
	}
	if err := p.Validate(); err == nil {
		t.Errorf("Validate accepted %d streams", len(p.Streams))
	}
	if err := (&Permissions{}).Decode(p.AppendTo(nil)); err == nil {
		t.Errorf("decode accepted %d streams", len(p.Streams))
	}
	p.Streams = p.Streams[:MaxPermissionStreams]
	if err := p.Validate(); err != nil {
		t.Errorf("Validate of the maximum: %v", err)
	}
	var back Permissions
	if err := back.Decode(p.AppendTo(nil)); err != nil || len(back.Streams) != MaxPermissionStreams {
		t.Errorf("decode of the maximum: %v, %d streams", err, len(back.Streams))
	}
}

func TestPermissionsValidate(t *testing.T) {
	v := func(p Permissions) func() error { return p.Validate }
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: v(samplePermissions["unsorted streams and topics (Go SDK map order)"])},
		{name: "empty", validate: v(Permissions{})},
		{name: "repeated stream id", validate: v(Permissions{Streams: []StreamPermissions{{StreamID: 1}, {StreamID: 1}}}), want: ErrInvalidCommand},
		{name: "repeated topic id", validate: v(Permissions{Streams: []StreamPermissions{{StreamID: 1, Topics: []TopicPermissions{{TopicID: 3}, {TopicID: 3}}}}}), want: ErrInvalidCommand},
		{name: "same topic id in two streams", validate: v(Permissions{Streams: []StreamPermissions{{StreamID: 1, Topics: []TopicPermissions{{TopicID: 3}}}, {StreamID: 2, Topics: []TopicPermissions{{TopicID: 3}}}}})},
		{name: "too many topics", validate: v(Permissions{Streams: []StreamPermissions{{Topics: permTopicRange(MaxPermissionTopics + 1)}}}), want: ErrInvalidCommand},
	})
}

// TestPermissionsValidateKeepsOrder checks Validate does not reorder the
// caller's entries while looking for repeated ids.
func TestPermissionsValidateKeepsOrder(t *testing.T) {
	p := samplePermissions["unsorted streams and topics (Go SDK map order)"]
	before := p.AppendTo(nil)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if after := p.AppendTo(nil); !bytes.Equal(before, after) {
		t.Errorf("Validate changed the encoding")
	}
}

func TestHasRepeatedID(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []uint32
		want bool
	}{
		{"empty", nil, false},
		{"one", []uint32{4}, false},
		{"ascending", []uint32{0, 1, 5}, false},
		{"descending", []uint32{5, 1, 0}, false},
		{"adjacent repeat", []uint32{1, 1}, true},
		{"distant repeat", []uint32{3, 9, 1, 3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasRepeatedID(tc.ids); got != tc.want {
				t.Errorf("hasRepeatedID(%v) = %v", tc.ids, got)
			}
		})
	}
}
