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
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// Node administration (CLUSTER_ADD_NODE, CLUSTER_REMOVE_NODE; Iggo's
// extension commands, `iggo cluster add-node` / `remove-node`). Both run
// on the metadata leader and need the manage_servers permission.
//
// Adding a node: the roster with the new node commits through the
// metadata log (every node's transport then knows its address); the node
// joins the metadata group and then every partition group as a learner,
// and each group promotes it to voter only once it holds the leader's log
// up to the index it had when the learner was added — the data reaches
// the node before it votes (replication.Host.AddMember). Partition groups created afterwards include
// it from the start.
//
// Removing a node: it leaves every partition group, then the metadata
// group (each one configuration change, which raft applies through joint
// consensus when needed), then the roster without it commits. The leader
// does not remove itself: it hands metadata leadership to another voter
// and answers 58, so the client retries on the new leader.

// adminTimeout bounds one administration command.
const adminTimeout = 5 * time.Minute

func (b *Broker) registerClusterAdmin() {
	b.disp.Handle(wire.CmdClusterAddNode, b.clusterAddNode)
	b.disp.Handle(wire.CmdClusterRemoveNode, b.clusterRemoveNode)
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

// addNode commits the roster, then adds the node to the metadata group and
// to every partition group this node leads (Host.AddMember: as a learner,
// promoted once it caught up).
func (b *Broker) addNode(ctx context.Context, roster []config.ClusterNode) error {
	data, err := encodeRoster(roster)
	if err != nil {
		return err
	}
	if err := b.meta.CommitRoster(data); err != nil {
		return fmt.Errorf("commit the roster: %w", err)
	}
	id := replication.NodeID(roster[len(roster)-1].ReplicaID)
	groups := append([]replication.GroupID{replication.MetadataGroup}, b.partitionGroups()...)
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
	return nil
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

// removeNode takes id out of every partition group, then the metadata
// group, then commits the roster without it.
func (b *Broker) removeNode(ctx context.Context, roster []config.ClusterNode, id replication.NodeID) error {
	h := b.cl.node.host
	for _, g := range append(b.partitionGroups(), replication.MetadataGroup) {
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

// adminCode is the status of a failed administration command: what
// replication.Transient says for a replication error (58: not admitted,
// for example leadership moved, retry on the new leader; 57: a step's
// outcome is unknown), 1 otherwise (the server log names the step).
func adminCode(err error) uint32 {
	if code, ok := replication.Transient(err); ok {
		return code
	}
	return wire.ErrError.Code
}
