package replicated

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/wire"
)

// FuzzDecodeEntry: partition raft entry data from any source decodes
// without panicking, and every entry that decodes (a stored send aside,
// whose record is elsewhere) encodes to bytes that decode to it again.
// The quick classifiers agree with the decoder on what they read.
func FuzzDecodeEntry(f *testing.F) {
	key := commit.Key{Client: wire.Uint128{Lo: 1, Hi: 2}, Request: 3, Hash: 4}
	for _, e := range []entry{
		{kind: entrySend, windowed: true, origin: 7, nonce: 8, key: key, count: 1, base: 9, ts: 10, rec: make([]byte, wire.BatchHeaderSize)},
		{kind: entryOffsetStore, windowed: true, origin: 1, nonce: 2, key: key, consumer: 2, id: 5, offset: 6},
		{kind: entryOffsetDelete, consumer: 1, id: 5},
		{kind: entryPurge, origin: 3, purgeID: 11},
		{kind: entryTier, origin: 2, tier: []byte("a remote tier record")},
	} {
		f.Add(e.encode())
	}
	f.Add([]byte{entryPurge, entryVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		m, _, _ := markOf(b)
		id := purgeIDOf(b)
		if err != nil {
			return
		}
		if e.kind == entryPurge && (m != markPurge || id != e.purgeID) {
			t.Fatalf("purge entry: mark %d, identity %d, decoded %d", m, id, e.purgeID)
		}
		if e.kind == entrySend && m != markBatch {
			t.Fatalf("send entry classified as mark %d", m)
		}
		if e.stored || e.kind == entryPurged {
			return
		}
		again, err := decodeEntry(e.encode())
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", e, err)
		}
		if again.kind != e.kind || again.windowed != e.windowed || again.origin != e.origin || again.nonce != e.nonce ||
			again.key != e.key || again.count != e.count || again.base != e.base || again.ts != e.ts ||
			string(again.rec) != string(e.rec) || again.consumer != e.consumer || again.id != e.id || again.offset != e.offset ||
			again.purgeID != e.purgeID || again.keyTag != e.keyTag || string(again.tier) != string(e.tier) {
			t.Fatalf("round trip %+v -> %+v", e, again)
		}
	})
}
