package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestPartitionsJSON(t *testing.T) {
	m := wire.PartitionMap{
		Nodes: []wire.PartitionMapNode{{ReplicaID: 1, Name: "n1", Host: "10.0.0.2", TCPPort: 8091, HTTPPort: 3001}},
		Topics: []wire.PartitionMapTopic{{StreamID: 1, StreamName: "orders", TopicID: 2, TopicName: "created", Partitions: []wire.PartitionPlacement{
			{PartitionID: 0, Replicas: []uint8{1, 0}, Leader: 1, HasLeader: true, CaughtUp: []uint8{0, 1}, HasCaughtUp: true},
			{PartitionID: 1, Replicas: []uint8{0}},
		}}},
	}
	b, err := json.Marshal(partitionsJSON(&m))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"nodes":[{"replica_id":1,"name":"n1","ip":"10.0.0.2","endpoints":{"tcp":8091,"quic":0,"http":3001,"websocket":0}}],` +
		`"partitions":[{"stream_id":1,"stream":"orders","topic_id":2,"topic":"created","partition":0,"replicas":[1,0],"leader":1,"caught_up":[0,1]},` +
		`{"stream_id":1,"stream":"orders","topic_id":2,"topic":"created","partition":1,"replicas":[0],"leader":null,"caught_up":null}]}`
	if string(b) != want {
		t.Fatalf("json:\n got %s\nwant %s", b, want)
	}
	empty, _ := json.Marshal(partitionsJSON(&wire.PartitionMap{}))
	if string(empty) != `{"nodes":[],"partitions":[]}` {
		t.Fatalf("empty map: %s", empty)
	}
}
