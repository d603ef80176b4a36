package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/transport"
	"github.com/iggo-dev/iggo/wire"
)

// ClusterDir is the directory of the raft logs under system.path.
const ClusterDir = "cluster"

// DefaultCompactEvery is how many applied metadata entries the raft log
// keeps before the broker compacts it into a snapshot.
const DefaultCompactEvery = 4096

// WithCompactEvery sets how many applied metadata entries the raft log
// keeps before it is compacted (DefaultCompactEvery otherwise); tests use
// a small number to exercise snapshot catch-up.
func WithCompactEvery(n uint64) Option { return func(o *options) { o.compactEvery = n } }

// cluster is the broker's replication stack in cluster mode: the raft host
// and replica transport (replicaNode) of this roster entry.
type cluster struct {
	node *replicaNode
	cfg  *config.ClusterConfig
	self config.ClusterNode
	id   wire.Uint128
	logs raftLogs
	// compacted is the index the metadata raft log is compacted to here:
	// its snapshot, taken by this node, found at start or installed from
	// the leader (runCluster never compacts at or below it again).
	compacted atomic.Uint64
	// roster is the live roster (cluster_roster.go).
	roster liveRoster
	// liveApply is set while a metadata entry applies on the loop
	// (partitionVoters).
	liveApply atomic.Bool
	// moves carries out and plans replica moves (cluster_rebalance.go);
	// set before the metadata group is added.
	moves *moves
}

// clusterEnabled reports whether the broker runs as a cluster member.
func (b *Broker) clusterEnabled() bool { return b.cfg.Cluster.Enabled }

// prepareClusterConfig applies what cluster mode changes in the
// configuration before anything opens: the client listeners take their
// ports from this node's roster entry (cluster-contract.md §1.2: the
// roster is the only source of listener ports; the bind IP stays the one
// of each transport's own address), and the root credentials must come
// from the environment.
func (b *Broker) prepareClusterConfig() error {
	if !b.clusterEnabled() {
		return nil
	}
	self, ok := b.cfg.Cluster.Node()
	if !ok {
		return fmt.Errorf("cluster: replica id %d is not in the roster ([[cluster.nodes]])", b.cfg.Cluster.ReplicaID)
	}
	withPort := func(addr string, port uint16) string {
		if port == 0 {
			return addr
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		return net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	b.cfg.TCP.Address = withPort(b.cfg.TCP.Address, self.Ports.TCP)
	if b.cfg.HTTP.Enabled {
		b.cfg.HTTP.Address = withPort(b.cfg.HTTP.Address, self.Ports.HTTP)
	}
	if b.cfg.QUIC.Enabled {
		b.cfg.QUIC.Address = withPort(b.cfg.QUIC.Address, self.Ports.QUIC)
	}
	if b.cfg.WebSocket.Enabled {
		b.cfg.WebSocket.Address = withPort(b.cfg.WebSocket.Address, self.Ports.WebSocket)
	}
	if !b.opts.rootSet {
		_, hasUser := os.LookupEnv(config.EnvRootUsername)
		_, hasPass := os.LookupEnv(config.EnvRootPassword)
		if !hasUser || !hasPass {
			return fmt.Errorf("cluster mode: set %s and %s (every node must create the same root user)", config.EnvRootUsername, config.EnvRootPassword)
		}
	}
	return nil
}

// openCluster starts the replica transport and the raft host. The metadata
// group joins once the store is open (joinMetadataGroup).
func (b *Broker) openCluster() error {
	if !b.clusterEnabled() {
		return nil
	}
	self, _ := b.cfg.Cluster.Node()
	node, err := newReplicaNode(&b.cfg.Cluster, int(b.cfg.MessageBus.MaxMessageSize), b.opts.now, b.log, b.parts.LeaderPreference)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	b.cl = &cluster{node: node, cfg: &b.cfg.Cluster, self: self, id: clusterID(b.cfg.Cluster.Name)}
	b.cl.roster.set(b.cfg.Cluster.Nodes)
	b.log.Info("cluster node started", "cluster", b.cfg.Cluster.Name, "replica_id", self.ReplicaID, "name", self.Name,
		"replica_address", self.ReplicaAddr(), "nodes", len(b.cfg.Cluster.Nodes))
	return nil
}

// clusterID is the header's cluster field: the replica handshake's
// cluster id (the first 16 bytes of BLAKE3(name)) as a little-endian u128.
func clusterID(name string) wire.Uint128 {
	raw := transport.ClusterID(name)
	return wire.Uint128{Lo: binary.LittleEndian.Uint64(raw[0:8]), Hi: binary.LittleEndian.Uint64(raw[8:16])}
}

// voters are the replica ids of the configured roster: the voters a fresh
// cluster's metadata group starts with.
func (c *cluster) voters() []replication.NodeID {
	v := make([]replication.NodeID, 0, len(c.cfg.Nodes))
	for _, n := range c.cfg.Nodes {
		v = append(v, replication.NodeID(n.ReplicaID))
	}
	return v
}

// raftStorage opens the durable raft log of one group in dir; sync makes
// every append reach the disk before raft acknowledges it.
func (b *Broker) raftStorage(dir string, sync bool) (replication.LogStorage, error) {
	return b.cl.logs.open(dir, sync, b.log.With("component", "replication"))
}

// joinMetadataGroup adds the metadata group over its durable log: a raft
// snapshot newer than the store's own is restored first, and raft resumes
// applying after what the store already holds.
func (b *Broker) joinMetadataGroup() error {
	if b.cl == nil {
		return nil
	}
	metaDir := filepath.Join(b.cfg.System.Path, ClusterDir, "metadata")
	st, err := b.raftStorage(metaDir, true)
	if err != nil {
		if replicated.IsDamage(err) {
			return b.metadataDamaged(metaDir, err)
		}
		return fmt.Errorf("cluster: metadata raft log: %w", err)
	}
	snap, err := st.Snapshot()
	if err != nil {
		return fmt.Errorf("cluster: metadata raft snapshot: %w", err)
	}
	if md := snap.GetMetadata(); md.GetIndex() > b.meta.Op() {
		if err := b.meta.RestoreReplicated(md.GetIndex(), snap.GetData()); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	// raft takes the membership from the snapshot and from the
	// configuration entries it applies, so it resumes right after the
	// raft snapshot and applies the log again; the store skips the
	// entries it already holds (ApplyReplicated).
	first, err := st.FirstIndex()
	if err != nil {
		return fmt.Errorf("cluster: metadata raft log: %w", err)
	}
	applied := first - 1
	// The log starts after its snapshot: compacting again at that index
	// would fail the storage (runCluster).
	b.cl.compacted.Store(applied)
	last, err := st.LastIndex()
	if err != nil {
		return fmt.Errorf("cluster: metadata raft log: %w", err)
	}
	if hs, _, err := st.InitialState(); err == nil && hs.GetCommit() > last {
		return b.metadataDamaged(metaDir, fmt.Errorf("%w: the log ends at index %d, before its commit index %d (a truncated file)", replication.ErrLogLost, last, hs.GetCommit()))
	}
	join, err := b.joining(last == 0)
	if err != nil {
		return fmt.Errorf("cluster: join marker: %w", err)
	}
	voters := b.cl.voters()
	if join {
		voters = nil // the leader sends the log, membership included
		b.log.Info("joining a running cluster: waiting for the leader to add this node (iggo cluster add-node)", "replica_id", b.cl.self.ReplicaID)
	}
	if r := b.meta.Roster(); r != nil {
		b.applyRoster(r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.cl.node.host.AddGroup(ctx, replication.MetadataGroup, replication.GroupOptions{
		Machine: metadataMachine{store: b.meta, cl: b.cl}, Voters: voters, Storage: st, Applied: applied,
	}); err != nil {
		if errors.Is(err, replication.ErrLogLost) {
			return b.metadataDamaged(metaDir, err)
		}
		return fmt.Errorf("cluster: metadata group: %w", err)
	}
	return nil
}

// metadataDamaged is the start-up error of a node whose metadata raft log
// in dir failed verification or lost entries: one line naming the
// directory and the recovery. The node must not take part with it (it may
// have acknowledged entries it no longer holds); the other nodes hold the
// metadata, and the node gets it back from them as a new member.
func (b *Broker) metadataDamaged(dir string, err error) error {
	id := b.cl.self.ReplicaID
	return fmt.Errorf("cluster: the metadata raft log in %s is damaged, so replica %d may not take part with it: "+
		"remove it (iggo cluster remove-node --replica-id %d), start it again with an empty data directory and --join, "+
		"then add it back under the same id and ports (iggo cluster add-node --replica-id %d ...): %w", dir, id, id, id, err)
}

// metadataLeader reports whether this node leads the metadata group.
func (b *Broker) metadataLeader() bool {
	v, ok := b.cl.node.host.Status(replication.MetadataGroup)
	return ok && v.Role == replication.RoleLeader
}

// runCluster watches the metadata group: each time this node becomes the
// leader it runs the leader's duties (root user on a fresh cluster, ending
// stale memberships), and the log is compacted every compactEvery applied
// entries. It returns when ctx ends.
func (b *Broker) runCluster(ctx context.Context) {
	h := b.cl.node.host
	compactEvery := b.opts.compactEvery
	if compactEvery == 0 {
		compactEvery = DefaultCompactEvery
	}
	var term uint64 // the term whose duties are done
	// compacted is where the last compaction was tried; the log's own
	// snapshot (b.cl.compacted) may be newer: found at start, installed
	// from the leader.
	var compacted uint64
	due := func(v replication.View) bool {
		return v.Applied >= max(compacted, b.cl.compacted.Load())+compactEvery
	}
	for {
		v, err := h.WaitFor(ctx, replication.MetadataGroup, func(v replication.View) bool {
			return (v.Role == replication.RoleLeader && v.Term != term) || due(v)
		})
		if err != nil {
			return
		}
		if v.Role == replication.RoleLeader && v.Term != term {
			if err := b.meta.LeaderDuties(); err != nil {
				b.log.Warn("metadata leader duties", "term", v.Term, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			term = v.Term
			b.log.Info("metadata leader", "term", v.Term, "replica_id", b.cl.self.ReplicaID)
		}
		if due(v) {
			at, err := h.Compact(ctx, replication.MetadataGroup)
			switch {
			case err == nil:
				b.cl.compacted.Store(at)
				b.log.Debug("metadata raft log compacted", "index", at)
			case !errors.Is(err, context.Canceled):
				b.log.Warn("compact the metadata raft log", "err", err)
			}
			compacted = v.Applied
		}
	}
}

// closeCluster stops the host (no more applies) and the transport.
func (b *Broker) closeCluster() error {
	if b.cl == nil {
		return nil
	}
	return errors.Join(b.cl.node.Close(), b.cl.logs.close())
}

// metadataReplicator is the metadata store's seam to the metadata group.
type metadataReplicator struct{ b *Broker }

func (r metadataReplicator) Propose(ctx context.Context, data []byte) error {
	_, err := r.b.cl.node.host.Propose(ctx, replication.MetadataGroup, data)
	return err
}

func (r metadataReplicator) Forward(ctx context.Context, data []byte) error {
	return r.b.cl.node.host.Forward(ctx, replication.MetadataGroup, data)
}

func (r metadataReplicator) IsLeader() bool { return r.b.metadataLeader() }

func (r metadataReplicator) Self() uint8 { return r.b.cl.self.ReplicaID }

var _ metadata.Replicator = metadataReplicator{}

// partitionReplicator is the partition plane's seam to the host.
type partitionReplicator struct{ b *Broker }

func (r partitionReplicator) host() *replication.Host { return r.b.cl.node.host }

func (r partitionReplicator) Self() replication.NodeID {
	return replication.NodeID(r.b.cl.self.ReplicaID)
}

func (r partitionReplicator) Voters() []replication.NodeID { return r.b.partitionVoters() }

// AddGroup adds a partition group with the machine the plane gives it
// (its replicated.Replica).
func (r partitionReplicator) AddGroup(ctx context.Context, id replication.GroupID, opts replication.GroupOptions) error {
	return r.host().AddGroup(ctx, id, opts)
}

func (r partitionReplicator) RemoveGroup(ctx context.Context, id replication.GroupID) error {
	return r.host().RemoveGroup(ctx, id)
}

func (r partitionReplicator) Propose(ctx context.Context, id replication.GroupID, data []byte) (uint64, error) {
	return r.host().Propose(ctx, id, data)
}

func (r partitionReplicator) Leader(id replication.GroupID) (replication.NodeID, bool) {
	return r.host().Leader(id)
}

func (r partitionReplicator) WaitFor(ctx context.Context, id replication.GroupID, cond func(replication.View) bool) (replication.View, error) {
	return r.host().WaitFor(ctx, id, cond)
}

func (r partitionReplicator) CompactTo(ctx context.Context, id replication.GroupID, index uint64, data []byte) error {
	return r.host().CompactTo(ctx, id, index, data)
}

// LeaderOf, Status, RemoveMember, TransferLeadership, Peers and Leave let the
// plane rebuild a damaged replica (replicated.Rebuilder).
func (r partitionReplicator) LeaderOf(g replication.GroupID) (replication.NodeID, bool) {
	return r.host().LeaderOf(g)
}

func (r partitionReplicator) Status(g replication.GroupID) (replication.View, bool) {
	return r.host().Status(g)
}

func (r partitionReplicator) RemoveMember(ctx context.Context, g replication.GroupID, id replication.NodeID) error {
	return r.host().RemoveMember(ctx, g, id)
}

func (r partitionReplicator) TransferLeadership(ctx context.Context, g replication.GroupID, to replication.NodeID) error {
	return r.host().TransferLeadership(ctx, g, to)
}

func (r partitionReplicator) Peers(ctx context.Context) (map[replication.NodeID]replication.Peer, error) {
	return r.host().Peers(ctx)
}

func (r partitionReplicator) Leave(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error) {
	return r.host().Call(ctx, to, callLeave, payload)
}

// callLeave is the call a node with a damaged partition replica makes to
// the partition's leader to be taken out of its group before it wipes
// the replica (replicated.Set.Leave, ServeLeave).
const callLeave uint8 = 3

var (
	_ replicated.Replicator = partitionReplicator{}
	_ replicated.Rebuilder  = partitionReplicator{}
)

// MetadataCompacted is the index the metadata raft log is compacted to
// on this node: its snapshot, taken here, found at start or installed
// from the leader (0: none).
func (b *Broker) MetadataCompacted() uint64 {
	if b.cl == nil {
		return 0
	}
	return b.cl.compacted.Load()
}

// MetadataRole reports whether this node leads the metadata group; ok is
// false on a single node.
func (b *Broker) MetadataRole() (leader, ok bool) {
	if b.cl == nil {
		return false, false
	}
	return b.metadataLeader(), true
}

// ClusterGroups lists the raft groups on this node (nil on a single node).
func (b *Broker) ClusterGroups() []replication.GroupID {
	if b.cl == nil {
		return nil
	}
	return b.cl.node.host.Groups()
}

// ClusterVoters returns the voters of group g as this node knows them.
func (b *Broker) ClusterVoters(g replication.GroupID) []replication.NodeID {
	if b.cl == nil {
		return nil
	}
	v, _ := b.cl.node.host.Status(g)
	return v.Voters
}

// watchGroupFailures handles raft groups that stopped on this node. A
// partition group is logged (the node keeps serving the others; the rest
// of the cluster keeps the partition). The metadata group stopping ends
// the process with an operator-facing reason: a node whose log lost what
// it had acknowledged (a wiped or replaced data directory) must not vote
// under its old identity.
func (b *Broker) watchGroupFailures(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-b.cl.node.host.Failures():
			if f.Group != replication.MetadataGroup {
				if errors.Is(f.Err, replication.ErrLogLost) && b.parts.RebuildGroup(f.Group, f.Err) {
					continue // rebuilt from the other replicas (partition/rebuild.go)
				}
				b.log.Error("partition raft group stopped on this node; the other replicas keep serving it (restart this node once the cause is fixed)", "group", uint64(f.Group), "err", f.Err)
				continue
			}
			id := b.cl.self.ReplicaID
			err := fmt.Errorf("cluster: metadata raft group stopped: %w", f.Err)
			if errors.Is(f.Err, replication.ErrLogLost) {
				err = fmt.Errorf("cluster: replica %d lost metadata the cluster had committed with it (its data directory was wiped or replaced), so it may not take part as it is: "+
					"remove it (iggo cluster remove-node --replica-id %d), start it again with an empty data directory and --join, then add it back under the same id and ports (iggo cluster add-node --replica-id %d ...): %w", id, id, id, f.Err)
			}
			b.log.Error("stopping this node", "err", err)
			select {
			case b.fatal <- err:
			default:
			}
			return
		}
	}
}
