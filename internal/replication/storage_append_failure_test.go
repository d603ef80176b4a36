package replication

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// failingAppendLog fails every Append once fail is set, as a raft log on
// a disk that returns EIO (or is full) does.
type failingAppendLog struct {
	LogStorage
	fail atomic.Bool
}

func (l *failingAppendLog) Append(ents []*raftpb.Entry) error {
	if l.fail.Load() {
		return syscall.EIO
	}
	return l.LogStorage.Append(ents)
}

// TestFailedAppendNeverAcknowledges: a node whose raft log write fails
// stops the group on itself (storage failure, reported on Failures) and
// never acknowledges the entry: a proposal on a leader whose own append
// failed is not answered with success, and the other replicas go on
// (electing a new leader when needed) and commit later proposals.
func TestFailedAppendNeverAcknowledges(t *testing.T) {
	for _, role := range []string{"follower", "leader"} {
		t.Run(role, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 3, 7, nil)
				const g = GroupID(3)
				c.voters[g] = c.ids
				logs := map[NodeID]*failingAppendLog{}
				for _, id := range c.ids {
					logs[id] = &failingAppendLog{LogStorage: NewMemoryLog()}
					c.addGroupOn(id, g, GroupOptions{Voters: c.ids, Storage: logs[id]})
				}
				lead := c.leader(g, 10*time.Second)
				if _, err := c.propose(g, []byte("before"), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				bad := lead
				if role == "follower" {
					for _, id := range c.ids {
						if id != lead {
							bad = id
							break
						}
					}
				}
				logs[bad].fail.Store(true)
				if role == "leader" {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, err := c.hosts[lead].Propose(ctx, g, []byte("on a failing disk"))
					cancel()
					if err == nil {
						t.Fatal("a leader whose log write failed acknowledged the proposal")
					}
				} else if _, err := c.propose(g, []byte("while a follower fails"), 10*time.Second); err != nil {
					t.Fatalf("the two healthy replicas did not commit: %v", err)
				}
				select {
				case f := <-c.hosts[bad].Failures():
					if f.Group != g {
						t.Fatalf("failure reported for group %d, want %d", f.Group, g)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the group was not stopped on the node whose log write failed")
				}
				if _, ok := c.hosts[bad].Status(g); ok {
					t.Fatal("the failed group is still on the node")
				}
				c.voters[g] = nil
				for _, id := range c.ids {
					if id != bad {
						c.voters[g] = append(c.voters[g], id)
					}
				}
				if _, err := c.propose(g, []byte("after"), 20*time.Second); err != nil {
					t.Fatalf("the healthy replicas after the failure: %v", err)
				}
			})
		})
	}
}
