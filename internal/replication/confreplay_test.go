package replication

import (
	"slices"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func confEntry(t *testing.T, index uint64, cc proto.Message) *raftpb.Entry {
	t.Helper()
	data, err := proto.Marshal(cc)
	if err != nil {
		t.Fatal(err)
	}
	typ := raftpb.EntryConfChangeV2
	if _, ok := cc.(*raftpb.ConfChange); ok {
		typ = raftpb.EntryConfChange
	}
	return &raftpb.Entry{Index: new(index), Term: new(uint64(1)), Type: typ.Enum(), Data: data}
}

func single(t raftpb.ConfChangeType, id uint64) *raftpb.ConfChangeSingle {
	return &raftpb.ConfChangeSingle{Type: t.Enum(), NodeId: new(id)}
}

// TestConfReplayFollowsRaft follows the bootstrap entries (v1), a learner,
// a joint change and its automatic leave, and refuses what raft refuses.
func TestConfReplayFollowsRaft(t *testing.T) {
	c, err := NewConfReplay(&raftpb.ConfState{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		cc                proto.Message
		voters, learners  []uint64
		outgoing          []uint64
		autoLeave, refuse bool
	}{
		{cc: &raftpb.ConfChange{Type: raftpb.ConfChangeAddNode.Enum(), NodeId: new(uint64(1))}, voters: []uint64{1}},
		{cc: &raftpb.ConfChange{Type: raftpb.ConfChangeAddNode.Enum(), NodeId: new(uint64(2))}, voters: []uint64{1, 2}},
		{cc: &raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{single(raftpb.ConfChangeAddLearnerNode, 3)}}, voters: []uint64{1, 2}, learners: []uint64{3}},
		{cc: &raftpb.ConfChangeV2{Transition: raftpb.ConfChangeTransitionAuto.Enum(), Changes: []*raftpb.ConfChangeSingle{
			single(raftpb.ConfChangeAddNode, 3), single(raftpb.ConfChangeRemoveNode, 2)}},
			voters: []uint64{1, 3}, outgoing: []uint64{1, 2}, autoLeave: true},
		// A second joint change while joint: raft refuses it.
		{cc: &raftpb.ConfChangeV2{Transition: raftpb.ConfChangeTransitionJointExplicit.Enum(), Changes: []*raftpb.ConfChangeSingle{
			single(raftpb.ConfChangeAddNode, 4), single(raftpb.ConfChangeRemoveNode, 1)}}, refuse: true},
		{cc: &raftpb.ConfChangeV2{}, voters: []uint64{1, 3}},
		// Leaving a joint configuration that is not joint: refused.
		{cc: &raftpb.ConfChangeV2{}, refuse: true},
	}
	for i, s := range steps {
		index := uint64(i + 1)
		err := c.Apply(confEntry(t, index, s.cc))
		if s.refuse {
			if err == nil {
				t.Fatalf("step %d: accepted what raft refuses; state %v", i, c.State())
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		cs := c.State()
		if !slices.Equal(cs.GetVoters(), s.voters) || !slices.Equal(cs.GetLearners(), s.learners) ||
			!slices.Equal(cs.GetVotersOutgoing(), s.outgoing) || cs.GetAutoLeave() != s.autoLeave {
			t.Fatalf("step %d: got %v", i, cs)
		}
		if c.Index() != index {
			t.Fatalf("step %d: index %d", i, c.Index())
		}
	}
	if err := c.Apply(&raftpb.Entry{Index: new(uint64(9)), Type: raftpb.EntryNormal.Enum(), Data: []byte("x")}); err != nil || c.Index() != 6 {
		t.Fatalf("a normal entry: %v, index %d", err, c.Index())
	}
	if err := c.Apply(&raftpb.Entry{Index: new(uint64(10)), Type: raftpb.EntryConfChangeV2.Enum(), Data: []byte{0xff}}); err == nil {
		t.Fatal("an undecodable configuration entry was accepted")
	}
}
