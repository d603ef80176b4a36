package rebalance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Executor defaults.
const (
	// DefaultInterval is how often an Executor or Planner looks at the
	// placements when nothing wakes it.
	DefaultInterval = 500 * time.Millisecond
	// DefaultMaxConcurrent bounds the membership changes one node runs at
	// a time.
	DefaultMaxConcurrent = 2
	// DefaultStepTimeout bounds one step: a learner's catch-up (AddMember
	// is called again afterwards, and goes on where it stopped), a
	// configuration change, a leadership transfer, a placement commit.
	DefaultStepTimeout = 2 * time.Minute
	// maxBackoff bounds the pause after a failed step of one group.
	maxBackoff = 30 * time.Second
	// DefaultTransferTimeout bounds a leadership transfer: raft gives one
	// up after an election timeout, and the step is tried again.
	DefaultTransferTimeout = 5 * time.Second
)

// ExecutorConfig configures an Executor.
type ExecutorConfig struct {
	// Self is this node's replica id.
	Self  replication.NodeID
	Host  Host
	Store Store
	// Interval is the period of the scan of the placements
	// (DefaultInterval when zero); Wake and the end of every step start
	// one at once.
	Interval time.Duration
	// MaxConcurrent bounds the steps running at a time on this node
	// (DefaultMaxConcurrent when zero).
	MaxConcurrent int
	// StepTimeout bounds one step (DefaultStepTimeout when zero).
	StepTimeout time.Duration
	// TransferTimeout bounds the wait for a leadership transfer
	// (DefaultTransferTimeout when zero): about two election timeouts,
	// after which raft has given it up.
	TransferTimeout time.Duration
	// Logger receives the moves' progress (slog.Default when nil).
	Logger *slog.Logger
}

// Executor carries out the moves of the partition groups this node
// leads: it keeps each group's raft membership in line with the
// partition's placement (package comment). Run drives it; it is safe for
// concurrent use.
type Executor struct {
	cfg  ExecutorConfig
	log  *slog.Logger
	wake chan struct{}

	mu      sync.Mutex
	running map[replication.GroupID]bool      // guarded by mu
	backoff map[replication.GroupID]retryWait // guarded by mu
	wg      sync.WaitGroup
}

// retryWait is the pause of a group after a failed step.
type retryWait struct {
	until time.Time
	delay time.Duration
}

// NewExecutor returns an Executor; Run starts it.
func NewExecutor(cfg ExecutorConfig) *Executor {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = DefaultStepTimeout
	}
	if cfg.TransferTimeout <= 0 {
		cfg.TransferTimeout = DefaultTransferTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Executor{cfg: cfg, log: log, wake: make(chan struct{}, 1),
		running: map[replication.GroupID]bool{}, backoff: map[replication.GroupID]retryWait{}}
}

// Wake makes Run scan the placements now (a placement entry applied).
// It never blocks.
func (e *Executor) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Running is the number of steps in progress on this node.
func (e *Executor) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running)
}

// Run scans the placements every Interval, and when woken, and starts a
// step for each group this node leads whose membership differs from its
// placement, at most MaxConcurrent at a time. It returns when ctx ends,
// after the steps in progress returned.
func (e *Executor) Run(ctx context.Context) {
	defer e.wg.Wait()
	every(ctx, e.cfg.Interval, e.wake, e.scan)
}

// every runs fn at once, then each interval and whenever wake fires,
// until ctx ends.
func every(ctx context.Context, interval time.Duration, wake <-chan struct{}, fn func(context.Context)) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		fn(ctx)
		t.Reset(interval)
	}
}

// scan starts the steps that can run now.
func (e *Executor) scan(ctx context.Context) {
	h := e.cfg.Host
	mv, ok := h.Status(replication.MetadataGroup)
	if !ok || !settled(mv) {
		return
	}
	members := memberSet(mv)
	var peers map[replication.NodeID]replication.Peer
	now := time.Now()
	for _, pp := range e.cfg.Store.Placements() {
		if len(pp.Replicas) == 0 {
			continue // held by every voter: add-node and remove-node handle it
		}
		g := replicated.GroupID(pp.Ref, pp.Partition)
		v, ok := h.Status(g)
		if !ok || v.Role != replication.RoleLeader {
			continue
		}
		if !needsLook(pp, v, members) {
			continue
		}
		e.mu.Lock()
		busy := e.running[g] || now.Before(e.backoff[g].until)
		full := len(e.running) >= e.cfg.MaxConcurrent
		e.mu.Unlock()
		if full {
			return
		}
		if busy {
			continue
		}
		if peers == nil {
			pctx, cancel := context.WithTimeout(ctx, e.cfg.Interval)
			p, err := h.Peers(pctx)
			cancel()
			if err != nil {
				return
			}
			peers = p
		}
		a := decide(pp, v, members, aliveFunc(e.cfg.Self, peers), e.cfg.Self)
		switch a.kind {
		case actNone:
			continue
		case actWait:
			e.log.Debug("replica move waits", "group", uint64(g), "partition", pp.Partition, "why", a.why)
			continue
		}
		e.start(ctx, g, pp)
	}
}

// needsLook is the scan's cheap filter: the placement has a move in
// progress, or the group's members differ from the replica list.
func needsLook(pp metadata.PartitionPlacement, v replication.View, members map[replication.NodeID]bool) bool {
	if len(pp.Target) > 0 || v.Joint {
		return true
	}
	for _, n := range v.Learners {
		if !members[n] || !slices.Contains(pp.Replicas, uint8(n)) {
			return true
		}
	}
	for _, n := range v.Voters {
		if !members[n] || !slices.Contains(pp.Replicas, uint8(n)) {
			return true
		}
	}
	for _, r := range pp.Replicas {
		if n := replication.NodeID(r); members[n] && !slices.Contains(v.Voters, n) {
			return true
		}
	}
	return false
}

// start runs one step for group g on its own goroutine.
func (e *Executor) start(ctx context.Context, g replication.GroupID, pp metadata.PartitionPlacement) {
	e.mu.Lock()
	e.running[g] = true
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		err := e.step(ctx, g, pp)
		e.mu.Lock()
		delete(e.running, g)
		if err == nil {
			delete(e.backoff, g)
		} else {
			d := min(max(2*e.backoff[g].delay, time.Second), maxBackoff)
			e.backoff[g] = retryWait{until: time.Now().Add(d), delay: d}
		}
		e.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			e.log.Warn("replica move step failed; retrying", "stream", pp.Ref.StreamID, "topic", pp.Ref.TopicID,
				"partition", pp.Partition, "group", uint64(g), "err", err)
		}
		e.Wake()
	}()
}

// step decides again on fresh state and carries out one action.
func (e *Executor) step(ctx context.Context, g replication.GroupID, pp metadata.PartitionPlacement) error {
	h := e.cfg.Host
	sctx, cancel := context.WithTimeout(ctx, e.cfg.StepTimeout)
	defer cancel()
	pp, ok := e.placement(pp)
	if !ok {
		return nil
	}
	v, ok := h.Status(g)
	mv, mok := h.Status(replication.MetadataGroup)
	if !ok || !mok || !settled(mv) {
		return nil
	}
	peers, err := h.Peers(sctx)
	if err != nil {
		return err
	}
	alive := aliveFunc(e.cfg.Self, peers)
	a := decide(pp, v, memberSet(mv), alive, e.cfg.Self)
	log := e.log.With("stream", pp.Ref.StreamID, "topic", pp.Ref.TopicID, "partition", pp.Partition)
	switch a.kind {
	case actAdd:
		log.Info("replica move: adding a replica as a learner; it votes once it caught up", "replica", a.node, "replicas", ids(pp.Replicas), "target", ids(pp.Target))
		start := time.Now()
		if err := h.AddMember(sctx, g, a.node); err != nil {
			return err
		}
		log.Info("replica move: replica caught up and votes", "replica", a.node, "took", time.Since(start).Round(time.Millisecond))
	case actRemove:
		if _, err := h.ChangeMembership(sctx, g, []replication.MemberChange{{Type: replication.Remove, Node: a.node}}); err != nil {
			return fmt.Errorf("remove replica %d: %w", a.node, err)
		}
		log.Info("replica move: replica removed from the group", "replica", a.node)
	case actTransfer:
		return e.handOver(sctx, g, pp, v, alive, log)
	case actCommit:
		if err := e.cfg.Store.CommitPlacement(sctx, pp.Ref, pp.Partition, pp.Target, nil); err != nil {
			if errors.Is(err, metadata.ErrPlacementStale) {
				return nil
			}
			return err
		}
		log.Info("replica move done", "replicas", ids(pp.Target), "was", ids(pp.Replicas))
	}
	return nil
}

// placement re-reads pp's placement (false: the partition is gone).
func (e *Executor) placement(pp metadata.PartitionPlacement) (metadata.PartitionPlacement, bool) {
	for _, p := range e.cfg.Store.Placements() {
		if p.Ref.Incarnation == pp.Ref.Incarnation && p.Partition == pp.Partition {
			return p, true
		}
	}
	return pp, false
}

// handOver transfers the leadership of g, which this node must leave, to
// the live voter of the wanted list that holds the most of the log.
func (e *Executor) handOver(ctx context.Context, g replication.GroupID, pp metadata.PartitionPlacement, v replication.View, alive func(replication.NodeID) bool, log *slog.Logger) error {
	want := pp.Replicas
	if len(pp.Target) > 0 {
		want = pp.Target
	}
	match, _, err := e.cfg.Host.Progress(ctx, g)
	if err != nil {
		return err
	}
	// The first of the wanted list (the preferred leader) among those
	// holding the most of the log.
	to, best := replication.NodeID(0), uint64(0)
	found := false
	for _, r := range want {
		n := replication.NodeID(r)
		if n == e.cfg.Self || !alive(n) || !slices.Contains(v.Voters, n) {
			continue
		}
		if !found || match[n] > best {
			to, best, found = n, match[n], true
		}
	}
	if !found {
		return errors.New("no live voter of the replica list to hand the leadership to")
	}
	log.Info("replica move: this node leaves the group; handing its leadership over", "to", to)
	tctx, cancel := context.WithTimeout(ctx, e.cfg.TransferTimeout)
	defer cancel()
	if err := e.cfg.Host.TransferLeadership(tctx, g, to); err != nil {
		return fmt.Errorf("hand the leadership to %d: %w", to, err)
	}
	return nil
}

// settled reports whether this node's view of the metadata group can be
// trusted for who is in the cluster: a leader is known and everything
// known committed has applied (a restarting node replaying its log sees
// the membership of an older index meanwhile, and must not take a
// member it does not know yet out of a partition group).
func settled(v replication.View) bool { return v.HasLeader && v.Applied >= v.Commit }

// memberSet is the set of members of the metadata group's view.
func memberSet(v replication.View) map[replication.NodeID]bool {
	m := make(map[replication.NodeID]bool, len(v.Voters)+len(v.Learners))
	for _, n := range v.Voters {
		m[n] = true
	}
	for _, n := range v.Learners {
		m[n] = true
	}
	return m
}

// aliveFunc reports a node's liveness from peers; self is alive.
func aliveFunc(self replication.NodeID, peers map[replication.NodeID]replication.Peer) func(replication.NodeID) bool {
	return func(n replication.NodeID) bool { return n == self || peers[n].Alive }
}
