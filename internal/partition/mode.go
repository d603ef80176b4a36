package partition

import (
	"context"
	"slices"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
)

// localMode is the single-node mode: writes apply to storage directly.
type localMode struct{ p *Plane }

func (m localMode) held() bool { return false }

func (localMode) holds([]uint8) bool { return true }

func (m localMode) open(_ catalog.TopicRef, part *partition, _ []uint8, _ bool) commit.Committer {
	return &localCommitter{p: m.p, part: part}
}

func (localMode) drop(catalog.TopicRef, []uint32) {}

func (localMode) place(catalog.TopicRef, uint32, []uint8) {}

// await returns at once: a local purge or offset deletion applies before
// PurgeTopic or DeleteGroupOffsets returns.
func (localMode) await(context.Context, catalog.TopicRef, []uint32) error { return nil }

func (localMode) close() {}

// replicatedMode is cluster mode: every partition is a raft group
// (internal/partition/replicated).
type replicatedMode struct {
	p   *Plane
	set *replicated.Set
}

func (m replicatedMode) held() bool { return true }

func (m replicatedMode) holds(replicas []uint8) bool {
	return len(replicas) == 0 || slices.Contains(replicas, uint8(m.p.opts.Replicator.Self()))
}

func (m replicatedMode) open(t catalog.TopicRef, part *partition, replicas []uint8, joining bool) commit.Committer {
	return m.set.Add(t, replicated.Partition{ID: part.id, Dir: part.dir, Log: part.log, Window: part.window,
		Local: partLocal{p: m.p, part: part}, Replicas: replicas, Joining: joining,
		Rebuilt: joining && m.p.rebuilding[replicated.GroupID(t, part.id)] != 0})
}

func (m replicatedMode) drop(t catalog.TopicRef, ids []uint32) { m.set.Drop(t, ids) }

func (m replicatedMode) place(t catalog.TopicRef, id uint32, replicas []uint8) {
	m.set.SetReplicas(t, id, replicas)
}

func (m replicatedMode) await(ctx context.Context, t catalog.TopicRef, ids []uint32) error {
	return m.set.Await(ctx, t, ids)
}

func (m replicatedMode) close() { m.set.Close() }

// The plane answers the metadata plane's wait for its effects.
var _ catalog.Awaiter = (*Plane)(nil)

// AwaitPartitions implements catalog.Awaiter: it returns once no
// partition of t wants a purge or an offset deletion that has not applied
// here (at once in single-node mode).
func (p *Plane) AwaitPartitions(ctx context.Context, t catalog.TopicRef) error {
	parts := p.topicParts(t)
	ids := make([]uint32, 0, len(parts))
	for _, part := range parts {
		ids = append(ids, part.id)
	}
	return p.mode.await(ctx, t, ids)
}

// LeaderPreference returns the replica list of partition group g,
// preferred leader first (nil: not a partition held here, not placed, or
// single-node mode). The replication host's leader balancing calls it on
// its loop: it never blocks.
func (p *Plane) LeaderPreference(g replication.GroupID) []replication.NodeID {
	if m, ok := p.mode.(replicatedMode); ok {
		return m.set.Preference(g)
	}
	return nil
}

// canRebuild reports whether this plane rebuilds damaged replicas.
func (p *Plane) canRebuild() bool {
	m, ok := p.mode.(replicatedMode)
	return ok && m.set.CanRebuild()
}
