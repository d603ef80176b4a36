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
	"github.com/iggo-dev/iggo/internal/placement"
	"github.com/iggo-dev/iggo/internal/replication"
)

// DefaultMaxMoves bounds the moves in progress in the whole cluster.
const DefaultMaxMoves = 4

// PlanFunc plans replica moves (placement.Plan): nodes are the nodes
// allowed to hold replicas (the others' replicas are moved away);
// current holds one replica list per partition (empty: not placed).
type PlanFunc func(nodes []placement.Node, current [][]uint8, maxMoves int) ([]placement.Move, error)

// PlannerConfig configures a Planner.
type PlannerConfig struct {
	Store   Store
	Cluster Cluster
	// MaxMoves bounds the partitions with a move in progress, cluster
	// wide (DefaultMaxMoves when zero).
	MaxMoves int
	// ReplaceDeadAfter is how long a node may be unreachable before its
	// replicas are re-created on other nodes; 0 never.
	ReplaceDeadAfter time.Duration
	// Interval is the period of the Planner's checks (DefaultInterval
	// when zero).
	Interval time.Duration
	// Plan plans the moves (placement.Plan when nil).
	Plan PlanFunc
	// Logger receives the plans and the drains' progress (slog.Default
	// when nil).
	Logger *slog.Logger
}

// Errors of a node's removal (CheckRemoval, Drain).
var (
	// ErrLastReplica: the node holds the only replica of a partition.
	ErrLastReplica = errors.New("rebalance: the node holds the only replica of a partition")
	// ErrNoRoom: the other nodes cannot hold the replication factor of
	// the partitions the node holds.
	ErrNoRoom = errors.New("rebalance: the other nodes cannot hold the replication factor")
	// ErrNoQuorum: taking the node out of a partition's group without a
	// replacement would leave fewer than a quorum of its replicas.
	ErrNoQuorum = errors.New("rebalance: removing the node would leave a partition without a quorum")
	// ErrDrainIncomplete: a drain's time ran out with replicas left on
	// the node (the moves started go on).
	ErrDrainIncomplete = errors.New("rebalance: drain incomplete")
)

// Planner decides replica moves on the metadata leader and commits their
// first step (the Target). It plans at most MaxMoves moves in progress
// at a time and, once a rebalance is wanted, plans more as they finish
// until the placement is balanced (package comment). Its state is the
// committed placement: a new metadata leader finds the moves in progress
// there and goes on. Rounds are serialised, so two rebalances asked at
// once merge into one: the second plans within what the first left of
// the MaxMoves budget. Safe for concurrent use.
type Planner struct {
	cfg     PlannerConfig
	log     *slog.Logger
	plan    PlanFunc
	wake    chan struct{}
	stopped chan struct{}

	mu sync.Mutex // serialises rounds
	// wanted: a rebalance runs; guarded by mu.
	wanted bool
	// draining counts the drains of each node in progress; guarded by mu.
	draining map[uint8]int
	// announced are the dead nodes whose replacement was logged; guarded
	// by mu.
	announced map[uint8]bool
}

// NewPlanner returns a Planner; Run starts its background checks.
func NewPlanner(cfg PlannerConfig) *Planner {
	if cfg.MaxMoves <= 0 {
		cfg.MaxMoves = DefaultMaxMoves
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	plan := cfg.Plan
	if plan == nil {
		plan = placement.Plan
	}
	return &Planner{cfg: cfg, log: log, plan: plan, wake: make(chan struct{}, 1), stopped: make(chan struct{}),
		draining: map[uint8]int{}, announced: map[uint8]bool{}}
}

// Wake makes Run check now (a placement entry applied: a move may have
// finished). It never blocks.
func (p *Planner) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Result is what one planning round did.
type Result struct {
	// Started is the number of moves this round committed.
	Started int
	// InProgress is the number of moves in progress after it (Started
	// included).
	InProgress int
	// Aborted is the number of moves given up because a node of their
	// target can no longer take the replica.
	Aborted int
}

// Run checks every Interval, and when woken, on the metadata leader:
// moves in progress (found after a leadership change) and nodes dead for
// longer than ReplaceDeadAfter that still hold replicas start a
// rebalance; while one is wanted, each check plans the next moves. It
// returns when ctx ends.
func (p *Planner) Run(ctx context.Context) {
	defer close(p.stopped)
	every(ctx, p.cfg.Interval, p.wake, p.check)
}

// check is one background check.
func (p *Planner) check(ctx context.Context) {
	if !p.cfg.Cluster.Leader() {
		p.mu.Lock()
		p.wanted = false
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, err := p.view(ctx)
	if err != nil {
		return
	}
	if !p.wanted {
		switch {
		case v.inProgress() > 0:
			p.log.Info("replica moves in progress: rebalance goes on", "moves", v.inProgress())
			p.wanted = true
		case len(v.deadHolders()) > 0, v.orphaned():
			p.wanted = true
		}
	}
	for _, n := range v.deadHolders() {
		if !p.announced[n.ID] {
			p.announced[n.ID] = true
			p.log.Warn("node unreachable for longer than cluster.replace_dead_after: re-creating its replicas on other nodes where they fit",
				"replica_id", n.ID, "silent", n.Silent.Round(time.Second), "replace_dead_after", p.cfg.ReplaceDeadAfter)
		}
	}
	for id := range p.announced {
		if !v.isDead(id) {
			delete(p.announced, id)
		}
	}
	if !p.wanted {
		return
	}
	r, err := p.round(ctx, v)
	if err != nil {
		p.log.Warn("replica moves not planned", "err", err)
		return
	}
	if r.Started == 0 && r.InProgress == 0 && len(p.draining) == 0 {
		p.wanted = false
		p.log.Info("rebalance done: nothing left to move")
	}
}

// Rebalance plans a rebalance on the metadata leader: it commits the
// first moves (up to what MaxMoves leaves) and returns; the Planner plans
// the others as they finish. A rebalance already running merges with
// this one. Elsewhere it fails with replication.ErrNotLeader.
func (p *Planner) Rebalance(ctx context.Context) (Result, error) {
	if !p.cfg.Cluster.Leader() {
		return Result{}, fmt.Errorf("rebalance: %w", replication.ErrNotLeader)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	v, err := p.view(ctx)
	if err != nil {
		return Result{}, err
	}
	p.wanted = true
	r, err := p.round(ctx, v)
	if err != nil {
		return r, err
	}
	p.log.Info("rebalance planned", "started", r.Started, "in_progress", r.InProgress, "aborted", r.Aborted)
	return r, nil
}

// view is the state a round works on.
type view struct {
	pls   []metadata.PartitionPlacement
	nodes []NodeInfo
	// allowed may take replicas; down are allowed but unreachable (they
	// keep their replicas and take no new ones); dead and draining are
	// not allowed (their replicas move away).
	allowed, down, dead, draining [256]bool
	// node is true for every node of the cluster.
	node [256]bool
}

func (v *view) inProgress() int {
	n := 0
	for _, pp := range v.pls {
		if len(pp.Target) > 0 {
			n++
		}
	}
	return n
}

func (v *view) isDead(id uint8) bool { return v.dead[id] }

// deadHolders are the dead nodes that still hold a replica.
func (v *view) deadHolders() []NodeInfo {
	var out []NodeInfo
	for _, n := range v.nodes {
		if v.dead[n.ID] && slices.ContainsFunc(v.pls, func(pp metadata.PartitionPlacement) bool { return holds(pp, n.ID) }) {
			out = append(out, n)
		}
	}
	return out
}

// leadable reports whether a quorum of pp's replicas is on live nodes:
// only then can its group have a leader to carry a move out (a move of
// a partition of 1 or 2 replicas off a dead node would wait forever,
// holding a place in the MaxMoves budget).
func (v *view) leadable(pp metadata.PartitionPlacement) bool {
	live := 0
	for _, r := range pp.Replicas {
		if v.allowed[r] && !v.down[r] {
			live++
		}
	}
	return live >= quorum(len(pp.Replicas))
}

// orphaned reports whether a partition lists a node that is no longer
// in the cluster (removed while unreachable, with replicas no other node
// could take then).
func (v *view) orphaned() bool {
	for _, pp := range v.pls {
		for _, r := range pp.Replicas {
			if !v.node[r] {
				return true
			}
		}
	}
	return false
}

// holds reports whether node is in pp's replica or target list.
func holds(pp metadata.PartitionPlacement, node uint8) bool {
	return slices.Contains(pp.Replicas, node) || slices.Contains(pp.Target, node)
}

// view reads the placements and the nodes (p.mu held).
func (p *Planner) view(ctx context.Context) (*view, error) {
	nodes, err := p.cfg.Cluster.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("rebalance: nodes: %w", err)
	}
	v := &view{pls: p.cfg.Store.Placements(), nodes: nodes}
	for _, n := range nodes {
		v.node[n.ID] = true
		switch {
		case p.draining[n.ID] > 0:
			v.draining[n.ID] = true
		case !n.Alive && p.cfg.ReplaceDeadAfter > 0 && n.Silent >= p.cfg.ReplaceDeadAfter:
			v.dead[n.ID] = true
		default:
			v.allowed[n.ID] = true
			v.down[n.ID] = !n.Alive
		}
	}
	return v, nil
}

// round aborts the moves that cannot finish and plans new ones within
// the budget (p.mu held).
func (p *Planner) round(ctx context.Context, v *view) (Result, error) {
	var r Result
	for i, pp := range v.pls {
		if len(pp.Target) == 0 {
			continue
		}
		bad := slices.ContainsFunc(pp.Target, func(n uint8) bool { return !slices.Contains(pp.Replicas, n) && !v.allowed[n] })
		if !bad {
			continue
		}
		if err := p.cfg.Store.CommitPlacement(ctx, pp.Ref, pp.Partition, pp.Replicas, nil); err != nil && !errors.Is(err, metadata.ErrPlacementStale) {
			return r, fmt.Errorf("abort the move of partition %d: %w", pp.Partition, err)
		}
		p.log.Warn("replica move given up: a node of its target can no longer take the replica", "stream", pp.Ref.StreamID,
			"topic", pp.Ref.TopicID, "partition", pp.Partition, "replicas", ids(pp.Replicas), "target", ids(pp.Target))
		v.pls[i].Target = nil
		r.Aborted++
	}
	r.InProgress = v.inProgress()
	budget := p.cfg.MaxMoves - r.InProgress
	if budget <= 0 {
		return r, nil
	}
	var nodes []placement.Node
	for _, n := range v.nodes {
		if v.allowed[n.ID] {
			nodes = append(nodes, placement.Node{ID: n.ID, Rack: n.Rack})
		}
	}
	current := make([][]uint8, len(v.pls))
	for i, pp := range v.pls {
		current[i] = pp.Replicas
		if len(pp.Target) > 0 {
			current[i] = pp.Target
		}
	}
	moves, err := p.plan(nodes, current, 0)
	if err != nil {
		return r, fmt.Errorf("rebalance: plan: %w", err)
	}
	targets := map[int][]uint8{}
	var order []int
	skip := map[int]bool{}
	for _, m := range moves {
		if m.Index < 0 || m.Index >= len(v.pls) || len(v.pls[m.Index].Target) > 0 || v.down[m.To] || !v.leadable(v.pls[m.Index]) {
			skip[m.Index] = true
			continue
		}
		t, ok := targets[m.Index]
		if !ok {
			t = slices.Clone(v.pls[m.Index].Replicas)
			order = append(order, m.Index)
		}
		if pos := slices.Index(t, m.From); pos >= 0 && !slices.Contains(t, m.To) {
			t[pos] = m.To
		} else {
			skip[m.Index] = true
		}
		targets[m.Index] = t
	}
	for _, i := range order {
		if r.Started >= budget {
			break
		}
		pp, t := v.pls[i], targets[i]
		if skip[i] || slices.Equal(t, pp.Replicas) {
			continue
		}
		if err := p.cfg.Store.CommitPlacement(ctx, pp.Ref, pp.Partition, pp.Replicas, t); err != nil {
			if errors.Is(err, metadata.ErrPlacementStale) {
				continue
			}
			return r, fmt.Errorf("start the move of partition %d: %w", pp.Partition, err)
		}
		p.log.Info("replica move started", "stream", pp.Ref.StreamID, "topic", pp.Ref.TopicID, "partition", pp.Partition,
			"replicas", ids(pp.Replicas), "target", ids(t))
		v.pls[i].Target = t
		r.Started++
		r.InProgress++
	}
	return r, nil
}
