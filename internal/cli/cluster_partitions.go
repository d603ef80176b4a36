package cli

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// partitionMapNodeView is one node of `iggo cluster partitions -o json`.
type partitionMapNodeView struct {
	ReplicaID int    `json:"replica_id"`
	Name      string `json:"name"`
	Address   string `json:"address"`
}

// partitionMapView is one partition of `iggo cluster partitions -o json`:
// leader is null while the answering node knows none, caught_up null when
// it cannot tell (only the partition's leader can).
type partitionMapView struct {
	Stream    string `json:"stream"`
	StreamID  uint32 `json:"stream_id"`
	Topic     string `json:"topic"`
	TopicID   uint32 `json:"topic_id"`
	Partition uint32 `json:"partition"`
	Replicas  []int  `json:"replicas"`
	Leader    *int   `json:"leader"`
	CaughtUp  []int  `json:"caught_up"`
}

// newPartitionMapView flattens a partition map into its JSON view.
func newPartitionMapView(m *wire.PartitionMap) (nodes []partitionMapNodeView, parts []partitionMapView) {
	nodes, parts = []partitionMapNodeView{}, []partitionMapView{}
	for _, n := range m.Nodes {
		addr := n.Host
		if n.TCPPort != 0 {
			addr = net.JoinHostPort(n.Host, strconv.Itoa(int(n.TCPPort)))
		}
		nodes = append(nodes, partitionMapNodeView{ReplicaID: int(n.ReplicaID), Name: n.Name, Address: addr})
	}
	for _, t := range m.Topics {
		for _, p := range t.Partitions {
			v := partitionMapView{Stream: t.StreamName, StreamID: t.StreamID, Topic: t.TopicName, TopicID: t.TopicID,
				Partition: p.PartitionID, Replicas: replicaInts(p.Replicas)}
			if p.HasLeader {
				l := int(p.Leader)
				v.Leader = &l
			}
			if p.HasCaughtUp {
				v.CaughtUp = replicaInts(p.CaughtUp)
			}
			parts = append(parts, v)
		}
	}
	return nodes, parts
}

// replicaInts renders replica ids as numbers ([]uint8 would be base64 in
// JSON), an empty list as [].
func replicaInts(ids []uint8) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// replicaList renders ids for the table ("0,1,2"; "-" for none).
func replicaList(ids []int) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// clusterPartitionsCmd is `iggo cluster partitions`.
func (a *app) clusterPartitionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "partitions",
		Short: "List every partition with its replicas, leader and caught-up replicas",
		Long: `List the partition map of a cluster (CLUSTER_PARTITIONS): every node with its
replica id and address, then per partition its stream, topic, partition id,
replicas (replica ids), leader (the replica id, or none while the answering
node knows no leader) and the replicas that hold its committed log. Only a
partition's leader can tell which replicas are caught up: the node answering
shows "?" (null in JSON) for the partitions it does not lead. The topics
listed are those the user may read, poll or send to; read_servers sees all.
A single node is no cluster and answers FeatureUnavailable.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var m *wire.PartitionMap
				err := a.call(cmd, func(ctx context.Context) (err error) { m, err = c.ClusterPartitions(ctx); return err })
				if errors.Is(err, wire.ErrFeatureUnavailable) {
					return wrapf(err, "get the partition map (the server is not a cluster member)")
				}
				if err != nil {
					return wrapf(err, "get the partition map")
				}
				nodes, parts := newPartitionMapView(m)
				v := struct {
					Nodes      []partitionMapNodeView `json:"nodes"`
					Partitions []partitionMapView     `json:"partitions"`
				}{nodes, parts}
				return a.print(cmd, v, func(tw *tabwriter.Writer) {
					row(tw, "REPLICA", "NODE", "ADDRESS")
					for _, n := range nodes {
						row(tw, n.ReplicaID, n.Name, n.Address)
					}
					row(tw)
					row(tw, "STREAM", "TOPIC", "PARTITION", "REPLICAS", "LEADER", "CAUGHT UP")
					for _, p := range parts {
						leader, caught := "-", "?"
						if p.Leader != nil {
							leader = strconv.Itoa(*p.Leader)
						}
						if p.CaughtUp != nil {
							caught = replicaList(p.CaughtUp)
						}
						row(tw, p.Stream, p.Topic, p.Partition, replicaList(p.Replicas), leader, caught)
					}
				})
			})
		},
	}
	return a.clientCommand(cmd)
}
