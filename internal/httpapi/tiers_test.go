package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestTopicDocumentTiers(t *testing.T) {
	d := wire.TopicDetails{Topic: wire.Topic{ID: 1, Name: "t", PartitionsCount: 3}, Partitions: []wire.PartitionInfo{
		{ID: 1, SizeBytes: 1100}, {ID: 2, SizeBytes: 0}, {ID: 3, SizeBytes: 7},
	}}
	partitions := func(doc TopicDetails) []map[string]any {
		t.Helper()
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Partitions []map[string]any `json:"partitions"`
		}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out.Partitions
	}
	tierKeys := []string{"local_size_bytes", "remote_size_bytes", "remote_only_size_bytes", "pending_size_bytes",
		"remote_segments_count", "pending_segments_count"}

	// Tiered storage off: the document is the reference's.
	for _, p := range partitions(topicDetailsJSON(&d)) {
		for _, k := range tierKeys {
			if _, ok := p[k]; ok {
				t.Fatalf("partition %v has %s without tiers", p["id"], k)
			}
		}
	}

	doc := topicDetailsJSON(&d)
	withTiers(&doc, []wire.PartitionTiers{
		{PartitionID: 1, LocalBytes: 100, RemoteBytes: 1500, RemoteOnlyBytes: 1000, PendingBytes: 50, RemoteSegments: 3, PendingSegments: 1},
		{PartitionID: 2},
		{PartitionID: 9, LocalBytes: 1}, // not in the document: ignored
	})
	ps := partitions(doc)
	want := map[string]any{"local_size_bytes": 100.0, "remote_size_bytes": 1500.0, "remote_only_size_bytes": 1000.0,
		"pending_size_bytes": 50.0, "remote_segments_count": 3.0, "pending_segments_count": 1.0}
	got := map[string]any{}
	for _, k := range tierKeys {
		got[k] = ps[0][k]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("partition 1 tiers %v, want %v", got, want)
	}
	for _, k := range tierKeys {
		if v, ok := ps[1][k]; !ok || v != 0.0 {
			t.Errorf("partition 2 %s = %v (%v), want an explicit 0", k, v, ok)
		}
		if _, ok := ps[2][k]; ok {
			t.Errorf("partition 3, not listed, has %s", k)
		}
	}
	if _, ok := ps[0]["size"].(string); !ok {
		t.Errorf("the reference's size field is gone: %v", ps[0])
	}
}
