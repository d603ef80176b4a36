package partition

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Replicator is the partition plane's view of the replication host in
// cluster mode (*replication.Host provides all but Self and Voters, which
// the broker adds from the roster). The plane calls the blocking methods
// (AddGroup, RemoveGroup, Propose, WaitFor) only from its own goroutines
// or request handlers, never from the host's loop.
type Replicator interface {
	// Self is this node's replica id.
	Self() replication.NodeID
	// Voters are the members a partition group created now is
	// bootstrapped with; nil means the group waits for its leader to
	// send it the log (a node joining a running cluster, start-up).
	// CreatePartitions reads it synchronously.
	Voters() []replication.NodeID
	AddGroup(ctx context.Context, id replication.GroupID, opts replication.GroupOptions) error
	RemoveGroup(ctx context.Context, id replication.GroupID) error
	Propose(ctx context.Context, id replication.GroupID, data []byte) (uint64, error)
	Leader(id replication.GroupID) (replication.NodeID, bool)
	WaitFor(ctx context.Context, id replication.GroupID, cond func(replication.View) bool) (replication.View, error)
	// CompactTo compacts group id's log at index with data as the
	// snapshot there (Host.CompactTo).
	CompactTo(ctx context.Context, id replication.GroupID, index uint64, data []byte) error
}

// groupPartitionBits is the width of the partition id in a GroupID.
const groupPartitionBits = 24

// GroupID is the raft group of one partition: the topic incarnation (the
// metadata log position of its CreateTopic, identical on every node)
// shifted left by 24 bits, or'ed with the partition id. It is never the
// metadata group (0) for a real topic: incarnations start at 1. Partition
// ids must stay below 2^24 and incarnations below 2^40, far beyond what
// the metadata plane creates.
func GroupID(ref catalog.TopicRef, partition uint32) replication.GroupID {
	return replication.GroupID(ref.Incarnation<<groupPartitionBits | uint64(partition&(1<<groupPartitionBits-1)))
}

// cluster is the plane's cluster-mode state (nil in single-node mode).
type cluster struct {
	r Replicator

	mu     sync.Mutex
	groups map[replication.GroupID]*replica // guarded by mu
	// waiters are the handlers of this node waiting for their entry's
	// apply, by nonce.
	waiters *replication.Waiters[applyResult]

	ops opQueue
	// keep proposes wanted purges and offset deletions (cluster_keeper.go).
	keep keeper
	// settled is closed and replaced each time a purge or an offset
	// deletion applies here (cluster_await.go); guarded by settleMu.
	settleMu sync.Mutex
	settled  chan struct{}
	// proposals recycles the buffers entries are encoded into for
	// Propose (raft keeps a copy of its own).
	proposals bufPool
}

// replica is one partition replicated by a raft group.
type replica struct {
	group replication.GroupID
	ref   catalog.TopicRef
	part  *partition
	// voters bootstrap the group when its log is empty: Replicator.Voters
	// as read when the partition was created (nil: wait for the leader).
	voters []replication.NodeID
	// halted is set when apply met a hole (a batch beyond the next
	// offset): the partition takes no more replicated writes.
	halted atomic.Bool
	// purgedAt is the raft index of the last purge applied (purge.go):
	// entries at or below it are not re-applied after a restart. Only
	// the host's loop touches it after the group was added.
	purgedAt uint64
	// purgeID is the identity of the last purge applied here (0: none),
	// kept in the purge record with purgedAt. Written on the host's loop;
	// read by the keeper and the waiters of cluster_await.go.
	purgeID atomic.Uint64
	// wantPurge is the identity of the last purge the metadata asked for
	// (PurgeTopic, CreatePartitions): wanted while above purgeID.
	wantPurge atomic.Uint64
	// wantDelete holds the consumer groups whose offsets the metadata
	// asked to delete, not yet deleted here. Guarded by cluster.mu.
	wantDelete map[uint32]struct{}
	// deletes is len(wantDelete), for the lock-free check of a send.
	deletes atomic.Int32
	// stamp is the wrapped log (cluster_stamp.go), set like seg.
	stamp *stampLog
	// seg is the group's log (cluster_seglog.go), under stamp; set by
	// the lifecycle worker before AddGroup and closed by it after
	// RemoveGroup.
	seg *segLog
	// missed records the windowed entries whose apply did not enter the
	// duplicate window (cluster_snapwindow.go).
	missed missedWindow
}

// applyResult is what apply tells the waiting handler.
type applyResult struct {
	base uint64
	// code is the status to answer (0: success).
	code uint32
	// dup: the request was found committed right before proposing; it
	// gets the duplicate window's answer.
	dup bool
	// index and term are the entry's raft position (the committed reply
	// header's op and view).
	index, term uint64
}

// newCluster returns the cluster state.
func newCluster(r Replicator) *cluster {
	cl := &cluster{r: r, groups: map[replication.GroupID]*replica{}, waiters: replication.NewWaiters[applyResult](), settled: make(chan struct{})}
	cl.keep.wake = make(chan struct{}, 1)
	return cl
}

// replicaOf returns the replica of group g, or nil.
func (cl *cluster) replicaOf(g replication.GroupID) *replica {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.groups[g]
}

// wait registers a waiter and returns its nonce and channel.
func (cl *cluster) wait() (uint64, chan applyResult) { return cl.waiters.Add() }

// forget drops a waiter (the handler stopped waiting).
func (cl *cluster) forget(nonce uint64) { cl.waiters.Remove(nonce) }

// deliver hands r to the local handler that proposed e, if it waits.
func (cl *cluster) deliver(e *entry, r applyResult) {
	if e.origin != uint32(cl.r.Self()) || e.nonce == 0 {
		return
	}
	cl.waiters.Deliver(e.nonce, r)
}

// leads reports whether this node is known to lead group g now.
func (cl *cluster) leads(g replication.GroupID) bool {
	l, ok := cl.r.Leader(g)
	return ok && l == cl.r.Self()
}

// bufPool recycles byte buffers; buffers over maxPooledProposal are
// left to the garbage collector.
type bufPool struct{ p sync.Pool }

// maxPooledProposal bounds a recycled proposal buffer.
const maxPooledProposal = 16 << 20

// get returns a buffer of capacity at least n.
func (b *bufPool) get(n int) *[]byte {
	if v, ok := b.p.Get().(*[]byte); ok && cap(*v) >= n {
		return v
	}
	s := make([]byte, 0, n)
	return &s
}

// put returns buf to the pool.
func (b *bufPool) put(buf *[]byte) {
	if cap(*buf) <= maxPooledProposal {
		*buf = (*buf)[:0]
		b.p.Put(buf)
	}
}
