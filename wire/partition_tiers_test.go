package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func samplePartitionTiers() PartitionTiersReply {
	return PartitionTiersReply{Partitions: []PartitionTiers{
		{PartitionID: 1, LocalBytes: 3 << 20, RemoteBytes: 10 << 30, RemoteOnlyBytes: 9 << 30, PendingBytes: 1 << 20,
			RemoteSegments: 10, PendingSegments: 1},
		{PartitionID: 2, LocalBytes: 4096},
		{PartitionID: 3, LocalBytes: ^uint64(0), RemoteBytes: ^uint64(0), RemoteOnlyBytes: ^uint64(0), PendingBytes: ^uint64(0),
			RemoteSegments: ^uint32(0), PendingSegments: ^uint32(0)},
	}}
}

func TestGetPartitionTiersBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   GetPartitionTiers
		hex  string
	}{
		{name: "numeric", in: GetPartitionTiers{StreamID: NumericID(1), TopicID: NumericID(2)},
			hex: "010401000000" + "010402000000"},
		{name: "named", in: GetPartitionTiers{StreamID: NamedID("s"), TopicID: NamedID("tp")},
			hex: "020173" + "02027470"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.in.AppendTo(nil)
			if got := hex.EncodeToString(b); got != tc.hex {
				t.Fatalf("encoding %s, want %s", got, tc.hex)
			}
			var out GetPartitionTiers
			if err := out.Decode(append(b, 9, 9)); err != nil || !reflect.DeepEqual(out, tc.in) {
				t.Fatalf("decode with trailing bytes: %+v %v", out, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{name: "empty", body: nil},
		{name: "no topic", body: NumericID(1).AppendTo(nil)},
		{name: "bad kind", body: []byte{3, 4, 1, 0, 0, 0, 1, 4, 1, 0, 0, 0}},
		{name: "short topic", body: append(NumericID(1).AppendTo(nil), 1, 4, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out GetPartitionTiers
			if err := out.Decode(tc.body); err == nil {
				t.Fatalf("decoded %+v", out)
			}
		})
	}
}

func TestPartitionTiersReplyRoundTrip(t *testing.T) {
	for name, r := range map[string]PartitionTiersReply{
		"sample": samplePartitionTiers(),
		"empty":  {},
	} {
		t.Run(name, func(t *testing.T) {
			b := r.AppendTo(nil)
			if want := 4 + len(r.Partitions)*partitionTiersSize; len(b) != want {
				t.Fatalf("encoded %d bytes, want %d", len(b), want)
			}
			var out PartitionTiersReply
			if err := out.Decode(b); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(out, r) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", out, r)
			}
			if !bytes.Equal(out.AppendTo(nil), b) {
				t.Fatal("re-encoding differs")
			}
		})
	}
}

// TestPartitionTiersReplyLayout pins the bytes of a one-partition reply.
func TestPartitionTiersReplyLayout(t *testing.T) {
	r := PartitionTiersReply{Partitions: []PartitionTiers{{PartitionID: 2, LocalBytes: 3, RemoteBytes: 4,
		RemoteOnlyBytes: 5, PendingBytes: 6, RemoteSegments: 7, PendingSegments: 8}}}
	want := "01000000" + "02000000" + "0300000000000000" + "0400000000000000" + "0500000000000000" +
		"0600000000000000" + "07000000" + "08000000"
	if got := hex.EncodeToString(r.AppendTo(nil)); got != want {
		t.Fatalf("layout\n got %s\nwant %s", got, want)
	}
	// AppendTo appends.
	if got := r.AppendTo([]byte{0xaa}); got[0] != 0xaa || hex.EncodeToString(got[1:]) != want {
		t.Fatalf("append to a prefix: %x", got)
	}
}

func TestPartitionTiersReplyRejects(t *testing.T) {
	enc := func() []byte { s := samplePartitionTiers(); return s.AppendTo(nil) }
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{name: "empty", body: nil},
		{name: "short count", body: []byte{1, 0, 0}},
		{name: "trailing byte", body: append(enc(), 0)},
		{name: "truncated", body: func() []byte { b := enc(); return b[:len(b)-1] }()},
		{name: "count beyond body", body: []byte{0xff, 0xff, 0xff, 0x0f}},
		{name: "count below body", body: func() []byte { b := enc(); b[0] = 2; return b }()},
		{name: "too many partitions", body: func() []byte {
			b := appendU32(nil, MaxTierPartitions+1)
			return append(b, make([]byte, (MaxTierPartitions+1)*partitionTiersSize)...)
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out PartitionTiersReply
			if err := out.Decode(tc.body); !errors.Is(err, ErrInvalidCommand) {
				t.Fatalf("decode: %v (%+v)", err, out)
			}
			if out.Partitions != nil {
				t.Fatalf("rejected reply kept partitions: %+v", out)
			}
		})
	}
}

func TestPartitionTiersReplyCaps(t *testing.T) {
	r := PartitionTiersReply{Partitions: make([]PartitionTiers, MaxTierPartitions+2)}
	var out PartitionTiersReply
	if err := out.Decode(r.AppendTo(nil)); err != nil || len(out.Partitions) != MaxTierPartitions {
		t.Fatalf("decode: %d partitions, %v", len(out.Partitions), err)
	}
}

func TestPartitionTiersTotal(t *testing.T) {
	p := PartitionTiers{LocalBytes: 10, RemoteBytes: 25, RemoteOnlyBytes: 20}
	if got := p.TotalBytes(); got != 30 {
		t.Fatalf("total %d, want 30", got)
	}
}

func FuzzGetPartitionTiers(f *testing.F) {
	f.Add((&GetPartitionTiers{StreamID: NumericID(1), TopicID: NamedID("t")}).AppendTo(nil))
	f.Add((&GetPartitionTiers{StreamID: NamedID("s"), TopicID: NumericID(1)}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var g GetPartitionTiers
		if g.Decode(b) == nil {
			var again GetPartitionTiers
			if err := again.Decode(g.AppendTo(nil)); err != nil || !reflect.DeepEqual(again, g) {
				t.Fatalf("re-decode: %+v %v", again, err)
			}
		}
	})
}

func FuzzPartitionTiersReply(f *testing.F) {
	s := samplePartitionTiers()
	f.Add(s.AppendTo(nil))
	f.Add((&PartitionTiersReply{}).AppendTo(nil))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r PartitionTiersReply
		if r.Decode(b) != nil {
			return
		}
		enc := r.AppendTo(nil)
		if !bytes.Equal(enc, b) {
			t.Fatalf("re-encoding differs")
		}
		var again PartitionTiersReply
		if err := again.Decode(enc); err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
