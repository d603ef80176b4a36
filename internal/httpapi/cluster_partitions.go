package httpapi

import (
	"net/http"

	"github.com/iggo-dev/iggo/wire"
)

// ClusterPartitionNode is one node of GET /cluster/partitions.
type ClusterPartitionNode struct {
	ReplicaID uint8     `json:"replica_id"`
	Name      string    `json:"name"`
	IP        string    `json:"ip"`
	Endpoints Endpoints `json:"endpoints"`
}

// ClusterPartition is one partition of GET /cluster/partitions. Leader is
// null while the answering node knows no leader; CaughtUp is null when it
// cannot tell (only a partition's leader can).
type ClusterPartition struct {
	StreamID  uint32 `json:"stream_id"`
	Stream    string `json:"stream"`
	TopicID   uint32 `json:"topic_id"`
	Topic     string `json:"topic"`
	Partition uint32 `json:"partition"`
	Replicas  []int  `json:"replicas"`
	Leader    *int   `json:"leader"`
	CaughtUp  []int  `json:"caught_up"`
}

// ClusterPartitions is GET /cluster/partitions (an Iggo extension): the
// nodes, and every partition the caller may see in (stream, topic,
// partition) order.
type ClusterPartitions struct {
	Nodes      []ClusterPartitionNode `json:"nodes"`
	Partitions []ClusterPartition     `json:"partitions"`
}

// partitionsJSON renders a partition map.
func partitionsJSON(m *wire.PartitionMap) ClusterPartitions {
	out := ClusterPartitions{Nodes: []ClusterPartitionNode{}, Partitions: []ClusterPartition{}}
	for _, n := range m.Nodes {
		out.Nodes = append(out.Nodes, ClusterPartitionNode{ReplicaID: n.ReplicaID, Name: n.Name, IP: n.Host,
			Endpoints: Endpoints{TCP: n.TCPPort, QUIC: n.QUICPort, HTTP: n.HTTPPort, WebSocket: n.WebSocketPort}})
	}
	for _, t := range m.Topics {
		for _, p := range t.Partitions {
			cp := ClusterPartition{StreamID: t.StreamID, Stream: t.StreamName, TopicID: t.TopicID, Topic: t.TopicName,
				Partition: p.PartitionID, Replicas: ints(p.Replicas)}
			if p.HasLeader {
				l := int(p.Leader)
				cp.Leader = &l
			}
			if p.HasCaughtUp {
				cp.CaughtUp = ints(p.CaughtUp)
			}
			out.Partitions = append(out.Partitions, cp)
		}
	}
	return out
}

// ints renders replica ids as JSON numbers (a []uint8 would be base64),
// an empty list as [].
func ints(ids []uint8) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func (c *call) clusterPartitions() error {
	out, err := c.read(wire.CmdClusterPartitions, nil)
	if err != nil {
		return err
	}
	var m wire.PartitionMap
	if err := decodeReply(out.payload, &m); err != nil {
		return err
	}
	return c.json(http.StatusOK, partitionsJSON(&m))
}
