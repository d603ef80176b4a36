package broker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/replication"
)

// joinMarker is created in the cluster directory by a node started with
// --join; while the node's metadata raft log is still empty, later starts
// keep joining instead of creating a group of their own (which would
// disagree with the running cluster's log).
const joinMarker = "joining"

// liveRoster is the roster this node works with: the configured one until
// a node administration command commits another through the metadata log
// (metadata KindRoster), which every node applies in log order.
type liveRoster struct {
	mu    sync.RWMutex
	nodes []config.ClusterNode // guarded by mu
}

func (r *liveRoster) get() []config.ClusterNode {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.nodes
}

func (r *liveRoster) set(nodes []config.ClusterNode) {
	r.mu.Lock()
	r.nodes = nodes
	r.mu.Unlock()
}

// encodeRoster is the KindRoster body: the roster as JSON.
func encodeRoster(nodes []config.ClusterNode) ([]byte, error) { return json.Marshal(nodes) }

func decodeRoster(data []byte) ([]config.ClusterNode, error) {
	var nodes []config.ClusterNode
	err := json.Unmarshal(data, &nodes)
	return nodes, err
}

// applyRoster installs a committed roster: the transport learns the
// nodes added (or moved) and forgets the nodes removed. It runs on the
// replication loop (metadata apply) and does not block.
func (b *Broker) applyRoster(data []byte) {
	nodes, err := decodeRoster(data)
	if err != nil {
		b.log.Error("committed cluster roster does not decode; keeping the current one", "err", err)
		return
	}
	old := b.cl.roster.get()
	tr := b.cl.node.transport
	self := replication.NodeID(b.cl.self.ReplicaID)
	for _, n := range nodes {
		id := replication.NodeID(n.ReplicaID)
		i := slices.IndexFunc(old, func(o config.ClusterNode) bool { return o.ReplicaID == n.ReplicaID })
		if id != self && (i < 0 || old[i].ReplicaAddr() != n.ReplicaAddr()) {
			tr.AddPeer(id, n.ReplicaAddr())
		}
	}
	for _, o := range old {
		id := replication.NodeID(o.ReplicaID)
		if id != self && !slices.ContainsFunc(nodes, func(n config.ClusterNode) bool { return n.ReplicaID == o.ReplicaID }) {
			tr.RemovePeer(id)
		}
	}
	b.cl.roster.set(nodes)
	b.log.Info("cluster roster changed", "nodes", len(nodes))
}

// joining reports whether this node joins a running cluster: started with
// --join now, or earlier while its metadata log is still empty.
func (b *Broker) joining(metadataLogEmpty bool) (bool, error) {
	marker := filepath.Join(b.cfg.System.Path, ClusterDir, joinMarker)
	if b.cfg.Cluster.Join {
		if err := os.MkdirAll(filepath.Dir(marker), 0o750); err != nil {
			return false, err
		}
		return true, os.WriteFile(marker, nil, 0o640)
	}
	if _, err := os.Stat(marker); err == nil {
		if metadataLogEmpty {
			return true, nil
		}
		return false, os.Remove(marker)
	}
	return false, nil
}

// partitionVoters are the voters a new partition group is bootstrapped
// with: the metadata group's voters, read only while the metadata entry
// that creates the topic applies (the loop publishes membership changes
// before the next entry applies, so every node reads the same set at the
// same log position). At start-up and on a snapshot restore the plane
// opens partitions outside of that: those groups are not bootstrapped here
// (their log exists, or the leader sends it).
func (b *Broker) partitionVoters() []replication.NodeID {
	if !b.cl.liveApply.Load() {
		return nil
	}
	v, ok := b.cl.node.host.Status(replication.MetadataGroup)
	if !ok {
		return nil
	}
	return slices.Clone(v.Voters)
}
