package wire

import (
	"bytes"
	"testing"
)

func seedFrames(f *testing.F) {
	f.Add((&RequestHeader{Prologue: Prologue{Size: HeaderSize}, Client: Uint128{Lo: 1}, Operation: OpNonReplicated, Code: CmdPing}).AppendTo(nil))
	f.Add((&ReplyHeader{Prologue: Prologue{Size: 300}, Client: Uint128{Lo: 1}, Request: 4, Operation: OpCreateStream}).AppendTo(nil))
	f.Add((&EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictIncompatibleProtocol, ServerProtocolVersion: ProtocolVersion, ServerProtocolVersionMin: ProtocolVersionMin}).AppendTo(nil))
	f.Add(make([]byte, HeaderSize))
	f.Add([]byte{1, 2, 3})
}

// FuzzRequestHeader: decoding never panics, and a decoded header re-encodes
// to the same bytes apart from reserved ones (which Encode clears).
func FuzzRequestHeader(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var h RequestHeader
		if h.Decode(b) != nil {
			return
		}
		enc := h.AppendTo(nil)
		var again RequestHeader
		if err := again.Decode(enc); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		again.ReservedNonZero = h.ReservedNonZero
		if again != h {
			t.Fatalf("round trip %+v != %+v", again, h)
		}
		if !h.ReservedNonZero && !bytes.Equal(enc, b[:HeaderSize]) {
			t.Fatalf("clean header did not re-encode byte for byte")
		}
	})
}

// FuzzReplyHeader: decode never panics; decode(encode(x)) == x.
func FuzzReplyHeader(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var h ReplyHeader
		if h.Decode(b) != nil {
			return
		}
		var again ReplyHeader
		if err := again.Decode(h.AppendTo(nil)); err != nil || again != h {
			t.Fatalf("round trip %+v != %+v (%v)", again, h, err)
		}
	})
}

// FuzzEvictionHeader: a header that passes validation re-encodes to the
// same bytes (validation requires every reserved byte to be zero).
func FuzzEvictionHeader(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var h EvictionHeader
		if h.Decode(b) != nil {
			return
		}
		if enc := h.AppendTo(nil); !bytes.Equal(enc, b[:HeaderSize]) {
			t.Fatalf("valid eviction did not re-encode byte for byte")
		}
		_ = h.Err().Error()
	})
}

// FuzzResultSection: never panics; a success payload is a suffix of the body.
func FuzzResultSection(f *testing.F) {
	f.Add(AppendResultOK([]byte(nil)))
	f.Add(AppendResultError(nil, 1012))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := SplitResult(b)
		if err == nil && !bytes.HasSuffix(b, p) {
			t.Fatalf("payload is not a suffix")
		}
		entries, _, err := DecodeResult(nil, b)
		if err == nil && len(entries) > MaxResultEntries {
			t.Fatalf("too many entries")
		}
	})
}

// FuzzIdentifier: decode(encode(x)) == x for anything that decodes.
func FuzzIdentifier(f *testing.F) {
	f.Add(NumericID(7).AppendTo(nil))
	f.Add(NamedID("orders").AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var id Identifier
		if id.Decode(b) != nil {
			return
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("decoded identifier does not validate: %v", err)
		}
		if !bytes.Equal(id.AppendTo(nil), b) {
			t.Fatalf("re-encode differs")
		}
	})
}

// FuzzLoginRegister covers both login shapes and the version prefix.
func FuzzLoginRegister(f *testing.F) {
	v := ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "go-sdk", SDKVersion: "0.11.0"}
	f.Add((&LoginRegister{Version: v, Username: "iggy", Password: "iggy"}).AppendTo(nil))
	f.Add((&LoginRegisterWithPAT{Version: v, Token: "tok", Context: []byte{1}}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, rest, err := DecodeClientVersionInfo(b); err == nil {
			var pw LoginRegister
			_ = pw.DecodeCredentials(rest)
			var pat LoginRegisterWithPAT
			_ = pat.DecodeCredentials(rest)
		}
		// Both shapes ignore bytes after the context: the re-encoding is
		// the consumed prefix of b.
		var pw LoginRegister
		if pw.Decode(b) == nil {
			if !bytes.HasPrefix(b, pw.AppendTo(nil)) {
				t.Fatalf("password login re-encode differs")
			}
		}
		var pat LoginRegisterWithPAT
		if pat.Decode(b) == nil {
			if !bytes.HasPrefix(b, pat.AppendTo(nil)) {
				t.Fatalf("PAT login re-encode differs")
			}
		}
	})
}

// FuzzLoginRegisterReply: decode(encode(x)) == x.
func FuzzLoginRegisterReply(f *testing.F) {
	f.Add((&LoginRegisterReply{UserID: 1, Session: 7, ServerProtocolVersion: ProtocolVersion, ServerVersion: "0.11.0"}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r LoginRegisterReply
		if r.Decode(b) != nil {
			return
		}
		if !bytes.Equal(r.AppendTo(nil), b) {
			t.Fatalf("re-encode differs")
		}
	})
}
