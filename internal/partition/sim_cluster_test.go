package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// replicated partition under test.
// Small segments (8 KiB) so a run seals several.
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
	t     *testing.T
	net   *simNet
	trace *simTrace
	roster []replication.NodeID
	nodes []*simNode

	mu sync.Mutex // guards placement
	// placement is the partition's replica list as the metadata would
	// hold it: what a restarted node is told by CreatePartitions.
	placement []uint8
}

// simNode is one node: its directory outlives its incarnations.
type simNode struct {
	id  replication.NodeID
	dir string

	mu    sync.Mutex // guards everything below
	up    bool
	plane *Plane
	repl  *testReplicator
	// damaged counts the storage faults injected into this node's files.
	damaged int

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
	r := &testReplicator{self: id, voters: c.roster}
	logs := func(dir string) (replication.LogStorage, error) {
		l, err := raftlog.Open(dir, raftlog.Options{Logger: quietLogger(), SegmentBytes: 16 << 10})
		if err != nil {
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		nd.addLog(l)
		return l, nil
	}
	ref := c.ref()
	p, err := New(Options{Dir: nd.dir, Replicator: r, LogStorage: logs, Logger: quietLogger(), RetentionInterval: -1})
	if err != nil {
		return fmt.Errorf("node %d: open plane: %w", id, err)
	}
	p.SetTopics(&fakeTopics{ref: simRef, ids: []uint32{0}})
	h, err := replication.New(replication.Config{Self: id, Peers: c.roster, Timing: simTiming,
		Network: simEndpoint{c.net, id}, Logger: quietLogger()})
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
// replica and files). It returns the step that failed, if any.
func (c *simCluster) move(from, to replication.NodeID) error {
	g := c.group()
	old := c.getPlacement()
	joined := append(slices.Clone(old), uint8(to))
	final := slices.Clone(old)
	final[slices.Index(final, uint8(from))] = uint8(to)
	c.setPlacement(joined)
	ref := c.ref()
	for _, id := range c.roster {
		if p, _, ok := c.running(id); ok {
			if err := p.SetReplicas(ref, 0, joined); err != nil {
				return fmt.Errorf("set replicas %v on node %d: %w", joined, id, err)
			}
		}
	}
	lead, ok := c.awaitLeader(5 * time.Second)
	if !ok {
		return errors.New("no leader to add the replica")
	}
	_, h, _ := c.running(lead)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if h == nil {
		return errors.New("leader stopped")
	}
	if err := h.AddMember(ctx, g, to); err != nil {
		return fmt.Errorf("add member %d via %d: %w", to, lead, err)
	}
	if lead == from {
		next := replication.NodeID(final[0])
		if err := h.TransferLeadership(ctx, g, next); err != nil {
			return fmt.Errorf("transfer leadership %d to %d: %w", from, next, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if l, ok := c.leader(); ok && l != from {
				lead = l
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("leadership did not leave %d", from)
			}
			time.Sleep(simTiming.Tick)
		}
		if _, h, _ = c.running(lead); h == nil {
			return errors.New("new leader stopped")
		}
	}
	if _, err := h.ChangeMembership(ctx, g, []replication.MemberChange{{Type: replication.Remove, Node: from}}); err != nil {
		return fmt.Errorf("remove %d via %d: %w", from, lead, err)
	}
	c.setPlacement(final)
	ref = c.ref()
	for _, id := range c.roster {
		if p, _, ok := c.running(id); ok {
			if err := p.SetReplicas(ref, 0, final); err != nil {
				return fmt.Errorf("set replicas %v on node %d: %w", final, id, err)
			}
		}
	}
	return nil
}
