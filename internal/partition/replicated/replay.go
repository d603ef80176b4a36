package replicated

import (
	"fmt"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Start-up replay from the raft log's headers.
//
// A restarted group must apply its committed entries again (the duplicate
// window, consumer offsets, a purge the process died before executing).
// Through raft that would rebuild every batch entry from its segment, so a
// restart would read every retained message once. The apply of a batch
// needs only its header, so before the group is added the plane applies
// the committed entries itself, straight from the raft log files
// (segLog's inner log), and hands raft the index it reached as
// GroupOptions.Applied. The configuration entries on the way (the
// bootstrap membership, nodes added or removed) are followed with
// replication.ConfReplay, and raft starts from the membership reached
// (GroupOptions.Conf), so it applies nothing again.
//
// A fresh partition group starts with its bootstrap membership entries
// (indices 1..voters); once a new group has applied them, the plane
// compacts its log there, with the snapshot of an empty partition
// (nothing else precedes them), so a node catching up from index 1 gets
// that snapshot and then every entry.

// replayHeaders applies the committed entries of rep's log from the
// headers and returns the last index applied and the membership as of
// that index. The duplicate window starts
// as the log's snapshot carries it (the window at the snapshot's index;
// snapshot_codec.go): the entries the snapshot replaced have no
// header left to replay.
func (s *Set) replayHeaders(rep *Replica, inner replication.LogStorage) (uint64, *replication.ConfReplay, error) {
	hs, cs, err := inner.InitialState()
	if err != nil {
		return 0, nil, err
	}
	conf, err := replication.NewConfReplay(cs)
	if err != nil {
		return 0, nil, err
	}
	snap, err := inner.Snapshot()
	if err != nil {
		return 0, nil, err
	}
	if snap.GetMetadata().GetIndex() > 0 && len(snap.GetData()) > 0 {
		ps, err := decodeSnapshot(snap.GetData())
		if err != nil {
			return 0, nil, fmt.Errorf("raft log snapshot at %d: %w", snap.GetMetadata().GetIndex(), err)
		}
		if ps.window != nil { // version 2: no window
			rep.reqs.window.Restore(ps.window)
		}
	}
	first, err := inner.FirstIndex()
	if err != nil {
		return 0, nil, err
	}
	last, err := inner.LastIndex()
	if err != nil {
		return 0, nil, err
	}
	applied := first - 1
	err = forEntries(inner, first, min(hs.GetCommit(), last), func(e *raftpb.Entry) (bool, error) {
		if e.GetType() != raftpb.EntryNormal {
			if err := conf.Apply(e); err != nil {
				return false, err
			}
		} else if len(e.GetData()) > 0 {
			rep.Apply(replication.Entry{Index: e.GetIndex(), Term: e.GetTerm(), Data: e.GetData()})
		}
		applied = e.GetIndex()
		return true, nil
	})
	return applied, conf, err
}

// bootstrapEntries returns how many membership entries a log that was
// never compacted starts with (0 for a compacted one, or one that starts
// otherwise): the bootstrap entries whose compaction a node stopped before
// it ran, so that start-up queues it again.
func bootstrapEntries(st replication.LogStorage, last uint64) uint64 {
	first, err := st.FirstIndex()
	if err != nil || first != 1 || last == 0 {
		return 0
	}
	var n uint64
	_ = forEntries(st, 1, last, func(e *raftpb.Entry) (bool, error) {
		if e.GetType() == raftpb.EntryNormal {
			return false, nil
		}
		n = e.GetIndex()
		return true, nil
	})
	return n
}

// compactBootstrap queues the compaction of a fresh group's log at its
// last bootstrap entry (see above), which applies with the group's first
// election. A node stopped before it ran queues it again at its next
// start (bootstrapEntries).
func (s *Set) compactBootstrap(rep *Replica, n uint64) {
	s.queueCompaction(rep, n, partSnapshot{}, func(err error) {
		s.log.Debug("bootstrap entries of a partition group not compacted; a replica catching up from index 1 gets them as entries",
			"dir", rep.part.Dir, "err", err)
	})
}
