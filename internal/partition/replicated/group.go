package replicated

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// raftDirName is the directory of a partition group's raft log inside the
// partition directory (used by Options.LogStorage).
const raftDirName = "raft"

// groupOpTimeout bounds one AddGroup or RemoveGroup call.
const groupOpTimeout = 30 * time.Second

// Add registers part as the replica of its raft group and queues the
// AddGroup; it returns the partition's Replica (the one already
// registered, when the group has one). Stopped partitions (corrupt data,
// wrong key) get no replica: they take no writes, so this node does not
// vote for them either; the other replicas keep their quorum with two of
// three. Add may run on the host's loop (a metadata effect): it does not
// block on the host.
func (s *Set) Add(t catalog.TopicRef, part Partition) *Replica {
	// Voters are read now, while the metadata entry that creates the
	// partition applies, not later on the worker: every replica must
	// bootstrap the group with the same members.
	rep := &Replica{set: s, group: GroupID(t, part.ID), ref: t, part: &part, voters: bootstrapVoters(s.r.Voters(), part), reqs: newRequests(part.Window)}
	if part.Replicas != nil {
		rep.setPreference(part.Replicas)
	}
	s.mu.Lock()
	if cur, ok := s.groups[rep.group]; ok {
		s.mu.Unlock()
		return cur
	}
	s.groups[rep.group] = rep
	s.mu.Unlock()
	s.ops.push(func(ctx context.Context) { s.startGroup(ctx, rep) })
	return rep
}

// SetReplicas records the current replica list of partition id of t
// (a move changed it) for Preference; unknown partitions are ignored.
func (s *Set) SetReplicas(t catalog.TopicRef, id uint32, replicas []uint8) {
	if rep := s.replicaOf(GroupID(t, id)); rep != nil {
		rep.setPreference(replicas)
	}
}

// setPreference records replicas as the group's leader preference,
// converted once here rather than on every balancing round.
func (r *Replica) setPreference(replicas []uint8) {
	l := make([]replication.NodeID, len(replicas))
	for i, id := range replicas {
		l[i] = replication.NodeID(id)
	}
	r.preference.Store(&l)
}

// Preference returns the replica list of group g as node ids, preferred
// leader first (nil: the group is not here or has no list); callers must
// not change it. It is cheap, allocates nothing and never blocks on the
// host: the host's leader balancing calls it on its loop.
func (s *Set) Preference(g replication.GroupID) []replication.NodeID {
	rep := s.replicaOf(g)
	if rep == nil {
		return nil
	}
	if l := rep.preference.Load(); l != nil {
		return *l
	}
	return nil
}

// bootstrapVoters are the members a new group starts with: none when the
// node joins it or the Replicator gives none (start-up, a joining node),
// else the partition's replica list, or every voter when it has none.
func bootstrapVoters(voters []replication.NodeID, part Partition) []replication.NodeID {
	if part.Joining || voters == nil || len(part.Replicas) == 0 {
		if part.Joining {
			return nil
		}
		return voters
	}
	out := make([]replication.NodeID, len(part.Replicas))
	for i, r := range part.Replicas {
		out[i] = replication.NodeID(r)
	}
	return out
}

// startGroup opens the group's log and adds the group to the host. A
// group restarted from a durable log applies its committed entries again
// from the raft log's headers first (replay.go); apply is
// idempotent.
func (s *Set) startGroup(ctx context.Context, rep *Replica) {
	if s.replicaOf(rep.group) != rep {
		return // deleted before it started
	}
	log := s.log.With("group", uint64(rep.group), "stream", rep.ref.StreamID, "topic", rep.ref.TopicID, "partition", rep.part.ID)
	st := replication.NewMemoryLog()
	if s.opts.LogStorage != nil {
		var err error
		if st, err = s.opts.LogStorage(raftDir(rep.part.Dir)); err != nil {
			log.Error("partition raft log did not open; the partition is not replicated on this node", "err", err)
			s.damaged(rep, err)
			return
		}
	}
	if err := checkCommitHeld(st); err != nil {
		log.Error("partition raft log lost entries; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	part := rep.part
	purged, err := readPurgeRecord(part.Dir)
	if err != nil {
		log.Error("partition purge record unreadable; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	rep.purgedAt = purged.index
	rep.purgeID.Store(purged.id)
	// A crash between raft storing a snapshot and its restore recording
	// the purge identity: the log's own snapshot says it.
	if err := s.adoptLogSnapshot(rep, st); err != nil {
		log.Error("partition raft log snapshot unreadable; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	if err := s.completeInterruptedPurge(rep, st); err != nil {
		log.Error("partition purge interrupted by a crash not completed; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	seg, err := openSegLog(st, part.Log, rep.purgedAt)
	if err != nil {
		log.Error("partition raft log and segments disagree; the partition is not replicated on this node (remove the node, start it with an empty data directory and --join, and add it again to rebuild it)", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	seg.local = part.Local
	stamp, err := newStampLog(seg, part.ID, part.Log.Tail, rep.reqs)
	if err != nil {
		log.Error("partition raft log unreadable; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	rep.seg.Store(seg)
	rep.stamp.Store(stamp)
	last, err := st.LastIndex()
	if err != nil {
		log.Error("partition raft log unreadable; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	applied, conf, err := s.replayHeaders(rep, st)
	if err != nil {
		log.Error("partition raft log unreadable; the partition is not replicated on this node", "err", err)
		closeStorage(st)
		s.damaged(rep, err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, groupOpTimeout)
	defer cancel()
	err = s.r.AddGroup(ctx, rep.group, replication.GroupOptions{
		Machine: rep,
		Voters:  rep.voters,
		Storage: stamp,
		Prepare: rep.prepare,
		Applied: applied,
		Conf:    conf,
		Rebuilt: part.Rebuilt,
	})
	if err != nil && !errors.Is(err, replication.ErrGroupExists) {
		log.Error("add partition raft group", "err", err)
		closeStorage(st)
		if errors.Is(err, replication.ErrLogLost) {
			s.damaged(rep, err)
		}
		return
	}
	if last == 0 && len(rep.voters) > 0 {
		s.compactBootstrap(rep, uint64(len(rep.voters)))
	} else if n := bootstrapEntries(st, last); n > 0 {
		s.compactBootstrap(rep, n) // stopped before it ran: again
	}
	// What the replay left wanted (a purge no node proposed before a
	// restart, the offsets of a deleted group) is proposed by the keeper
	// of the group's leader.
	s.wantDeletedGroups(rep)
	s.notify()
	if s.pending(rep) {
		s.kickKeeper()
	}
}

// Drop unregisters the groups of the given partitions at once and queues
// their RemoveGroup (after which the partition's files may go).
func (s *Set) Drop(t catalog.TopicRef, ids []uint32) {
	cl := s
	for _, id := range ids {
		g := GroupID(t, id)
		cl.mu.Lock()
		rep := cl.groups[g]
		delete(cl.groups, g)
		cl.mu.Unlock()
		if rep == nil {
			continue
		}
		cl.ops.push(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, groupOpTimeout)
			defer cancel()
			if err := cl.r.RemoveGroup(ctx, g); err != nil && !errors.Is(err, replication.ErrUnknownGroup) {
				s.log.Warn("remove partition raft group", "group", uint64(g), "err", err)
			}
			if seg := rep.seg.Load(); seg != nil {
				_ = seg.Close()
			}
		})
	}
}

// raftDir is the raft log directory of a partition directory.
func raftDir(partitionDir string) string { return filepath.Join(partitionDir, raftDirName) }

// Close cancels the lifecycle worker's operation and the proposals still
// waiting, drops what is queued, and waits for the worker, the keeper and
// the background proposals to end. The host's groups are left to the
// host's own Close.
func (s *Set) Close() {
	s.ops.close()
	s.stopKeeper()
	s.bg.Wait()
}

// Hold queues a wait for release on the lifecycle worker: what is queued
// after it (group starts and removals, compactions) runs once release is
// closed or the set closes. Tests use it to keep a compaction from
// running.
func (s *Set) Hold(release <-chan struct{}) {
	s.ops.push(func(ctx context.Context) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
}
