package replicated

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Replicator is what a Set needs of the replication host
// (*replication.Host provides all but Self and Voters, which the broker
// adds from the roster). The Set calls the blocking methods (AddGroup,
// RemoveGroup, Propose, WaitFor, CompactTo) only from its own goroutines
// or request handlers, never from the host's loop.
type Replicator interface {
	// Self is this node's replica id.
	Self() replication.NodeID
	// Voters are the members a partition group created now is
	// bootstrapped with; nil means the group waits for its leader to
	// send it the log (a node joining a running cluster, start-up).
	// Add reads it synchronously.
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

// proposeTimeout bounds one proposal of a write, a purge or an offset
// deletion, and a write's wait for the purges and deletions before it.
const proposeTimeout = 5 * time.Second

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

// Options configure a Set.
type Options struct {
	// Logger receives the replicas' events (slog.Default if nil).
	Logger *slog.Logger
	// Clock stamps batches (time.Now if nil).
	Clock func() time.Time
	// WindowClients is the duplicate window's client bound (stateAt
	// rebuilds windows of that size).
	WindowClients int
	// LogStorage opens the raft log of a partition group in dir
	// (<partition dir>/raft); nil keeps the logs in memory
	// (replication.NewMemoryLog).
	LogStorage func(dir string) (replication.LogStorage, error)
	// Catalog returns the metadata plane's topics (nil until it is set);
	// a group's start asks it which consumer groups were deleted
	// (catalog.GroupHistory).
	Catalog func() catalog.Topics
	// OnDamaged is told when a partition's replica did not start because
	// its files are damaged (IsDamage): the plane rebuilds it from its
	// peers (Leave, then a wipe). It runs on the lifecycle worker and must
	// not block on it.
	OnDamaged func(t catalog.TopicRef, id uint32, err error)
}

// Set is the replicated partitions of one plane: one Replica per
// partition group on the host, the waiters of this node's proposals, the
// lifecycle worker and the keeper. It is safe for concurrent use.
type Set struct {
	r    Replicator
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	groups map[replication.GroupID]*Replica // guarded by mu
	// waiters are the handlers of this node waiting for their entry's
	// apply, by nonce.
	waiters *replication.Waiters[applyResult]

	ops opQueue
	// keep proposes wanted purges and offset deletions (keeper.go).
	keep keeper
	// bg joins the proposals of Async writes (commit.go).
	bg sync.WaitGroup
	// settled is closed and replaced each time a purge or an offset
	// deletion applies here (await.go); guarded by settleMu.
	settleMu sync.Mutex
	settled  chan struct{}
	// proposals recycles the buffers entries are encoded into for
	// Propose (raft keeps a copy of its own).
	proposals bufPool
}

// Replica is one partition replicated by a raft group: the partition's
// commit.Committer and the group's replication.GroupMachine.
type Replica struct {
	set   *Set
	group replication.GroupID
	ref   catalog.TopicRef
	part  *Partition
	// voters bootstrap the group when its log is empty: Replicator.Voters
	// as read when the partition was created (nil: wait for the leader).
	voters []replication.NodeID
	// preference is the partition's current replica list as node ids,
	// preferred leader first (nil: every voter); a move replaces it
	// (SetReplicas).
	preference atomic.Pointer[[]replication.NodeID]
	// halted is set when apply met a hole (a batch beyond the next
	// offset): the partition takes no more replicated writes.
	halted atomic.Bool
	// purgedAt is the raft index of the last purge applied (purge.go):
	// entries at or below it are not re-applied after a restart. Only
	// the host's loop touches it after the group was added.
	purgedAt uint64
	// purgeID is the identity of the last purge applied here (0: none),
	// kept in the purge record with purgedAt. Written on the host's loop;
	// read by the keeper and the waiters of await.go.
	purgeID atomic.Uint64
	// wantPurge is the identity of the last purge the metadata asked for
	// (Purge, WantPurge): wanted while above purgeID.
	wantPurge atomic.Uint64
	// wantDelete holds the consumer groups whose offsets the metadata
	// asked to delete, not yet deleted here. Guarded by Set.mu.
	wantDelete map[uint32]struct{}
	// deletes is len(wantDelete), for the lock-free check of a send.
	deletes atomic.Int32
	// stamp is the wrapped log (stamp.go), set like seg.
	stamp atomic.Pointer[stampLog]
	// seg is the group's log (seglog.go), under stamp; set by the
	// lifecycle worker before AddGroup and closed by it after
	// RemoveGroup.
	seg atomic.Pointer[segLog]
	// reqs is the one owner of the partition's duplicate detection
	// (requests.go).
	reqs *requests
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

// New returns an empty Set replicating through r.
func New(r Replicator, opts Options) *Set {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Set{r: r, opts: opts, log: opts.Logger, groups: map[replication.GroupID]*Replica{},
		waiters: replication.NewWaiters[applyResult](), settled: make(chan struct{})}
	s.keep.wake = make(chan struct{}, 1)
	s.ops.init()
	return s
}

// catalog returns the metadata plane's topics, or nil.
func (s *Set) catalog() catalog.Topics {
	if s.opts.Catalog == nil {
		return nil
	}
	return s.opts.Catalog()
}

// replicaOf returns the replica of group g, or nil.
func (s *Set) replicaOf(g replication.GroupID) *Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[g]
}

// wait registers a waiter and returns its nonce and channel.
func (s *Set) wait() (uint64, chan applyResult) { return s.waiters.Add() }

// forget drops a waiter (the handler stopped waiting).
func (s *Set) forget(nonce uint64) { s.waiters.Remove(nonce) }

// deliver hands r to the local handler that proposed e, if it waits.
func (s *Set) deliver(e *entry, r applyResult) {
	if e.origin != uint32(s.r.Self()) || e.nonce == 0 {
		return
	}
	s.waiters.Deliver(e.nonce, r)
}

// leads reports whether this node is known to lead group g now.
func (s *Set) leads(g replication.GroupID) bool {
	l, ok := s.r.Leader(g)
	return ok && l == s.r.Self()
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
	buf := make([]byte, 0, n)
	return &buf
}

// put returns buf to the pool.
func (b *bufPool) put(buf *[]byte) {
	if cap(*buf) <= maxPooledProposal {
		*buf = (*buf)[:0]
		b.p.Put(buf)
	}
}

// keeper is the state of the plane's keeper goroutine.
type keeper struct {
	mu      sync.Mutex
	running bool // guarded by mu
	closed  bool // guarded by mu
	// wake is a kick pending for the running goroutine (capacity 1).
	wake chan struct{}
	wg   sync.WaitGroup
}
