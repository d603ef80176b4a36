package replication

import (
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// admitSnapshot prepares a snapshot message from the leader of a group
// for this node. A node added to a group (as a learner, AddMember) whose
// log ends before the leader's compaction point gets the leader's
// snapshot, which was taken before the node was added: its ConfState
// does not name the node, and raft refuses to restore it (etcd always
// sends a snapshot of the current state, so raft calls that "should
// never happen"). A leader only sends to members of its configuration,
// and the entries after the snapshot add this node; so the node is added
// to the snapshot's learners before raft sees it. The configuration it
// builds from the snapshot and those entries is the leader's: adding a
// learner that already is one changes nothing, and no change between
// the snapshot and the node's own addition can involve it. Any other
// message is returned as it is.
func admitSnapshot(self NodeID, m *raftpb.Message) *raftpb.Message {
	if m.GetType() != raftpb.MsgSnap {
		return m
	}
	cs := m.GetSnapshot().GetMetadata().GetConfState()
	if cs == nil {
		return m
	}
	id := raftID(self)
	for _, set := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		if slices.Contains(set, id) {
			return m
		}
	}
	// The message may be shared with the sender (an in-process network):
	// change a copy.
	c := proto.CloneOf(m)
	ncs := c.GetSnapshot().GetMetadata().GetConfState()
	ncs.Learners = append(ncs.Learners, id)
	return c
}
