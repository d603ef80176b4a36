package broker

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/clusterinfo"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// The partition map (CLUSTER_PARTITIONS, an Iggo extension command, and
// GET /cluster/partitions, which the HTTP API serves through it): every
// roster node with its client addresses for the caller, and every
// partition of every topic the caller may see with its replicas, its
// leader and the replicas known to be caught up. Any node answers from
// what it knows; Iggo's SDK reads it to send each partition's requests to
// that partition's leader, `iggo cluster partitions` and the console's
// cluster page show it.

// caughtUpBudget bounds the progress lookups of one map: past it the
// remaining partitions report their caught-up replicas as unknown.
const caughtUpBudget = 2 * time.Second

// partitionLookups are the three replication-layer reads of the map,
// kept apart so that their sources can change without touching the rest:
//
//   - replicasOf: the replica ids holding a partition, preferred leader
//     first: its placement (and the target of a move in progress after
//     it); for a partition created before placement, the group's members
//     as this node sees them, or the metadata group's voters where the
//     group is not hosted here.
//   - leaderOf: the leader of a group as this node knows it, from its own
//     view or the leader directory.
//   - caughtUp: the members holding the group's log as its leader
//     announced them (the leader directory), or, on the leader, raft's
//     progress; false when unknown.
type partitionLookups struct {
	replicasOf func(ref catalog.TopicRef, partition uint32, g replication.GroupID) []uint8
	leaderOf   func(g replication.GroupID) (uint8, bool)
	caughtUp   func(ctx context.Context, g replication.GroupID) ([]uint8, bool)
}

// lookups returns the broker's partition lookups (cluster mode only),
// with one snapshot of the leader directory.
func (b *Broker) lookups() partitionLookups {
	h := b.cl.node.host
	dir := h.Directory()
	return partitionLookups{
		replicasOf: func(ref catalog.TopicRef, p uint32, g replication.GroupID) []uint8 {
			if r, target := b.meta.Placement(ref, p); len(r) > 0 {
				for _, n := range target {
					if !slices.Contains(r, n) {
						r = append(r, n)
					}
				}
				return r
			}
			if v, ok := h.Status(g); ok {
				return replicaIDs(append(slices.Clone(v.Voters), v.Learners...))
			}
			v, _ := h.Status(replication.MetadataGroup)
			return replicaIDs(v.Voters)
		},
		leaderOf: func(g replication.GroupID) (uint8, bool) {
			if l, ok := dir[g]; ok {
				return uint8(l.Leader), true
			}
			id, ok := h.LeaderOf(g)
			return uint8(id), ok
		},
		caughtUp: func(ctx context.Context, g replication.GroupID) ([]uint8, bool) {
			if l, ok := dir[g]; ok && l.CaughtUp != nil {
				return replicaIDs(l.CaughtUp), true
			}
			if v, ok := h.Status(g); !ok || v.Role != replication.RoleLeader {
				return nil, false
			}
			return progressCaughtUp(ctx, h, g)
		},
	}
}

// progressCaughtUp lists, on g's leader, the members whose replicated
// index reaches the group's commit index (the leader included).
func progressCaughtUp(ctx context.Context, h *replication.Host, g replication.GroupID) ([]uint8, bool) {
	match, _, err := h.Progress(ctx, g)
	if err != nil {
		return nil, false
	}
	v, ok := h.Status(g)
	if !ok {
		return nil, false
	}
	var ids []replication.NodeID
	for id, m := range match {
		if m >= v.Commit {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return replicaIDs(ids), true
}

// replicaIDs converts raft-host node ids (which are replica ids) to u8.
func replicaIDs(ids []replication.NodeID) []uint8 {
	out := make([]uint8, 0, len(ids))
	for _, id := range ids {
		out = append(out, uint8(id))
	}
	return out
}

func (b *Broker) registerClusterPartitions() {
	b.disp.Handle(wire.CmdClusterPartitions, b.clusterPartitions)
}

// clusterPartitions answers CLUSTER_PARTITIONS: any authenticated user,
// as GET_CLUSTER_METADATA; the topics listed are those the user may read,
// poll or send to (all of them with read_servers).
func (b *Broker) clusterPartitions(x *dispatch.Exchange) {
	var req wire.ClusterPartitions
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	u, ok := x.User()
	if !ok {
		x.Deny(wire.ErrUnauthenticated.Code)
		return
	}
	var peer netip.Addr
	if ap, err := netip.ParseAddrPort(x.Conn.Addr); err == nil {
		peer = ap.Addr()
	}
	ctx, cancel := context.WithTimeout(x.Conn.Context(), caughtUpBudget)
	defer cancel()
	m := b.partitionMap(ctx, peer, b.topicVisible(&u), req.Flags&wire.PartitionMapLeadersOnly == 0, b.lookups())
	if err := m.Validate(); err != nil {
		b.log.Error("partition map does not encode", "err", err)
		x.Deny(wire.ErrError.Code)
		return
	}
	x.Reply(m.AppendTo(x.Scratch()))
}

// topicVisible says which topics u sees in the map.
func (b *Broker) topicVisible(u *auth.User) func(stream, topic uint32) bool {
	if u.CanReadServers() {
		return func(uint32, uint32) bool { return true }
	}
	id := uint32(u.ID)
	return func(stream, topic uint32) bool {
		return b.meta.Allowed(id, catalog.ActionPoll, stream, topic) || b.meta.Allowed(id, catalog.ActionSend, stream, topic)
	}
}

// partitionMap assembles the map for a caller at peer: the live roster in
// roster order (addresses and ports as GET_CLUSTER_METADATA gives them to
// that caller), then every visible topic of the committed metadata with
// its partitions. Caught-up lists are looked up while withCaughtUp is set
// and ctx lasts.
func (b *Broker) partitionMap(ctx context.Context, peer netip.Addr, visible func(stream, topic uint32) bool, withCaughtUp bool, lk partitionLookups) wire.PartitionMap {
	roster := b.cl.roster.get()
	cl := *b.cl.cfg
	cl.Nodes = roster
	md := clusterinfo.Metadata(&cl, clusterinfo.NoLeader, peer, clusterinfo.TransportsOf(&b.cfg))
	var m wire.PartitionMap
	for i, n := range md.Nodes {
		m.Nodes = append(m.Nodes, wire.PartitionMapNode{
			ReplicaID: roster[i].ReplicaID, Name: n.Name, Host: n.IP,
			TCPPort: n.TCPPort, QUICPort: n.QUICPort, HTTPPort: n.HTTPPort, WebSocketPort: n.WebSocketPort,
		})
	}
	for _, t := range b.meta.Inventory().Topics {
		if !visible(t.Ref.StreamID, t.Ref.TopicID) {
			continue
		}
		mt := wire.PartitionMapTopic{StreamID: t.Ref.StreamID, StreamName: t.StreamName, TopicID: t.Ref.TopicID, TopicName: t.Name}
		for _, p := range t.Partitions {
			g := replicated.GroupID(t.Ref, p)
			pl := wire.PartitionPlacement{PartitionID: p, Replicas: lk.replicasOf(t.Ref, p, g)}
			pl.Leader, pl.HasLeader = lk.leaderOf(g)
			if !pl.HasLeader {
				pl.Leader = 0
			}
			if withCaughtUp && ctx.Err() == nil {
				pl.CaughtUp, pl.HasCaughtUp = lk.caughtUp(ctx, g)
			}
			if !pl.HasCaughtUp {
				pl.CaughtUp = nil
			}
			mt.Partitions = append(mt.Partitions, pl)
		}
		m.Topics = append(m.Topics, mt)
	}
	return m
}
