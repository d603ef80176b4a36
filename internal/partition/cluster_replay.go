package partition

import (
	"context"
	"errors"
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
// GroupOptions.Applied. It stops before the first configuration change
// after the log's snapshot: raft rebuilds the membership by applying
// those itself.
//
// A fresh partition group starts with its bootstrap membership entries
// (indices 1..voters), which would stop that replay at once; so once a
// new group has applied them, the plane compacts its log there, with the
// snapshot of an empty partition (nothing else precedes them). A node
// catching up from index 1 gets that snapshot and then every entry.

// replayChunk is how many entries one read of the replay takes.
const replayChunk = 1024

// replayHeaders applies the committed entries of rep's log from the
// headers and returns the last index applied.
func (p *Plane) replayHeaders(rep *replica, inner replication.LogStorage) (uint64, error) {
	hs, _, err := inner.InitialState()
	if err != nil {
		return 0, err
	}
	first, err := inner.FirstIndex()
	if err != nil {
		return 0, err
	}
	last, err := inner.LastIndex()
	if err != nil {
		return 0, err
	}
	applied := first - 1
	hi := min(hs.GetCommit(), last)
	for lo := first; lo <= hi; lo += replayChunk {
		ents, err := inner.Entries(lo, min(lo+replayChunk, hi+1), ^uint64(0))
		if err != nil {
			return applied, fmt.Errorf("raft log entries from %d: %w", lo, err)
		}
		for _, e := range ents {
			if e.GetType() != raftpb.EntryNormal {
				return applied, nil // membership: raft applies from here
			}
			if len(e.GetData()) > 0 {
				p.ApplyReplicated(rep.group, replication.Entry{Index: e.GetIndex(), Term: e.GetTerm(), Data: e.GetData()})
			}
			applied = e.GetIndex()
		}
	}
	return applied, nil
}

// compactBootstrap queues the compaction of a fresh group's log at its
// last bootstrap entry (see above).
func (p *Plane) compactBootstrap(rep *replica, n uint64) {
	data := partSnapshot{}.encode()
	p.cl.ops.push(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, compactTimeout)
		defer cancel()
		_, err := p.cl.r.WaitFor(ctx, rep.group, func(v replication.View) bool { return v.Applied >= n })
		if err == nil {
			err = p.cl.r.CompactTo(ctx, rep.group, n, data)
		}
		if err != nil && !errors.Is(err, replication.ErrCompactRange) {
			p.log.Debug("bootstrap entries of a partition group not compacted; a restart replays from them through raft",
				"dir", rep.part.dir, "err", err)
		}
	})
}
