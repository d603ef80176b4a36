package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestHeaderOffsets pins every field offset to the tables of framing.md by
// encoding a header whose fields hold distinct marker values and reading
// them back from the documented byte positions.
func TestHeaderOffsets(t *testing.T) {
	u128 := func(b []byte, off int) Uint128 { return GetUint128(b[off:]) }
	u64 := func(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	u32 := func(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

	pro := Prologue{
		Checksum: Uint128{1, 2}, ChecksumBody: Uint128{3, 4}, Cluster: Uint128{5, 6},
		Size: 0x11223344, View: 0x55667788, Release: 0x99aabbcc, Replica: 0xdd,
	}
	checkPrologue := func(t *testing.T, b []byte, kind FrameKind) {
		t.Helper()
		for _, c := range []struct {
			name string
			got  any
			want any
		}{
			{"checksum@0", u128(b, 0), pro.Checksum},
			{"checksum_body@16", u128(b, 16), pro.ChecksumBody},
			{"cluster@32", u128(b, 32), pro.Cluster},
			{"size@48", u32(b, 48), pro.Size},
			{"view@52", u32(b, 52), pro.View},
			{"release@56", u32(b, 56), pro.Release},
			{"command@60", b[60], byte(kind)},
			{"replica@61", b[61], pro.Replica},
			{"reserved 62..128", allZero(b[62:128]), true},
		} {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
	}

	t.Run("request", func(t *testing.T) {
		h := RequestHeader{Prologue: pro, Client: Uint128{7, 8}, RequestChecksum: Uint128{9, 10},
			Timestamp: 11, Request: 12, Operation: 0xee, Session: 13, UserID: 14, Code: 15}
		b := make([]byte, HeaderSize)
		for i := range b {
			b[i] = 0xff // Encode must clear reserved bytes
		}
		h.Encode(b)
		checkPrologue(t, b, KindRequest)
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"client@128", u128(b, 128), h.Client},
			{"request_checksum@144", u128(b, 144), h.RequestChecksum},
			{"timestamp@160", u64(b, 160), h.Timestamp},
			{"request@168", u64(b, 168), h.Request},
			{"operation@176", b[176], byte(h.Operation)},
			{"padding 177..184", allZero(b[177:184]), true},
			{"session@184", u64(b, 184), h.Session},
			{"user_id@192", u32(b, 192), h.UserID},
			{"code@196", u32(b, 196), uint32(h.Code)},
			{"reserved 200..256", allZero(b[200:256]), true},
		} {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
		var d RequestHeader
		if err := d.Decode(b); err != nil || d != h {
			t.Errorf("decode = %+v, %v; want %+v", d, err, h)
		}
	})

	t.Run("reply", func(t *testing.T) {
		h := ReplyHeader{Prologue: pro, RequestChecksum: Uint128{7, 8}, Context: Uint128{9, 10}, Client: Uint128{11, 12},
			Op: 13, Commit: 14, Timestamp: 15, Request: 16, Operation: 0xee, Status: 17}
		b := bytes.Repeat([]byte{0xff}, HeaderSize)
		h.Encode(b)
		checkPrologue(t, b, KindReply)
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"request_checksum@128", u128(b, 128), h.RequestChecksum},
			{"context@144", u128(b, 144), h.Context},
			{"client@160", u128(b, 160), h.Client},
			{"op@176", u64(b, 176), h.Op},
			{"commit@184", u64(b, 184), h.Commit},
			{"timestamp@192", u64(b, 192), h.Timestamp},
			{"request@200", u64(b, 200), h.Request},
			{"operation@208", b[208], byte(h.Operation)},
			{"padding 209..216", allZero(b[209:216]), true},
			{"status@216", u32(b, 216), h.Status},
			{"reserved 220..256", allZero(b[220:256]), true},
		} {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
		var d ReplyHeader
		if err := d.Decode(b); err != nil || d != h {
			t.Errorf("decode = %+v, %v; want %+v", d, err, h)
		}
	})

	t.Run("eviction", func(t *testing.T) {
		p := pro
		p.Size = HeaderSize
		h := EvictionHeader{Prologue: p, Client: Uint128{7, 8}, ServerProtocolVersion: 0x2c00, ServerProtocolVersionMin: 0x2800, Reason: EvictIncompatibleProtocol}
		b := bytes.Repeat([]byte{0xff}, HeaderSize)
		h.Encode(b)
		if u32(b, 48) != HeaderSize || b[60] != byte(KindEviction) {
			t.Fatalf("size/command = %d/%d", u32(b, 48), b[60])
		}
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"client@128", u128(b, 128), h.Client},
			{"version@144", u32(b, 144), h.ServerProtocolVersion},
			{"version_min@148", u32(b, 148), h.ServerProtocolVersionMin},
			{"reserved 152..255", allZero(b[152:255]), true},
			{"reason@255", b[255], byte(h.Reason)},
		} {
			if c.got != c.want {
				t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
			}
		}
		var d EvictionHeader
		if err := d.Decode(b); err != nil || d != h {
			t.Errorf("decode = %+v, %v; want %+v", d, err, h)
		}
	})
}

func TestHeaderDecodeRefuses(t *testing.T) {
	req := (&RequestHeader{Prologue: Prologue{Size: HeaderSize}, Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Code: CmdPing}).AppendTo(nil)
	rep := (&ReplyHeader{Prologue: Prologue{Size: HeaderSize}, Client: Uint128{Lo: 1}}).AppendTo(nil)
	ev := (&EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictNoSession}).AppendTo(nil)
	mut := func(b []byte, f func([]byte)) []byte { c := bytes.Clone(b); f(c); return c }
	for _, tc := range []struct {
		name string
		dec  func([]byte) error
		in   []byte
	}{
		{"request short", new(RequestHeader).Decode, req[:255]},
		{"request as reply", new(ReplyHeader).Decode, req},
		{"reply as request", new(RequestHeader).Decode, rep},
		{"eviction as reply", new(ReplyHeader).Decode, ev},
		{"eviction short", new(EvictionHeader).Decode, ev[:100]},
		{"eviction zero client", new(EvictionHeader).Decode, mut(ev, func(b []byte) { clear(b[128:144]) })},
		{"eviction zero reason", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[255] = 0 })},
		{"eviction body size", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[48] = 1; b[49] = 1 })},
		{"eviction reserved", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[200] = 1 })},
		{"eviction prologue reserved", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[100] = 1 })},
		{"eviction window on reason 1", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[144] = 1 })},
		{"eviction reason 14 without window", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[255] = 14 })},
		{"eviction reason 14 min > max", new(EvictionHeader).Decode, mut(ev, func(b []byte) { b[255] = 14; b[144] = 1; b[148] = 2 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.dec(tc.in); err == nil {
				t.Errorf("decode accepted %x", tc.in)
			}
		})
	}
	var h RequestHeader
	if err := h.Decode(mut(req, func(b []byte) { b[230] = 1 })); err != nil || !h.ReservedNonZero {
		t.Errorf("reserved byte not flagged: %v %+v", err, h)
	}
	if err := h.Decode(req); err != nil || h.ReservedNonZero {
		t.Errorf("clean header flagged: %v %+v", err, h)
	}
}

func TestRequestHeaderCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    RequestHeader
		want Command
		ok   bool
	}{
		{"nonreplicated", RequestHeader{Operation: OpNonReplicated, Code: CmdGetStreams}, CmdGetStreams, true},
		{"register", RequestHeader{Operation: OpRegister}, 0, true},
		{"logout", RequestHeader{Operation: OpLogout}, CmdLogoutUser, true},
		{"create topic", RequestHeader{Operation: OpCreateTopic}, CmdCreateTopic, true},
		{"delete segments", RequestHeader{Operation: OpDeleteSegments}, CmdDeleteSegments, true},
		{"send", RequestHeader{Operation: OpSendMessages}, CmdSendMessages, true},
		{"internal", RequestHeader{Operation: OpTruncatePartition}, 0, false},
		{"reserved", RequestHeader{Operation: OpReserved}, 0, false},
		{"undefined", RequestHeader{Operation: 150}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.h.Command()
			if got != tc.want || ok != tc.ok {
				t.Errorf("Command() = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestPeekReplyStatus(t *testing.T) {
	var b [HeaderSize]byte
	(&ReplyHeader{Status: 4242, Request: 7}).Encode(b[:])
	if got := PeekReplyStatus(b[:]); got != 4242 {
		t.Fatalf("status %d, want 4242", got)
	}
}
