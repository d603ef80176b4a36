package quic

import "testing"

// TestStreamCredit pins the stream credit: one more than
// quic.max_concurrent_bidi_streams, so that a lockstep client never waits
// for a served stream's credit to come back (see quicConfig).
func TestStreamCredit(t *testing.T) {
	for _, tc := range []struct{ key, want int64 }{{0, 2}, {1, 2}, {100, 101}} {
		if got := quicConfig(Config{MaxStreams: tc.key}).MaxIncomingStreams; got != tc.want {
			t.Errorf("max_concurrent_bidi_streams %d: credit %d, want %d", tc.key, got, tc.want)
		}
		if got := quicConfig(Config{MaxStreams: tc.key}).MaxIncomingUniStreams; got != -1 {
			t.Errorf("unidirectional streams allowed: %d", got)
		}
	}
}
