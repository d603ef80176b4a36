package replication

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// brokenLog is a log that fails every call once broken is set, as a
// raft log does after a failed write (a full disk, no file descriptors).
type brokenLog struct {
	LogStorage
	broken atomic.Bool
}

var errBrokenLog = errors.New("raft log unusable after failed write")

func (l *brokenLog) LastIndex() (uint64, error) {
	if l.broken.Load() {
		return 0, errBrokenLog
	}
	return l.LogStorage.LastIndex()
}

func (l *brokenLog) Entries(lo, hi, max uint64) ([]*raftpb.Entry, error) {
	if l.broken.Load() {
		return nil, errBrokenLog
	}
	return l.LogStorage.Entries(lo, hi, max)
}

func (l *brokenLog) CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (*raftpb.Snapshot, error) {
	if l.broken.Load() {
		return nil, errBrokenLog
	}
	return l.LogStorage.CreateSnapshot(i, cs, data)
}

// TestFailedLogStopsOnlyItsGroup: a group whose log breaks is stopped and
// reported (raft panics on the log in a tick's campaign, or a compaction
// fails); the host and its other groups go on.
func TestFailedLogStopsOnlyItsGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, 1, nil)
		c.addGroup(1)
		bad := &brokenLog{LogStorage: NewMemoryLog()}
		const g = GroupID(2)
		c.voters[g] = c.ids
		c.addGroupOn(0, g, GroupOptions{Voters: c.ids})
		for _, id := range c.ids[1:] {
			var st LogStorage = bad
			if id != 1 {
				st = NewMemoryLog()
			}
			c.addGroupOn(id, g, GroupOptions{Voters: c.ids, Storage: st})
		}
		c.leader(g, 5*time.Second)
		bad.broken.Store(true)
		// Node 1 loses its leader (node 0 crashes): its next election
		// timeout campaigns, which reads the broken log.
		c.crash(0)
		select {
		case f := <-c.hosts[1].Failures():
			if f.Group != g {
				t.Fatalf("failure reported for group %d, want %d", f.Group, g)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the group with the broken log was not stopped")
		}
		if _, ok := c.hosts[1].Status(g); ok {
			t.Fatal("the failed group is still on the host")
		}
		if l := c.leader(1, 10*time.Second); l == 0 {
			t.Fatalf("group 1 led by the crashed node")
		}
		if _, err := c.propose(1, []byte("after"), 10*time.Second); err != nil {
			t.Fatalf("group 1 after the other group's failure: %v", err)
		}
	})
}
