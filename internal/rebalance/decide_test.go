package rebalance

import (
	"testing"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
)

func TestDecide(t *testing.T) {
	ids := func(n ...replication.NodeID) []replication.NodeID { return n }
	all := map[replication.NodeID]bool{0: true, 1: true, 2: true, 3: true}
	up := func(replication.NodeID) bool { return true }
	down := func(d ...replication.NodeID) func(replication.NodeID) bool {
		return func(n replication.NodeID) bool {
			for _, x := range d {
				if x == n {
					return false
				}
			}
			return true
		}
	}
	lead := func(voters, learners []replication.NodeID) replication.View {
		return replication.View{Role: replication.RoleLeader, Voters: voters, Learners: learners}
	}
	cases := []struct {
		name    string
		pp      metadata.PartitionPlacement
		v       replication.View
		members map[replication.NodeID]bool
		alive   func(replication.NodeID) bool
		self    replication.NodeID
		want    action
	}{
		{name: "in line", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1, 2), nil), want: action{kind: actNone}},
		{name: "not leader", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: replication.View{Voters: ids(0, 1, 2)}, want: action{kind: actNone}},
		{name: "unplaced", pp: pl(nil, nil), v: lead(ids(0, 1), nil), want: action{kind: actNone}},
		{name: "joint", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: replication.View{Role: replication.RoleLeader, Voters: ids(0, 1, 2), Joint: true}, want: action{kind: actWait}},
		{name: "move adds the target", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2), nil), want: action{kind: actAdd, node: 3}},
		{name: "learner is added again", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2), ids(3)), want: action{kind: actAdd, node: 3}},
		{name: "target down: wait, remove nothing", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2), ids(3)), alive: down(3), want: action{kind: actWait}},
		{name: "target voter but down: wait", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2, 3), nil), alive: down(3), want: action{kind: actWait}},
		{name: "target left the cluster: wait", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2), nil),
			members: map[replication.NodeID]bool{0: true, 1: true, 2: true}, want: action{kind: actWait}},
		{name: "target votes: remove the replaced", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 2, 3), nil), want: action{kind: actRemove, node: 2}},
		{name: "then commit", pp: pl([]uint8{0, 1, 2}, []uint8{0, 1, 3}), v: lead(ids(0, 1, 3), nil), want: action{kind: actCommit}},
		{name: "leader leaving hands over last", pp: pl([]uint8{0, 1, 2}, []uint8{3, 1, 2}), v: lead(ids(0, 1, 2, 3), nil), want: action{kind: actTransfer}},
		{name: "other extras before the leader", pp: pl([]uint8{0, 1, 2}, []uint8{3, 1, 4}), v: lead(ids(0, 1, 2, 3, 4), nil), want: action{kind: actRemove, node: 2},
			members: map[replication.NodeID]bool{0: true, 1: true, 2: true, 3: true, 4: true}},
		{name: "cleanup removes a stray learner", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1, 2), ids(3)), want: action{kind: actRemove, node: 3}},
		{name: "cleanup: member gone from the cluster", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1, 2), nil), alive: down(2),
			members: map[replication.NodeID]bool{0: true, 1: true}, want: action{kind: actRemove, node: 2}},
		{name: "cleanup keeps a quorum", pp: pl([]uint8{0, 1}, nil), v: lead(ids(0, 1), nil), alive: down(1),
			members: map[replication.NodeID]bool{0: true}, want: action{kind: actWait}},
		{name: "cleanup: quorum counts live voters only", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1, 2, 3), nil), alive: down(1),
			members: map[replication.NodeID]bool{0: true, 1: true, 2: true, 3: true}, want: action{kind: actRemove, node: 3}},
		{name: "cleanup refuses below quorum", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1, 2, 3), nil), alive: down(1, 2),
			members: map[replication.NodeID]bool{0: true, 1: true, 2: true, 3: true}, want: action{kind: actWait}},
		{name: "re-adds a replica back in the cluster", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1), nil), want: action{kind: actAdd, node: 2}},
		{name: "replica down and not a member: wait", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1), nil), alive: down(2), want: action{kind: actWait}},
		{name: "replica out of the cluster and not a member: nothing", pp: pl([]uint8{0, 1, 2}, nil), v: lead(ids(0, 1), nil),
			members: map[replication.NodeID]bool{0: true, 1: true}, want: action{kind: actWait}},
		{name: "leader not in the replicas hands over", pp: pl([]uint8{1, 2, 3}, nil), v: lead(ids(0, 1, 2, 3), nil), want: action{kind: actTransfer}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			members, alive := c.members, c.alive
			if members == nil {
				members = all
			}
			if alive == nil {
				alive = up
			}
			got := decide(c.pp, c.v, members, alive, c.self)
			if got.kind != c.want.kind || got.node != c.want.node {
				t.Fatalf("decide = %v, want %v", got, c.want)
			}
		})
	}
}

func pl(replicas, target []uint8) metadata.PartitionPlacement {
	return metadata.PartitionPlacement{Partition: 1, Replicas: replicas, Target: target}
}
