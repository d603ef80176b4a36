package replicated

// State is what a replica reports of itself (diagnostics and tests).
type State struct {
	// PurgeApplied is the identity of the last purge applied here (0:
	// none).
	PurgeApplied uint64
	// Pending reports a purge or an offset deletion the metadata wants
	// that has not applied here yet.
	Pending bool
	// Halted reports a partition that takes no more replicated writes:
	// apply met a batch that does not continue its log.
	Halted bool
	// ReadsBack counts the batches read back from the segment files to
	// rebuild raft entries (a follower catching up, a replay through raft).
	ReadsBack uint64
	// KeptWhole counts the batches kept whole in the raft log because a
	// purge before them had not applied yet (seglog.go).
	KeptWhole uint64
	// FirstIndex and LastIndex bound the group's raft log; both are 0
	// before the group has started here.
	FirstIndex, LastIndex uint64
	// SnapshotPurge is the identity of the last purge the log's snapshot
	// covers (0: none, or no snapshot).
	SnapshotPurge uint64
}

// State returns the replica's state now.
func (rep *Replica) State() State {
	st := State{PurgeApplied: rep.purgeID.Load(), Pending: rep.set.pending(rep), Halted: rep.halted.Load()}
	seg := rep.seg.Load()
	if seg != nil {
		st.ReadsBack = seg.reads.Load()
		st.KeptWhole = seg.keptWhole.Load()
		st.FirstIndex, _ = seg.FirstIndex()
		st.LastIndex, _ = seg.LastIndex()
		if snap, err := seg.Snapshot(); err == nil && len(snap.GetData()) > 0 {
			if ps, err := decodeSnapshot(snap.GetData()); err == nil {
				st.SnapshotPurge = ps.purge
			}
		}
	}
	return st
}
