package replicated

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// sampleSnapshot has offsets, a purge identity and a window with an empty
// client, a short one and a full one.
func sampleSnapshot() partSnapshot {
	full := session.ClientWindow{Client: wire.Uint128{Lo: 3, Hi: 1 << 60}, Watermark: 1000}
	for r := uint64(1000 - session.PartitionWindowSize + 1); r <= 1000; r++ {
		full.Committed = append(full.Committed, session.CommittedRequest{Request: r, BodyHash: r ^ 0xfeed})
	}
	return partSnapshot{
		next: 77, ts: 1234567, purge: 9, tier: []byte("remote tier state"),
		offsets: []storage.OffsetEntry{{Kind: storage.KindConsumer, ID: 1, Offset: 5}, {Kind: storage.KindGroup, ID: 2, Offset: 70}},
		window: []session.ClientWindow{
			{Client: wire.Uint128{Lo: 1}, Watermark: 0, Committed: []session.CommittedRequest{}},
			{Client: wire.Uint128{Lo: 2}, Watermark: 8, Committed: []session.CommittedRequest{{Request: 7, BodyHash: 70}, {Request: 8, BodyHash: 80}}},
			full,
		},
	}
}

// encodeV3 is the version 3 layout (no tier state).
func encodeV3(s partSnapshot) []byte {
	b := s.encode()
	b[0] = snapshotVersion3
	return b[:len(b)-4-len(s.tier)]
}

// encodeV2 is the version 2 layout (no purge identity, no window).
func encodeV2(s partSnapshot) []byte {
	b := []byte{snapshotVersion2}
	b = binary.LittleEndian.AppendUint64(b, s.next)
	b = binary.LittleEndian.AppendUint64(b, s.ts)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.offsets)))
	for _, o := range s.offsets {
		b = append(b, uint8(o.Kind))
		b = binary.LittleEndian.AppendUint32(b, o.ID)
		b = binary.LittleEndian.AppendUint64(b, o.Offset)
	}
	return b
}

func TestSnapshotV4RoundTrip(t *testing.T) {
	s := sampleSnapshot()
	b := s.encode()
	want := snapshotHeadLen + 2*snapshotOffsetLen + 4 + 3*snapshotClientLen + (2+session.PartitionWindowSize)*snapshotIDLen + 4 + len(s.tier)
	if b[0] != 4 || len(b) != want {
		t.Fatalf("version %d, %d bytes, want version 4 in %d", b[0], len(b), want)
	}
	// The fixed fields sit where the layout says.
	if binary.LittleEndian.Uint64(b[17:]) != 9 || binary.LittleEndian.Uint32(b[25:]) != 2 {
		t.Fatal("purge identity or offset count misplaced")
	}
	clients := snapshotHeadLen + 2*snapshotOffsetLen
	if binary.LittleEndian.Uint32(b[clients:]) != 3 || binary.LittleEndian.Uint64(b[clients+4+snapshotClientLen:]) != 2 {
		t.Fatal("client count or second client id misplaced")
	}
	got, err := decodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n%+v\n%+v", got, s)
	}
	empty, err := decodeSnapshot(partSnapshot{}.encode())
	if err != nil || empty.next != 0 || len(empty.offsets) != 0 || len(empty.window) != 0 || empty.purge != 0 {
		t.Fatalf("empty snapshot: %+v %v", empty, err)
	}
}

func TestSnapshotV3StillDecodes(t *testing.T) {
	s := sampleSnapshot()
	got, err := decodeSnapshot(encodeV3(s))
	if err != nil {
		t.Fatal(err)
	}
	s.tier = nil
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("version 3:\n%+v\n%+v", got, s)
	}
	if _, err := decodeSnapshot(append(encodeV3(s), 0)); err == nil {
		t.Fatal("a version 3 snapshot with a trailing byte decoded")
	}
}

func TestSnapshotV2StillDecodes(t *testing.T) {
	s := sampleSnapshot()
	got, err := decodeSnapshot(encodeV2(s))
	if err != nil {
		t.Fatal(err)
	}
	if got.next != s.next || got.ts != s.ts || got.purge != 0 || got.window != nil || !reflect.DeepEqual(got.offsets, s.offsets) {
		t.Fatalf("version 2: %+v", got)
	}
	if _, err := decodeSnapshot(append(encodeV2(s), 0)); err == nil {
		t.Fatal("a version 2 snapshot with a trailing byte decoded")
	}
}

// TestSnapshotEncodeBounds: past snapshotWindowClients the least recent
// clients are left out, and a client keeps its newest requests.
func TestSnapshotEncodeBounds(t *testing.T) {
	var s partSnapshot
	for i := range snapshotWindowClients + 3 {
		s.window = append(s.window, session.ClientWindow{Client: wire.Uint128{Lo: uint64(i)}, Watermark: 1,
			Committed: []session.CommittedRequest{{Request: 1, BodyHash: 1}}})
	}
	long := &s.window[len(s.window)-1]
	for r := uint64(2); r <= 200; r++ {
		long.Committed = append(long.Committed, session.CommittedRequest{Request: r})
	}
	got, err := decodeSnapshot(s.encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.window) != snapshotWindowClients || got.window[0].Client.Lo != 3 {
		t.Fatalf("%d clients, first %d; want %d from 3", len(got.window), got.window[0].Client.Lo, snapshotWindowClients)
	}
	last := got.window[len(got.window)-1].Committed
	if len(last) != session.PartitionWindowSize || last[0].Request != 200-session.PartitionWindowSize+1 {
		t.Fatalf("long client kept %d requests from %d", len(last), last[0].Request)
	}
}

func TestSnapshotDecodeRejects(t *testing.T) {
	good := sampleSnapshot().encode()
	clients := snapshotHeadLen + 2*snapshotOffsetLen
	patch := func(at int, v ...byte) []byte {
		b := bytes.Clone(good)
		copy(b[at:], v)
		return b
	}
	one := partSnapshot{window: sampleSnapshot().window[1:2]}.encode()
	dup := sampleSnapshot()
	dup.window[1].Client = dup.window[0].Client
	for name, b := range map[string][]byte{
		"empty":              nil,
		"version 1":          patch(0, 1),
		"version 5":          patch(0, 5),
		"tier length":        append(bytes.Clone(good[:len(good)-4-len("remote tier state")]), 0xff, 0xff, 0xff, 0x7f),
		"no tier length":     good[:len(good)-4-len("remote tier state")],
		"short head":         good[:snapshotHeadLen-1],
		"offset count":       patch(25, 0xff, 0xff, 0xff, 0xff),
		"consumer kind":      patch(snapshotHeadLen, 9),
		"no client count":    good[:clients],
		"client count":       patch(clients, 0xff, 0xff, 0xff, 0x0f),
		"too many requests":  patch(clients+4+snapshotClientLen-1, session.PartitionWindowSize+1),
		"requests past end":  one[:len(one)-snapshotIDLen],
		"truncated":          good[:len(good)-1],
		"trailing byte":      append(bytes.Clone(good), 0),
		"client listed once": dup.encode(),
	} {
		if s, err := decodeSnapshot(b); err == nil {
			t.Errorf("%s: decoded %+v", name, s)
		}
	}
}

// FuzzSnapshotDecode: decoding never panics; a decoded version 4 snapshot
// encodes to the same bytes, a version 2 or 3 one to a version 4
// snapshot that decodes to it.
func FuzzSnapshotDecode(f *testing.F) {
	f.Add(sampleSnapshot().encode())
	f.Add(partSnapshot{}.encode())
	f.Add(encodeV2(sampleSnapshot()))
	f.Add(encodeV3(sampleSnapshot()))
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			return
		}
		again := s.encode()
		if b[0] == snapshotVersion && !bytes.Equal(again, b) {
			t.Fatalf("re-encoded\n%x\nfrom\n%x", again, b)
		}
		s2, err := decodeSnapshot(again)
		if err != nil {
			t.Fatalf("re-encoded snapshot does not decode: %v", err)
		}
		if len(s.window) == 0 {
			s.window, s2.window = nil, nil
		}
		if len(s.offsets) == 0 {
			s.offsets, s2.offsets = nil, nil
		}
		if !reflect.DeepEqual(s, s2) {
			t.Fatalf("decoded\n%+v\nthen\n%+v", s, s2)
		}
	})
}
