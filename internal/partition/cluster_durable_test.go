package partition

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// durableCluster is a cluster of planes whose data directories and raft
// logs outlive a stop, so every node can be restarted.
type durableCluster struct {
	t      *testing.T
	voters []replication.NodeID
	dirs   []string
	kept   []replication.LogStorage
	topics catalog.Topics
}

func newDurableCluster(t *testing.T, n int, topics catalog.Topics) *durableCluster {
	dc := &durableCluster{t: t, topics: topics}
	for i := range n {
		dc.voters = append(dc.voters, replication.NodeID(i))
		dc.dirs = append(dc.dirs, t.TempDir())
		dc.kept = append(dc.kept, replication.NewMemoryLog())
	}
	return dc
}

// start starts every node over its kept state and opens partition 0 of
// ref on each.
func (dc *durableCluster) start(ref catalog.TopicRef) (*testNet, []*testNode) {
	t := dc.t
	t.Helper()
	net := newTestNet()
	nodes := make([]*testNode, len(dc.dirs))
	for i := range nodes {
		st := dc.kept[i]
		r := &testReplicator{self: replication.NodeID(i), voters: dc.voters}
		p := newClusterPlane(t, dc.dirs[i], r, func(string) (replication.LogStorage, error) { return st, nil }, dc.topics)
		startHost(t, net, r, dc.voters)
		nodes[i] = &testNode{id: r.self, plane: p, repl: r}
	}
	for _, nd := range nodes {
		if err := nd.plane.CreatePartitions(ref, []uint32{0}); err != nil {
			t.Fatal(err)
		}
	}
	return net, nodes
}

// stop closes every node's host and plane.
func (dc *durableCluster) stop(nodes []*testNode) {
	dc.t.Helper()
	for _, nd := range nodes {
		nd.host().Close()
		if err := nd.plane.Close(); err != nil {
			dc.t.Fatal(err)
		}
	}
}
