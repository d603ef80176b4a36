package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// staleHeartbeat is a heartbeat of leader lead in term for group g
// carrying commit, as it sent it to node to before to was removed.
func staleHeartbeat(g GroupID, lead, to NodeID, term, commit uint64) []transport.Envelope {
	return []transport.Envelope{{Group: uint64(g), Kind: transport.KindRaft, Msg: &raftpb.Message{
		Type: raftpb.MsgHeartbeat.Enum(), From: new(raftID(lead)), To: new(raftID(to)), Term: new(term), Commit: new(commit),
	}}}
}

// TestRemoveMemberAndRebuild is the rebuild of a damaged replica at the
// level of the host: the node stops its group, the leader removes it
// (RemoveMember: a follower refuses, a repeat is a no-op), the node
// starts an empty group marked Rebuilt, a heartbeat sent before the
// removal does not stop it (it stops a group not so marked: ErrLogLost),
// and added back it ends with the leader's log.
func TestRemoveMemberAndRebuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 71, nil)
		c.addGroup(1)
		c.addGroup(2)
		acked := map[string]uint64{}
		for i := range 10 {
			d := fmt.Sprintf("e%d", i)
			idx, err := c.propose(1, []byte(d), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			acked[d] = idx
			if _, err := c.propose(2, []byte(d), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		lead := c.leader(1, 5*time.Second)
		if c.leader(2, 5*time.Second) != lead {
			t.Skip("the two groups elected different leaders") // never with this seed
		}
		h := c.hosts[lead]
		victim := c.ids[(slices.Index(c.ids, lead)+1)%len(c.ids)]
		other := c.ids[(slices.Index(c.ids, lead)+2)%len(c.ids)]
		ctx := contextWithTimeout(t, 60*time.Second)

		var nle *NotLeaderError
		if err := c.hosts[other].RemoveMember(ctx, 1, victim); !errors.As(err, &nle) {
			t.Fatalf("RemoveMember on a follower: %v", err)
		}
		v, _ := h.Status(1)
		term, commit := v.Term, v.Commit
		// The damaged node stops its group; the leader removes it.
		if err := c.hosts[victim].RemoveGroup(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := h.RemoveMember(ctx, 1, victim); err != nil {
			t.Fatal(err)
		}
		if v, _ := h.Status(1); slices.Contains(v.Voters, victim) || slices.Contains(v.Learners, victim) {
			t.Fatalf("node %d still a member after RemoveMember: %+v", victim, v)
		}
		if err := h.RemoveMember(ctx, 1, victim); err != nil {
			t.Fatalf("RemoveMember of a non-member: %v", err)
		}
		// It starts again empty (its replica wiped, its machine new),
		// marked Rebuilt, and gets a heartbeat the leader sent before the
		// removal.
		c.sms[victim] = newRecordSM()
		c.addGroupOn(victim, 1, GroupOptions{Storage: NewMemoryLog(), Rebuilt: true})
		c.hosts[victim].Deliver(lead, staleHeartbeat(1, lead, victim, term, commit))
		// The same heartbeat to a group not marked Rebuilt stops it: the
		// mark is what keeps the rebuilt one alive.
		if err := c.hosts[victim].RemoveGroup(ctx, 2); err != nil {
			t.Fatal(err)
		}
		c.addGroupOn(victim, 2, GroupOptions{Storage: NewMemoryLog()})
		c.hosts[victim].Deliver(lead, staleHeartbeat(2, lead, victim, term, commit))
		select {
		case f := <-c.hosts[victim].Failures():
			if f.Group != 2 || !errors.Is(f.Err, ErrLogLost) {
				t.Fatalf("failure %+v, want group 2 with ErrLogLost", f)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a group not marked Rebuilt took a heartbeat beyond its log")
		}
		if _, ok := c.hosts[victim].Status(1); !ok {
			t.Fatal("the rebuilt group stopped on a heartbeat from before its removal")
		}
		// Added back: a learner that catches up, then a voter.
		if err := h.AddMember(ctx, 1, victim); err != nil {
			t.Fatal(err)
		}
		v, _ = h.Status(1)
		if !slices.Contains(v.Voters, victim) {
			t.Fatalf("node %d not a voter again: %+v", victim, v)
		}
		c.voters[1] = v.Voters
		c.waitApplied(1, []NodeID{victim}, len(acked), 10*time.Second)
		checkAcked(t, 1, c.checkSame(1, c.voters[1]), acked)
	})
}

// TestAddGroupCommitBeyondLog: a log whose stored commit index is beyond
// its last entry (a truncated file) fails AddGroup with ErrLogLost
// instead of raft's panic taking the host down; the host goes on.
func TestAddGroupCommitBeyondLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, 5, nil)
		st := NewMemoryLog()
		if err := st.SetHardState(&raftpb.HardState{Term: new(uint64(2)), Commit: new(uint64(7))}); err != nil {
			t.Fatal(err)
		}
		err := c.hosts[0].AddGroup(context.Background(), 1, GroupOptions{Machine: c.sms[0].machine(1), Storage: st})
		if !errors.Is(err, ErrLogLost) {
			t.Fatalf("AddGroup of a log that lost committed entries: %v", err)
		}
		c.addGroup(2)
		if _, err := c.propose(2, []byte("x"), 10*time.Second); err != nil {
			t.Fatalf("the host after the refused group: %v", err)
		}
	})
}
