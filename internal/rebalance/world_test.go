package rebalance

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
)

// world is a fake cluster shared by the fake hosts of its nodes: the
// metadata placement, each partition group's membership and leader, the
// metadata group's members and the nodes' liveness. It checks the move
// rules at every membership change and placement commit.
type world struct {
	t  *testing.T
	mu sync.Mutex
	// pls is the metadata placement.
	pls    []metadata.PartitionPlacement
	groups map[replication.GroupID]*fgroup
	meta   []replication.NodeID
	alive  map[replication.NodeID]bool
	silent map[replication.NodeID]time.Duration
	// maxMoves is checked at every commit (0: not checked).
	maxMoves int
	// peakMoves is the most moves in progress seen.
	peakMoves int
	commits   int
	// replaying makes the metadata view lag its commit index.
	replaying bool
	wakers    []func()
	log       []string
}

type fgroup struct {
	voters, learners []replication.NodeID
	leader           replication.NodeID
}

func newWorld(t *testing.T, nodes int) *world {
	w := &world{t: t, groups: map[replication.GroupID]*fgroup{}, alive: map[replication.NodeID]bool{}, silent: map[replication.NodeID]time.Duration{}}
	for i := range nodes {
		w.meta = append(w.meta, replication.NodeID(i))
		w.alive[replication.NodeID(i)] = true
	}
	return w
}

// addPartition adds partition p of a topic with the given replicas; the
// group's leader is the first replica.
func (w *world) addPartition(p uint32, replicas ...uint8) {
	ref := catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 7}
	w.pls = append(w.pls, metadata.PartitionPlacement{Ref: ref, Partition: p, Replicas: slices.Clone(replicas)})
	g := &fgroup{leader: replication.NodeID(replicas[0])}
	for _, r := range replicas {
		g.voters = append(g.voters, replication.NodeID(r))
	}
	w.groups[replicated.GroupID(ref, p)] = g
}

func (w *world) errorf(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf(format, args...)
}

func (w *world) placementOf(g replication.GroupID) metadata.PartitionPlacement {
	for _, pp := range w.pls {
		if replicated.GroupID(pp.Ref, pp.Partition) == g {
			return pp
		}
	}
	w.t.Fatalf("no placement for group %d", g)
	return metadata.PartitionPlacement{}
}

// Placements implements Store.
func (w *world) Placements() []metadata.PartitionPlacement {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]metadata.PartitionPlacement, len(w.pls))
	for i, pp := range w.pls {
		out[i] = metadata.PartitionPlacement{Ref: pp.Ref, Partition: pp.Partition, Replicas: slices.Clone(pp.Replicas), Target: slices.Clone(pp.Target)}
	}
	return out
}

// CommitPlacement implements Store: a finished move's target must be
// voters of the group; a new target must be one move per partition.
func (w *world) CommitPlacement(_ context.Context, t catalog.TopicRef, partition uint32, replicas, target []uint8) error {
	w.mu.Lock()
	i := slices.IndexFunc(w.pls, func(pp metadata.PartitionPlacement) bool {
		return pp.Ref.Incarnation == t.Incarnation && pp.Partition == partition
	})
	if i < 0 {
		w.mu.Unlock()
		return metadata.ErrPlacementStale
	}
	pp := &w.pls[i]
	g := w.groups[replicated.GroupID(t, partition)]
	if len(target) == 0 && len(pp.Target) > 0 && slices.Equal(replicas, pp.Target) {
		for _, r := range replicas {
			if !slices.Contains(g.voters, replication.NodeID(r)) {
				w.errorf("partition %d: move committed while target replica %d is not a voter (%v)", partition, r, g.voters)
			}
		}
	}
	pp.Replicas, pp.Target = slices.Clone(replicas), slices.Clone(target)
	w.commits++
	w.log = append(w.log, fmt.Sprintf("p%d placement %v -> %v", partition, replicas, target))
	moves := 0
	for _, q := range w.pls {
		if len(q.Target) > 0 {
			moves++
		}
	}
	w.peakMoves = max(w.peakMoves, moves)
	if w.maxMoves > 0 && moves > w.maxMoves {
		w.errorf("%d moves in progress, more than %d", moves, w.maxMoves)
	}
	wakers := slices.Clone(w.wakers)
	w.mu.Unlock()
	for _, f := range wakers {
		f()
	}
	return nil
}

// fhost is one node's view of the world (Host).
type fhost struct {
	w    *world
	self replication.NodeID
	// addDelay is how long a learner takes to catch up.
	addDelay time.Duration
}

func (h *fhost) Status(g replication.GroupID) (replication.View, bool) {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if g == replication.MetadataGroup {
		v := replication.View{Voters: slices.Clone(w.meta), HasLeader: true, Commit: 5, Applied: 5}
		if w.replaying {
			v.Applied = 3
		}
		return v, true
	}
	fg := w.groups[g]
	if fg == nil || !w.alive[h.self] || (!slices.Contains(fg.voters, h.self) && !slices.Contains(fg.learners, h.self)) {
		return replication.View{}, false
	}
	v := replication.View{Leader: fg.leader, HasLeader: true, Role: replication.RoleFollower,
		Voters: slices.Clone(fg.voters), Learners: slices.Clone(fg.learners)}
	slices.Sort(v.Voters)
	slices.Sort(v.Learners)
	if fg.leader == h.self {
		v.Role = replication.RoleLeader
	}
	return v, true
}

func (h *fhost) leading(g replication.GroupID) (*fgroup, error) {
	fg := h.w.groups[g]
	if fg == nil {
		return nil, replication.ErrUnknownGroup
	}
	if fg.leader != h.self {
		return nil, &replication.NotLeaderError{Group: g, Leader: fg.leader, HasLeader: true}
	}
	return fg, nil
}

func (h *fhost) AddMember(ctx context.Context, g replication.GroupID, id replication.NodeID) error {
	w := h.w
	w.mu.Lock()
	fg, err := h.leading(g)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	if slices.Contains(fg.voters, id) {
		w.mu.Unlock()
		return nil
	}
	if !slices.Contains(fg.learners, id) {
		fg.learners = append(fg.learners, id)
		w.log = append(w.log, fmt.Sprintf("g%d learner %d", g, id))
	}
	w.mu.Unlock()
	// Catch-up: wait while the learner is down.
	for {
		w.mu.Lock()
		up := w.alive[id]
		w.mu.Unlock()
		if up {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", replication.ErrOutcomeUnknown, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", replication.ErrOutcomeUnknown, ctx.Err())
	case <-time.After(h.addDelay):
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if fg, err = h.leading(g); err != nil {
		return err
	}
	fg.learners = slices.DeleteFunc(fg.learners, func(n replication.NodeID) bool { return n == id })
	if !slices.Contains(fg.voters, id) {
		fg.voters = append(fg.voters, id)
	}
	w.log = append(w.log, fmt.Sprintf("g%d voter %d", g, id))
	return nil
}

// ChangeMembership removes members, checking that the wanted members
// are voters before anything else leaves (during a move) and that a
// quorum of the wanted list stays.
func (h *fhost) ChangeMembership(_ context.Context, g replication.GroupID, changes []replication.MemberChange) (*raftpb.ConfState, error) {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	fg, err := h.leading(g)
	if err != nil {
		return nil, err
	}
	pp := w.placementOf(g)
	want := pp.Replicas
	if len(pp.Target) > 0 {
		want = pp.Target
	}
	for _, c := range changes {
		if c.Type != replication.Remove {
			w.errorf("unexpected change %+v", c)
			continue
		}
		if c.Node == h.self {
			w.errorf("group %d: leader %d removes itself", g, h.self)
		}
		fg.voters = slices.DeleteFunc(fg.voters, func(n replication.NodeID) bool { return n == c.Node })
		fg.learners = slices.DeleteFunc(fg.learners, func(n replication.NodeID) bool { return n == c.Node })
		w.log = append(w.log, fmt.Sprintf("g%d removed %d", g, c.Node))
		if len(pp.Target) > 0 {
			for _, r := range pp.Target {
				if !slices.Contains(fg.voters, replication.NodeID(r)) {
					w.errorf("group %d: replica %d removed before target replica %d votes", g, c.Node, r)
				}
			}
		}
		live := 0
		for _, n := range fg.voters {
			if slices.Contains(want, uint8(n)) && w.alive[n] {
				live++
			}
		}
		if live < quorum(len(want)) {
			w.errorf("group %d: %d live voters of %v left after removing %d", g, live, want, c.Node)
		}
	}
	return &raftpb.ConfState{}, nil
}

func (h *fhost) TransferLeadership(_ context.Context, g replication.GroupID, to replication.NodeID) error {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	fg, err := h.leading(g)
	if err != nil {
		return err
	}
	if !slices.Contains(fg.voters, to) || !w.alive[to] {
		w.errorf("group %d: leadership handed to %d, not a live voter", g, to)
	}
	fg.leader = to
	w.log = append(w.log, fmt.Sprintf("g%d leader %d -> %d", g, h.self, to))
	return nil
}

func (h *fhost) Progress(_ context.Context, g replication.GroupID) (map[replication.NodeID]uint64, uint64, error) {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	fg, err := h.leading(g)
	if err != nil {
		return nil, 0, err
	}
	m := map[replication.NodeID]uint64{}
	for _, n := range fg.voters {
		m[n] = 10
	}
	return m, 10, nil
}

func (h *fhost) Peers(context.Context) (map[replication.NodeID]replication.Peer, error) {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[replication.NodeID]replication.Peer{}
	for _, n := range w.meta {
		if n != h.self {
			out[n] = replication.Peer{Alive: w.alive[n], Silent: w.silent[n]}
		}
	}
	return out, nil
}

// fcluster is the Planner's Cluster on node self.
type fcluster struct {
	w    *world
	self replication.NodeID
	rack map[uint8]string
}

func (c fcluster) Nodes(context.Context) ([]NodeInfo, error) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []NodeInfo
	for _, n := range w.meta {
		out = append(out, NodeInfo{ID: uint8(n), Rack: c.rack[uint8(n)], Alive: n == c.self || w.alive[n], Silent: w.silent[n]})
	}
	return out, nil
}

func (c fcluster) Leader() bool { return true }

// setAlive marks node n up or down (silent for d); the groups a node
// that goes down leads elect another live voter.
func (w *world) setAlive(n replication.NodeID, up bool, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.alive[n], w.silent[n] = up, d
	if up {
		return
	}
	for _, fg := range w.groups {
		if fg.leader != n {
			continue
		}
		for _, v := range fg.voters {
			if w.alive[v] {
				fg.leader = v
				break
			}
		}
	}
}

// runExecutors starts an executor per node of the metadata group (and
// the extra ids) until the test ends; they are woken at every commit.
func (w *world) runExecutors(t *testing.T, extra ...replication.NodeID) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	ids := append(slices.Clone(w.meta), extra...)
	for _, n := range ids {
		e := NewExecutor(ExecutorConfig{Self: n, Host: &fhost{w: w, self: n, addDelay: time.Millisecond}, Store: w,
			Interval: 5 * time.Millisecond, StepTimeout: time.Second, Logger: testLog()})
		w.mu.Lock()
		w.wakers = append(w.wakers, e.Wake)
		w.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Run(ctx)
		}()
	}
}

// settled reports whether no move is in progress and every group's
// voters are its replicas, without learners.
func (w *world) settled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, pp := range w.pls {
		fg := w.groups[replicated.GroupID(pp.Ref, pp.Partition)]
		if len(pp.Target) > 0 || len(fg.learners) > 0 || len(fg.voters) != len(pp.Replicas) {
			return false
		}
		for _, r := range pp.Replicas {
			if !slices.Contains(fg.voters, replication.NodeID(r)) {
				return false
			}
		}
	}
	return true
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// replicasPerNode counts the replicas of each node in the placement.
func (w *world) replicasPerNode() map[uint8]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[uint8]int{}
	for _, pp := range w.pls {
		for _, r := range pp.Replicas {
			out[r]++
		}
	}
	return out
}

// contextWithCleanup is a context canceled when the test ends.
func contextWithCleanup(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, cancel
}

// testLog is the logger of the package's tests: discarded unless
// IGGO_TEST_LOG is set.
func testLog() *slog.Logger {
	if os.Getenv("IGGO_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.Default()
}
