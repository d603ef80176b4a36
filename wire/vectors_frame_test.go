package wire

import (
	"errors"
	"testing"
)

// frameReplyVectors checks the reply vectors that exercise framing alone:
// result-section rejections, status denials and evictions.
var frameReplyVectors = map[string]func(*testing.T, replyVector){
	"create_stream_rejected_name_exists": func(t *testing.T, v replyVector) {
		_, err := SplitResult(v.Body)
		if !errors.Is(err, ErrStreamNameAlreadyExists) {
			t.Errorf("SplitResult error = %v, want StreamNameAlreadyExists", err)
		}
		if got := AppendResultError(nil, ErrStreamNameAlreadyExists.Code); string(got) != string(v.Body) {
			t.Errorf("AppendResultError = %x, want %x", got, v.Body)
		}
	},
	"delete_stream_denied_status": func(t *testing.T, v replyVector) {
		if len(v.Body) != 0 || v.Status != ErrUnauthorized.Code {
			t.Errorf("denial: status %d body %x", v.Status, v.Body)
		}
	},
	"eviction_incompatible_protocol": func(t *testing.T, v replyVector) {
		checkEvictionVector(t, v, EvictIncompatibleProtocol, ErrIncompatibleProtocolVersion)
	},
	"eviction_no_session": func(t *testing.T, v replyVector) {
		checkEvictionVector(t, v, EvictNoSession, ErrUnauthenticated)
	},
}

func checkEvictionVector(t *testing.T, v replyVector, reason EvictionReason, mapped error) {
	t.Helper()
	frame := mustHex(t, v.FrameHex)
	var h EvictionHeader
	if err := h.Decode(frame); err != nil {
		t.Fatalf("decode eviction: %v", err)
	}
	if h.Reason != reason || h.Client != (Uint128{Lo: 0x0706050403020100, Hi: 0x0f0e0d0c0b0a0908}) {
		t.Errorf("eviction = %+v", h)
	}
	if reason == EvictIncompatibleProtocol && (h.ServerProtocolVersion != ProtocolVersion || h.ServerProtocolVersionMin != ProtocolVersionMin) {
		t.Errorf("window = [%d, %d]", h.ServerProtocolVersionMin, h.ServerProtocolVersion)
	}
	if !errors.Is(h.Err(), mapped) {
		t.Errorf("eviction error %v does not map to %v", h.Err(), mapped)
	}
	if enc := h.AppendTo(nil); string(enc) != string(frame) {
		t.Errorf("re-encoded eviction differs:\n got %x\nwant %x", enc, frame)
	}
}
