package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/rebalance"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// Node administration (CLUSTER_ADD_NODE, CLUSTER_REMOVE_NODE,
// CLUSTER_REBALANCE; Iggo's extension commands, `iggo cluster add-node` /
// `remove-node` / `rebalance`). They run on the metadata leader and need
// the manage_servers permission.
//
// Adding a node: the roster with the new node commits through the
// metadata log (every node's transport then knows its address); the node
// joins the metadata group as a learner and is promoted to voter only
// once it holds the leader's log up to the index it had when the learner
// was added (replication.Host.AddMember). Then a rebalance moves
// replicas of placed partitions onto it (package rebalance); partitions
// without a placement (created before placement existed) get it as a
// member of their group at once, as the metadata group does. Partition
// groups created afterwards may place replicas on it from the start.
//
// Removing a node: its replicas are first moved to other nodes (a
// drain); a partition no other node can take a replica of (every other
// node holds one) refuses the removal while the node is reachable, and
// leaves the partition one replica short when it is not. Then the node
// leaves the groups of unplaced partitions and the metadata group (each
// one configuration change), and the roster without it commits. The
// leader does not remove itself: it hands metadata leadership to another
// voter and answers 58, so the client retries on the new leader.

// adminTimeout bounds one administration command.
const adminTimeout = 5 * time.Minute

// drainTimeout bounds a drain: what is left of adminTimeout finishes the
// removal before the client's own timeout.
const drainTimeout = adminTimeout - 30*time.Second

func (b *Broker) registerClusterAdmin() {
	b.disp.Handle(wire.CmdClusterAddNode, b.clusterAddNode)
	b.disp.Handle(wire.CmdClusterRemoveNode, b.clusterRemoveNode)
	b.disp.Handle(wire.CmdClusterRebalance, b.clusterRebalance)
}

// adminAllowed checks cluster mode, the caller's permission and the
// metadata leadership; false means x is answered.
func (b *Broker) adminAllowed(x *dispatch.Exchange) bool {
	switch u, ok := x.User(); {
	case b.cl == nil:
		x.Deny(wire.ErrFeatureUnavailable.Code)
	case !ok || !u.CanManageServers():
		x.Deny(wire.ErrUnauthorized.Code)
	case !b.metadataLeader():
		x.Deny(wire.ErrTransientNotAccepted.Code)
	default:
		return true
	}
	return false
}

func (b *Broker) clusterAddNode(x *dispatch.Exchange) {
	var spec wire.ClusterNodeSpec
	if err := spec.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !b.adminAllowed(x) {
		return
	}
	node := config.ClusterNode{
		Name: spec.Name, IP: spec.IP, ReplicaID: spec.ReplicaID,
		Ports: config.ClusterPorts{TCP: spec.TCPPort, QUIC: spec.QUICPort, HTTP: spec.HTTPPort, WebSocket: spec.WebSocketPort, TCPReplica: spec.ReplicaPort},
		Rack:  spec.Rack, MetadataOnly: spec.MetadataOnly,
	}
	roster := b.cl.roster.get()
	if err := checkNewNode(roster, node); err != nil {
		b.log.Warn("cluster add-node refused", "replica_id", node.ReplicaID, "err", err)
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := b.addNode(ctx, append(slices.Clone(roster), node)); err != nil {
		b.log.Error("cluster add-node failed", "replica_id", node.ReplicaID, "err", err)
		x.Deny(adminCode(err))
		return
	}
	x.Reply(nil)
}

// checkNewNode applies the roster rules to a node being added: a new
// replica id and name, a literal IP, the required ports, a replica
// address no other node uses.
func checkNewNode(roster []config.ClusterNode, n config.ClusterNode) error {
	if n.Name == "" {
		return errors.New("name is empty")
	}
	if _, err := netip.ParseAddr(n.IP); err != nil {
		return fmt.Errorf("ip %q is not a literal IP address", n.IP)
	}
	if n.Ports.TCP == 0 || n.Ports.TCPReplica == 0 {
		return errors.New("ports.tcp and ports.tcp_replica are required")
	}
	racked := 0
	for _, o := range roster {
		if o.Rack != "" {
			racked++
		}
	}
	switch {
	case racked == len(roster) && len(roster) > 0 && n.Rack == "":
		return errors.New("the cluster's nodes have racks: give the new node one (--rack)")
	case racked == 0 && n.Rack != "":
		return fmt.Errorf("rack %q given, but the cluster's nodes have none", n.Rack)
	}
	for _, o := range roster {
		switch {
		case o.ReplicaID == n.ReplicaID:
			return fmt.Errorf("replica id %d is taken by %q", n.ReplicaID, o.Name)
		case o.Name == n.Name:
			return fmt.Errorf("name %q is taken", n.Name)
		case o.ReplicaAddr() == n.ReplicaAddr():
			return fmt.Errorf("replica address %s is taken by %q", n.ReplicaAddr(), o.Name)
		}
	}
	return nil
}

// addNode commits the roster, adds the node to the metadata group and to
// the groups of unplaced partitions this node leads (Host.AddMember: as a
// learner, promoted once it caught up), then starts a rebalance that
// moves replicas of placed partitions onto it.
func (b *Broker) addNode(ctx context.Context, roster []config.ClusterNode) error {
	data, err := encodeRoster(roster)
	if err != nil {
		return err
	}
	if err := b.meta.CommitRoster(data); err != nil {
		return fmt.Errorf("commit the roster: %w", err)
	}
	id := replication.NodeID(roster[len(roster)-1].ReplicaID)
	groups := append([]replication.GroupID{replication.MetadataGroup}, b.unplacedGroups()...)
	for _, g := range groups {
		// Partition leadership follows the metadata leader: wait for it
		// here before the host checks it.
		if _, err := b.leaderView(ctx, g); err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		if err := b.cl.node.host.AddMember(ctx, g, id); err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
	}
	b.log.Info("cluster node added", "replica_id", id, "groups", len(groups))
	r, err := b.cl.moves.plan.Rebalance(ctx)
	if err != nil {
		b.log.Warn("cluster node added, but no rebalance was planned: run iggo cluster rebalance", "replica_id", id, "err", err)
		return nil
	}
	b.log.Info("rebalance after adding a node", "replica_id", id, "moves_started", r.Started, "moves_in_progress", r.InProgress)
	return nil
}

// unplacedGroups lists the partition groups on this host whose
// partitions have no replica list: every voter holds them, so nodes
// join and leave them with the metadata group.
func (b *Broker) unplacedGroups() []replication.GroupID {
	hosted := map[replication.GroupID]bool{}
	for _, g := range b.partitionGroups() {
		hosted[g] = true
	}
	var out []replication.GroupID
	for _, pp := range b.meta.Placements() {
		if g := replicated.GroupID(pp.Ref, pp.Partition); len(pp.Replicas) == 0 && hosted[g] {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// partitionGroups lists the partition groups on this host.
func (b *Broker) partitionGroups() []replication.GroupID {
	var out []replication.GroupID
	for _, g := range b.cl.node.host.Groups() {
		if g != replication.MetadataGroup {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// leaderView waits until this node leads group g (partition leadership
// follows the metadata leader) and returns its view.
func (b *Broker) leaderView(ctx context.Context, g replication.GroupID) (replication.View, error) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := b.cl.node.host.WaitFor(wctx, g, func(v replication.View) bool {
		return v.Role == replication.RoleLeader && !v.Joint
	})
	if err != nil {
		return v, fmt.Errorf("%w: this node does not lead the group: %w", replication.ErrNotLeader, err)
	}
	return v, nil
}

func (b *Broker) clusterRemoveNode(x *dispatch.Exchange) {
	var req wire.ClusterRemoveNode
	if err := req.Decode(x.Body); err != nil {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !b.adminAllowed(x) {
		return
	}
	roster := b.cl.roster.get()
	i := slices.IndexFunc(roster, func(n config.ClusterNode) bool { return n.ReplicaID == req.ReplicaID })
	switch {
	case i < 0:
		x.Deny(wire.ErrResourceNotFound.Code)
		return
	case len(roster) == 1:
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	id := replication.NodeID(req.ReplicaID)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if id == replication.NodeID(b.cl.self.ReplicaID) {
		// Hand the metadata leadership over first; the client's retry
		// of the 58 reaches the new leader, which removes this node.
		if err := b.handOver(ctx, id); err != nil {
			b.log.Error("cluster remove-node: leadership transfer failed", "err", err)
		}
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	if err := b.removeNode(ctx, slices.Delete(slices.Clone(roster), i, i+1), id); err != nil {
		b.log.Error("cluster remove-node failed", "replica_id", id, "err", err)
		x.Deny(adminCode(err))
		return
	}
	x.Reply(nil)
}

// handOver transfers the metadata leadership from this node to another
// voter.
func (b *Broker) handOver(ctx context.Context, self replication.NodeID) error {
	v, ok := b.cl.node.host.Status(replication.MetadataGroup)
	if !ok {
		return replication.ErrUnknownGroup
	}
	for _, n := range v.Voters {
		if n != self {
			return b.cl.node.host.TransferLeadership(ctx, replication.MetadataGroup, n)
		}
	}
	return errors.New("no other voter to hand the leadership to")
}

// removeNode drains id (its replicas move to other nodes; a partition
// no other node can take stays one replica short, only when id is
// unreachable), takes it out of the groups of unplaced partitions and
// the metadata group, waits until the executors took it out of the
// groups it still was in, then commits the roster without it.
func (b *Broker) removeNode(ctx context.Context, roster []config.ClusterNode, id replication.NodeID) error {
	h := b.cl.node.host
	plan := b.cl.moves.plan
	if _, err := plan.CheckRemoval(ctx, uint8(id)); err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, drainTimeout)
	_, release, err := plan.Drain(dctx, uint8(id))
	cancel()
	defer release()
	if err != nil {
		return err
	}
	// Check again: a node may have died or come back meanwhile.
	rm, err := plan.CheckRemoval(ctx, uint8(id))
	if err != nil {
		return err
	}
	for _, g := range append(b.unplacedGroups(), replication.MetadataGroup) {
		v, err := b.leaderView(ctx, g)
		if err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		if !slices.Contains(v.Voters, id) && !slices.Contains(v.Learners, id) {
			continue
		}
		if _, err := h.ChangeMembership(ctx, g, []replication.MemberChange{{Type: replication.Remove, Node: id}}); err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
	}
	if len(rm.Stuck) > 0 {
		b.log.Warn("removing an unreachable node whose replicas no other node can take: those partitions run one replica short until a node takes them (add a node; a rebalance follows)",
			"replica_id", id, "partitions", len(rm.Stuck))
		if err := b.awaitLeft(ctx, rm.Stuck, id); err != nil {
			return err
		}
	}
	data, err := encodeRoster(roster)
	if err != nil {
		return err
	}
	if err := b.meta.CommitRoster(data); err != nil {
		return fmt.Errorf("commit the roster: %w", err)
	}
	b.log.Info("cluster node removed", "replica_id", id)
	return nil
}

// awaitLeft waits until id is no member of the groups of pls hosted
// here: it left the metadata group, so each group's leader takes it out
// (rebalance.Executor). This node holds a replica of each of them (no
// other node could take the one on id).
func (b *Broker) awaitLeft(ctx context.Context, pls []metadata.PartitionPlacement, id replication.NodeID) error {
	for _, pp := range pls {
		g := replicated.GroupID(pp.Ref, pp.Partition)
		if _, ok := b.cl.node.host.Status(g); !ok {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, err := b.cl.node.host.WaitFor(wctx, g, func(v replication.View) bool {
			return !slices.Contains(v.Voters, id) && !slices.Contains(v.Learners, id)
		})
		cancel()
		if err != nil {
			return fmt.Errorf("wait until node %d left the group of partition %d: %w", id, pp.Partition, err)
		}
	}
	return nil
}

// adminCode is the status of a failed administration command:
// InvalidReplicationFactor (2018) for a node whose removal would leave a
// partition without its replicas (the server log says which), else what
// replication.Transient says for a replication error (58: not admitted,
// for example leadership moved, retry on the new leader; 57: a step's
// outcome is unknown), 1 otherwise (the server log names the step).
func adminCode(err error) uint32 {
	switch {
	case errors.Is(err, rebalance.ErrLastReplica), errors.Is(err, rebalance.ErrNoRoom), errors.Is(err, rebalance.ErrNoQuorum):
		return wire.ErrInvalidReplicationFactor.Code
	case errors.Is(err, rebalance.ErrDrainIncomplete):
		return wire.ErrError.Code
	}
	if code, ok := replication.Transient(err); ok {
		return code
	}
	return wire.ErrError.Code
}
