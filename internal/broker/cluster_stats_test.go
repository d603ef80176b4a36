package broker

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
)

// TestStatsPayloads: the counters call's request and reply round-trip, a
// partition the callee does not hold comes back as zero counters, and
// malformed payloads are refused.
func TestStatsPayloads(t *testing.T) {
	keys := []catalog.PartitionKey{
		{Topic: catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 77}, Partition: 0},
		{Topic: catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 77}, Partition: 5},
	}
	req := encodeStatsRequest(42, keys)
	w, got, err := decodeStatsRequest(req)
	same := func(a, b catalog.PartitionKey) bool {
		return a.Partition == b.Partition && a.Topic.StreamID == b.Topic.StreamID && a.Topic.TopicID == b.Topic.TopicID && a.Topic.Incarnation == b.Topic.Incarnation
	}
	if err != nil || w != 42 || len(got) != 2 || !same(got[0], keys[0]) || !same(got[1], keys[1]) {
		t.Fatalf("request round trip: %d %+v %v", w, got, err)
	}
	for _, bad := range [][]byte{nil, req[:12], req[:len(req)-1], append(append([]byte{}, req...), 0), append([]byte{9}, req[1:]...)} {
		if _, _, err := decodeStatsRequest(bad); err == nil {
			t.Fatalf("accepted request %x", bad)
		}
	}
	stats := []catalog.PartitionStats{{CurrentOffset: 9, Messages: 10, SizeBytes: 1000, Segments: 2}, {Messages: 3}}
	reply := encodeStatsReply([]bool{true, false}, stats)
	out, err := decodeStatsReply(reply, 2)
	if err != nil || out[0] != stats[0] || out[1] != (catalog.PartitionStats{}) {
		t.Fatalf("reply round trip: %+v %v", out, err)
	}
	if _, err := decodeStatsReply(reply, 3); err == nil {
		t.Fatal("accepted a reply of another count")
	}
	if _, err := decodeStatsReply(reply[:len(reply)-1], 2); err == nil {
		t.Fatal("accepted a truncated reply")
	}
}
