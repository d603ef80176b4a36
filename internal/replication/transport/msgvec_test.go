package transport

import (
	"bytes"
	"testing"
	"unsafe"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// wireOf is what a vectored flush writes: buf with ext in place.
func wireOf(buf []byte, ext []extData) []byte {
	var out []byte
	for _, v := range vectors(buf, ext) {
		out = append(out, v...)
	}
	return out
}

// mixedMsgApp is a MsgApp with a large entry between small ones, an
// entry without data and one with empty data.
func mixedMsgApp() *raftpb.Message {
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB
	return &raftpb.Message{
		Type: raftpb.MsgApp.Enum(), To: new(uint64(2)), From: new(uint64(1)), Term: new(uint64(3)),
		LogTerm: new(uint64(3)), Index: new(uint64(41)), Commit: new(uint64(40)), Context: []byte("ctx"),
		Entries: []*raftpb.Entry{
			{Type: raftpb.EntryNormal.Enum(), Index: new(uint64(42)), Term: new(uint64(3)), Data: []byte("small")},
			{Type: raftpb.EntryNormal.Enum(), Index: new(uint64(43)), Term: new(uint64(3)), Data: big},
			{Index: new(uint64(44)), Term: new(uint64(3))},
			{Type: raftpb.EntryConfChangeV2.Enum(), Index: new(uint64(45)), Term: new(uint64(3)), Data: []byte{}},
			{Type: raftpb.EntryNormal.Enum(), Index: new(uint64(46)), Term: new(uint64(3)), Data: big[:vecMinBytes]},
		},
	}
}

// TestMsgVecRoundTrip: a message with large entries is written without
// copying their data, its bytes are a valid protobuf encoding of the
// whole message, and the reader's decode leaves the large data in the
// frame while equal to the original.
func TestMsgVecRoundTrip(t *testing.T) {
	p := &peer{t: &Transport{cfg: Config{MaxFrameBytes: DefaultMaxFrameBytes}}}
	m := mixedMsgApp()
	small := raftEnv(9, 7, "heartbeat")
	buf, ext, frames, dropped := p.encodeVec(nil, []Envelope{{Group: 5, Kind: KindRaft, Msg: m}, small}, vecMinBytes)
	if frames != 1 || len(dropped) != 0 {
		t.Fatalf("%d frames, %d dropped", frames, len(dropped))
	}
	if len(ext) != 2 || &ext[0].data[0] != &m.Entries[1].Data[0] || &ext[1].data[0] != &m.Entries[4].Data[0] {
		t.Fatalf("the large entries must be written from where they lie: %d external pieces", len(ext))
	}
	wire := wireOf(buf, ext)
	// The flush is a valid frame: length and checksum over the whole body.
	ft, payload, _, err := readFrame(bytes.NewReader(wire), nil, DefaultMaxFrameBytes)
	if err != nil || ft != frameBatch {
		t.Fatalf("frame: %v, type %d", err, ft)
	}
	// The same bytes as the copying encoder writes.
	whole, _, _ := p.encode(nil, []Envelope{{Group: 5, Kind: KindRaft, Msg: m}, small})
	if _, pw, _, err := readFrame(bytes.NewReader(whole), nil, DefaultMaxFrameBytes); err != nil || len(pw) != len(payload) {
		t.Fatalf("copying encoder: %v, %d bytes against %d", err, len(pw), len(payload))
	}
	envs, aliased, err := decodeBatchAlias(payload, vecMinBytes)
	if err != nil || len(envs) != 2 || !aliased {
		t.Fatalf("decode: %v, %d envelopes, aliased %v", err, len(envs), aliased)
	}
	if !proto.Equal(envs[0].Msg, m) || !proto.Equal(envs[1].Msg, small.Msg) || envs[0].Group != 5 {
		t.Fatalf("decoded %v, want %v", envs[0].Msg, m)
	}
	got := envs[0].Msg.Entries
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(payload)))
	inFrame := func(b []byte) bool {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return len(b) > 0 && at >= lo && at < lo+uintptr(len(payload))
	}
	if !inFrame(got[1].Data) || !inFrame(got[4].Data) || inFrame(got[0].Data) {
		t.Fatal("large entry data must stay in the frame, small data must be copied")
	}
	if cap(got[1].Data) != len(got[1].Data) {
		t.Fatal("aliased data must not reach past itself")
	}
	// A decoder that knows nothing of the hand encoding reads it too.
	var std raftpb.Message
	all, err := decodeBatch(payload)
	if err != nil || !proto.Equal(all[0].Msg, m) {
		t.Fatalf("copying decode: %v", err)
	}
	if err := proto.Unmarshal(encodeMsgForTest(t, m), &std); err != nil || !proto.Equal(&std, m) {
		t.Fatalf("proto.Unmarshal of the hand encoding: %v", err)
	}
}

// encodeMsgForTest is appendMsgVec with every piece copied in.
func encodeMsgForTest(t *testing.T, m *raftpb.Message) []byte {
	t.Helper()
	buf, ext, _, err := appendMsgVec(nil, nil, m, msgHead(m), vecMinBytes)
	if err != nil {
		t.Fatal(err)
	}
	out := wireOf(buf, ext)
	if len(out) != msgVecSize(m, proto.Size(msgHead(m))) {
		t.Fatalf("encoded %d bytes, measured %d", len(out), msgVecSize(m, proto.Size(msgHead(m))))
	}
	return out
}

// TestMsgHeadCoversEveryField sets every field raftpb.Message has and
// checks msgHead keeps each but the entries, and that the hand encoding's
// field numbers are the descriptors': a field added to raft's messages
// fails here rather than vanish on the wire.
func TestMsgHeadCoversEveryField(t *testing.T) {
	m := &raftpb.Message{}
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsList():
			l := r.Mutable(fd).List()
			l.Append(l.NewElement())
		case fd.Kind() == protoreflect.MessageKind:
			r.Set(fd, r.NewField(fd))
		case fd.Kind() == protoreflect.BoolKind:
			r.Set(fd, protoreflect.ValueOfBool(true))
		case fd.Kind() == protoreflect.BytesKind:
			r.Set(fd, protoreflect.ValueOfBytes([]byte("x")))
		case fd.Kind() == protoreflect.EnumKind:
			r.Set(fd, protoreflect.ValueOfEnum(1))
		case fd.Kind() == protoreflect.Uint64Kind:
			r.Set(fd, protoreflect.ValueOfUint64(uint64(i)+1))
		default:
			t.Fatalf("field %s has a kind (%v) this test does not set", fd.Name(), fd.Kind())
		}
	}
	head := msgHead(m).ProtoReflect()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Number() == msgFieldEntries {
			if fd.Name() != "entries" || head.Has(fd) {
				t.Fatalf("field %d is %s; the head must leave it out", fd.Number(), fd.Name())
			}
			continue
		}
		if !head.Has(fd) || !head.Get(fd).Equal(r.Get(fd)) {
			t.Fatalf("msgHead drops field %s", fd.Name())
		}
	}
	ents := (&raftpb.Entry{}).ProtoReflect().Descriptor().Fields()
	want := map[string]protoreflect.FieldNumber{"Type": entFieldType, "Term": entFieldTerm, "Index": entFieldIndex, "Data": entFieldData}
	if ents.Len() != len(want) {
		t.Fatalf("raftpb.Entry has %d fields, the hand encoding knows %d", ents.Len(), len(want))
	}
	for name, num := range want {
		if fd := ents.ByName(protoreflect.Name(name)); fd == nil || fd.Number() != num {
			t.Fatalf("entry field %s is not number %d", name, num)
		}
	}
}

// TestDecodeMsgAliasFallsBack: an entry the hand decoder does not expect
// (an unknown field, an undefined type) is decoded by proto.Unmarshal,
// with the same result and nothing left in the frame.
func TestDecodeMsgAliasFallsBack(t *testing.T) {
	m := mixedMsgApp()
	wire := encodeMsgForTest(t, m)
	var want raftpb.Message
	for _, extra := range [][]byte{
		{0x3a, 0x03, 0x28, 0x01}, // entries: cut short
		{0x3a, 0x02, 0x28, 0x01}, // entries: an unknown field 5
		{0x3a, 0x02, 0x08, 0x63}, // entries: type 99
	} {
		b := append(append([]byte(nil), wire...), extra...)
		wantErr := proto.Unmarshal(b, &want)
		var got raftpb.Message
		aliased, err := decodeMsgAlias(b, &got, vecMinBytes)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("% x: error %v, proto.Unmarshal's %v", extra, err, wantErr)
		}
		if err == nil && (aliased || !proto.Equal(&got, &want)) {
			t.Fatalf("% x: aliased %v, equal %v", extra, aliased, proto.Equal(&got, &want))
		}
	}
}

// FuzzDecodeMsgAlias: on any input the aliasing decoder agrees with
// proto.Unmarshal (both fail, or both give equal messages).
func FuzzDecodeMsgAlias(f *testing.F) {
	seed := mixedMsgApp()
	seed.Entries[1].Data = seed.Entries[1].Data[:40]
	seed.Entries[4].Data = seed.Entries[4].Data[:8]
	b, err := proto.Marshal(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, uint16(4))
	small, _ := proto.Marshal(raftEnv(1, 2, "abc").Msg)
	f.Add(small, uint16(1))
	f.Add([]byte{0x3a, 0x04, 0x22, 0x02, 'h', 'i', 0x3a, 0x00}, uint16(2))
	f.Fuzz(func(t *testing.T, b []byte, aliasMin uint16) {
		var want, got raftpb.Message
		wantErr := proto.Unmarshal(b, &want)
		_, err := decodeMsgAlias(b, &got, int(aliasMin)+1)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, proto.Unmarshal's %v", err, wantErr)
		}
		if err == nil && !proto.Equal(&got, &want) {
			t.Fatalf("decoded %v, proto.Unmarshal %v", &got, &want)
		}
	})
}
