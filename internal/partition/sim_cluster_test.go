package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/raftlog"
	"github.com/iggo-dev/iggo/wire"
)

// simRef is the one topic of the simulation; its partition 0 is the
// replicated partition under test. Its segments are small (8 KiB), so a
// run seals and deletes several.
var simRef = func() catalog.TopicRef {
	s := wire.DefaultTopicSettings()
	s.SegmentSize = 8 << 10
	return catalog.TopicRef{StreamID: 3, TopicID: 4, Incarnation: 9, Settings: s}
}()

// simTiming: 10 ms ticks, 100 ms heartbeat, 1 s election timeout.
var simTiming = replication.Timing{Tick: 10 * time.Millisecond, HeartbeatTicks: 10, ElectionTicks: 100}

// simCluster is the simulated cluster: simNodes nodes, each a real
// partition plane over real storage and a durable raft log in its own
// directory, whose hosts talk through a simNet.
type simCluster struct {
	t      *testing.T
	net    *simNet
	trace  *simTrace
	roster []replication.NodeID
	nodes  []*simNode

	// elected is told of every raft election won (electionHandler).
	elected func(node replication.NodeID, term uint64)

	mu sync.Mutex // guards placement
	// placement is the partition's replica list as the metadata would
	// hold it: what a restarted node is told by CreatePartitions.
	placement []uint8
}

// simNode is one node: its directory outlives its incarnations.
type simNode struct {
	id  replication.NodeID
	dir string

	mu sync.Mutex // guards everything below
	up bool
	// started: the node ran once (the topic was created on it).
	started bool
	plane   *Plane
	repl    *testReplicator

	logMu sync.Mutex // guards logs (opened on the plane's worker)
	logs  []*raftlog.Log
}

func newSimCluster(t *testing.T, n int, seed uint64, tr *simTrace) *simCluster {
	c := &simCluster{t: t, net: newSimNet(seed), trace: tr}
	for i := range n {
		c.roster = append(c.roster, replication.NodeID(i))
		c.nodes = append(c.nodes, &simNode{id: replication.NodeID(i), dir: t.TempDir()})
	}
	for i := range simReplicas {
		c.placement = append(c.placement, uint8(i))
	}
	return c
}

// group is the raft group of the partition under test.
func (c *simCluster) group() replication.GroupID { return replicated.GroupID(simRef, 0) }

// ref is simRef with the current placement.
func (c *simCluster) ref() catalog.TopicRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := simRef
	r.Placement = map[uint32][]uint8{0: slices.Clone(c.placement)}
	return r
}

func (c *simCluster) setPlacement(p []uint8) {
	c.mu.Lock()
	c.placement = slices.Clone(p)
	c.mu.Unlock()
}

func (c *simCluster) getPlacement() []uint8 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.placement)
}

// start starts node id over its directory.
func (c *simCluster) start(id replication.NodeID) error {
	nd := c.nodes[id]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.up {
		return nil
	}
	// Partition groups are bootstrapped only when the topic is created
	// (the first start); at a restart the broker's Replicator gives no
	// voters (broker.partitionVoters), so an empty replica waits for its
	// leader instead of bootstrapping a group of its own.
	var voters []replication.NodeID
	if !nd.started {
		voters, nd.started = c.roster, true
	}
	r := &testReplicator{self: id, voters: voters}
	logs := func(dir string) (replication.LogStorage, error) {
		l, err := raftlog.Open(dir, raftlog.Options{Logger: c.logger(id), SegmentBytes: 16 << 10})
		if err != nil {
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		nd.addLog(l)
		return l, nil
	}
	ref := c.ref()
	p, err := New(Options{Dir: nd.dir, Replicator: r, LogStorage: logs, Logger: c.logger(id), RetentionInterval: -1})
	if err != nil {
		return fmt.Errorf("node %d: open plane: %w", id, err)
	}
	p.SetTopics(&fakeTopics{ref: simRef, ids: []uint32{0}})
	h, err := replication.New(replication.Config{Self: id, Peers: c.roster, Timing: simTiming,
		Network: simEndpoint{c.net, id}, Logger: c.logger(id)})
	if err != nil {
		p.Close()
		return fmt.Errorf("node %d: start host: %w", id, err)
	}
	r.h = h
	c.net.attach(id, h)
	nd.plane, nd.repl, nd.up = p, r, true
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		return fmt.Errorf("node %d: create partitions: %w", id, err)
	}
	return nil
}

// logger is node id's logger: it reports every raft election won
// (c.elected) and, with -sim.log, writes the node's log to the test log
// at that level.
func (c *simCluster) logger(id replication.NodeID) *slog.Logger {
	h := &electionHandler{node: id, elected: c.elected}
	var level slog.Level
	if *simLogFlag != "" && level.UnmarshalText([]byte(*simLogFlag)) == nil {
		h.inner = slog.NewTextHandler(testWriter{c.t}, &slog.HandlerOptions{Level: level})
		h.level = level
	}
	return slog.New(h).With("node", int(id))
}

// electionHandler is a slog.Handler that sees raft's "became leader at
// term N" lines (logged at Debug) and passes records at or above level
// to inner (nil: none).
type electionHandler struct {
	node    replication.NodeID
	elected func(node replication.NodeID, term uint64)
	inner   slog.Handler
	level   slog.Level
}

func (h *electionHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l == slog.LevelDebug || (h.inner != nil && l >= h.level)
}

func (h *electionHandler) Handle(ctx context.Context, r slog.Record) error {
	if _, after, ok := strings.Cut(r.Message, " became leader at term "); ok && h.elected != nil {
		if term, err := strconv.ParseUint(after, 10, 64); err == nil {
			h.elected(h.node, term)
		}
	}
	if h.inner != nil && r.Level >= h.level {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

func (h *electionHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	if h.inner != nil {
		c.inner = h.inner.WithAttrs(as)
	}
	return &c
}

func (h *electionHandler) WithGroup(name string) slog.Handler {
	c := *h
	if h.inner != nil {
		c.inner = h.inner.WithGroup(name)
	}
	return &c
}

// testWriter writes log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// addLog records a raft log opened by node nd's plane, closed when the
// node stops.
func (nd *simNode) addLog(l *raftlog.Log) {
	nd.logMu.Lock()
	nd.logs = append(nd.logs, l)
	nd.logMu.Unlock()
}

// stop stops node id as a crashed process would: the host stops first
// (nothing more is sent or acknowledged), then the plane and the raft
// logs close. Data written to files survives (a process crash keeps the
// page cache); storage faults model what a machine crash or a disk does.
func (c *simCluster) stop(id replication.NodeID) error {
	nd := c.nodes[id]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if !nd.up {
		return nil
	}
	c.net.attach(id, nil)
	nd.repl.host().Close()
	err := nd.plane.Close()
	nd.logMu.Lock()
	for _, l := range nd.logs {
		if cerr := l.Close(); cerr != nil && !errors.Is(cerr, raftlog.ErrClosed) {
			err = errors.Join(err, cerr)
		}
	}
	nd.logs = nil
	nd.logMu.Unlock()
	nd.up, nd.plane, nd.repl = false, nil, nil
	return err
}

// running returns node id's plane and host while it is up.
func (c *simCluster) running(id replication.NodeID) (*Plane, *replication.Host, bool) {
	nd := c.nodes[id]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if !nd.up {
		return nil, nil, false
	}
	return nd.plane, nd.repl.host(), true
}

// stopAll stops every node (cleanup).
func (c *simCluster) stopAll() {
	for _, nd := range c.nodes {
		if err := c.stop(nd.id); err != nil {
			c.t.Logf("stop node %d: %v", nd.id, err)
		}
	}
}

// leader returns a running node whose host leads the group, preferring
// the one with the highest term (a deposed leader may not know yet).
func (c *simCluster) leader() (replication.NodeID, bool) {
	best, term, found := replication.NodeID(0), uint64(0), false
	for _, id := range c.roster {
		_, h, ok := c.running(id)
		if !ok {
			continue
		}
		if v, ok := h.Status(c.group()); ok && v.Role == replication.RoleLeader && (!found || v.Term > term) {
			best, term, found = id, v.Term, true
		}
	}
	return best, found
}

// awaitLeader waits up to d for a leader.
func (c *simCluster) awaitLeader(d time.Duration) (replication.NodeID, bool) {
	deadline := time.Now().Add(d)
	for {
		if id, ok := c.leader(); ok {
			return id, true
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(simTiming.Tick)
	}
}

// move replaces replica from with replica to in the placement, as the
// broker's replica mover does: every node learns the joined list (to
// opens an empty replica), the leader adds to as a learner and promotes
// it once caught up, hands its leadership over if it is the one leaving,
// removes from, and every node learns the final list (from drops its
// replica and files). A move that fails is rolled back (to removed from
// the group if it got in, the old list restored); if even that fails,
// the joined list stays, as the metadata would keep a move pending.
func (c *simCluster) move(from, to replication.NodeID) error {
	if _, ok := c.awaitLeader(5 * time.Second); !ok {
		return errors.New("no leader: not started")
	}
	old := c.getPlacement()
	joined := append(slices.Clone(old), uint8(to))
	final := slices.Clone(old)
	final[slices.Index(final, uint8(from))] = uint8(to)
	c.setPlacement(joined)
	if err := c.place(joined); err != nil {
		return err
	}
	if err := c.moveSteps(from, to, final); err != nil {
		if rerr := c.rollback(to, old); rerr != nil {
			return fmt.Errorf("%w; rollback: %w", err, rerr)
		}
		return fmt.Errorf("%w (rolled back)", err)
	}
	c.setPlacement(final)
	return c.place(final)
}

// place tells every running node the replica list.
func (c *simCluster) place(list []uint8) error {
	ref := c.ref()
	for _, id := range c.roster {
		if p, _, ok := c.running(id); ok {
			if err := p.SetReplicas(ref, 0, list); err != nil {
				return fmt.Errorf("set replicas %v on node %d: %w", list, id, err)
			}
		}
	}
	return nil
}

// moveSteps are the group changes of a move.
func (c *simCluster) moveSteps(from, to replication.NodeID, final []uint8) error {
	g := c.group()
	lead, ok := c.awaitLeader(5 * time.Second)
	if !ok {
		return errors.New("no leader to add the replica")
	}
	_, h, _ := c.running(lead)
	if h == nil {
		return errors.New("leader stopped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.AddMember(ctx, g, to); err != nil {
		return fmt.Errorf("add member %d via %d: %w", to, lead, err)
	}
	if lead == from {
		var err error
		if lead, h, err = c.handOver(ctx, h, from, to, final); err != nil {
			return err
		}
	}
	return c.remove(ctx, h, lead, from)
}

// handOver moves the leadership away from leaving (the leader, whose
// host is h), to the first of list that is neither leaving nor avoid,
// as the broker's mover does before it removes a leader; it returns the
// new leader and its host.
func (c *simCluster) handOver(ctx context.Context, h *replication.Host, leaving, avoid replication.NodeID, list []uint8) (replication.NodeID, *replication.Host, error) {
	next, found := replication.NodeID(0), false
	for _, r := range list {
		if n := replication.NodeID(r); n != leaving && n != avoid {
			next, found = n, true
			break
		}
	}
	if !found {
		return 0, nil, fmt.Errorf("no replica to hand the leadership of %d to", leaving)
	}
	if err := h.TransferLeadership(ctx, c.group(), next); err != nil {
		return 0, nil, fmt.Errorf("transfer leadership %d to %d: %w", leaving, next, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if l, ok := c.leader(); ok && l != leaving {
			if _, lh, ok := c.running(l); ok {
				return l, lh, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, nil, fmt.Errorf("leadership did not leave %d", leaving)
		}
		time.Sleep(simTiming.Tick)
	}
}

// remove takes node id out of the group through leader lead's host h.
// ChangeMembership succeeds with a nil ConfState when raft ignored the
// change (another one was still pending, as right after an election):
// that is retried, as the broker's replica mover re-decides on fresh
// state.
func (c *simCluster) remove(ctx context.Context, h *replication.Host, lead, id replication.NodeID) error {
	for {
		cs, err := h.ChangeMembership(ctx, c.group(), []replication.MemberChange{{Type: replication.Remove, Node: id}})
		if err != nil {
			return fmt.Errorf("remove %d via %d: %w", id, lead, err)
		}
		if cs != nil {
			c.trace.add("move: removed n%d via n%d: raft ids (node+1) voters %v learners %v", id, lead, cs.GetVoters(), cs.GetLearners())
			return nil
		}
		c.trace.add("move: removal of n%d ignored by raft (a change pending); again", id)
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove %d via %d: %w", id, lead, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rollback takes to out of the group (if it got in) and restores the
// old replica list.
func (c *simCluster) rollback(to replication.NodeID, old []uint8) error {
	g := c.group()
	lead, ok := c.awaitLeader(5 * time.Second)
	if !ok {
		return errors.New("no leader")
	}
	_, h, _ := c.running(lead)
	if h == nil {
		return errors.New("leader stopped")
	}
	v, _ := h.Status(g)
	if slices.Contains(v.Voters, to) || slices.Contains(v.Learners, to) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if lead == to {
			var err error
			if lead, h, err = c.handOver(ctx, h, to, to, old); err != nil {
				return err
			}
		}
		if err := c.remove(ctx, h, lead, to); err != nil {
			return err
		}
	}
	c.setPlacement(old)
	return c.place(old)
}
