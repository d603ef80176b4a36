package replication

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// testTiming is the default cluster timing (5 s heartbeat timeout, 500 ms
// commit broadcast) as config.ClusterConfig.RaftTiming maps it.
var testTiming = Timing{Tick: 100 * time.Millisecond, HeartbeatTicks: 5, ElectionTicks: 12}

// memNet is an in-memory network between hosts that drops, delays (and so
// reorders) and partitions envelopes. Every envelope travels alone with
// its own random delay; messages are cloned, as serialisation would.
type memNet struct {
	mu       sync.Mutex // guards everything below
	rng      *rand.Rand
	hosts    map[NodeID]*Host
	down     map[NodeID]bool
	cut      map[[2]NodeID]bool // directional links that drop everything
	dropRate float64
	dupRate  float64
	maxDelay time.Duration
	// inOrder delivers every envelope during Send, in order, as a TCP
	// connection would (maxDelay is then ignored).
	inOrder bool
	sent    int
	dropped int
}

func newMemNet(seed uint64) *memNet {
	return &memNet{
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		hosts: map[NodeID]*Host{}, down: map[NodeID]bool{}, cut: map[[2]NodeID]bool{},
	}
}

type endpoint struct {
	n    *memNet
	self NodeID
}

func (n *memNet) endpoint(self NodeID) Network { return endpoint{n, self} }

// blockedLocked: caller holds n.mu.
func (n *memNet) blockedLocked(from, to NodeID) bool {
	return n.down[from] || n.down[to] || n.cut[[2]NodeID{from, to}]
}

func (e endpoint) Send(to NodeID, envs []transport.Envelope) {
	n := e.n
	n.mu.Lock()
	var unreachable []transport.Envelope
	var now []transport.Envelope
	for _, env := range envs {
		n.sent++
		if n.blockedLocked(e.self, to) {
			n.dropped++
			unreachable = append(unreachable, env)
			continue
		}
		if n.rng.Float64() < n.dropRate {
			n.dropped++
			continue
		}
		copies := 1
		if n.rng.Float64() < n.dupRate {
			copies = 2
		}
		for range copies {
			c := env
			if c.Msg != nil {
				c.Msg = proto.CloneOf(env.Msg)
			}
			if c.Prefix != nil {
				// One body on the wire.
				c.Data, c.Prefix = append(bytes.Clone(c.Prefix), c.Data...), nil
			}
			if n.inOrder {
				now = append(now, c)
				continue
			}
			if n.maxDelay <= 0 {
				// No delay: a goroutine, not a zero-length timer (one
				// crash of the runtime's timer code inside a synctest
				// bubble was seen on this path).
				go n.deliver(e.self, to, c)
				continue
			}
			delay := time.Duration(n.rng.Int64N(int64(n.maxDelay)))
			time.AfterFunc(delay, func() { n.deliver(e.self, to, c) })
		}
	}
	self, dest := n.hosts[e.self], n.hosts[to]
	n.mu.Unlock()
	if len(now) > 0 && dest != nil {
		dest.Deliver(e.self, now)
	}
	if len(unreachable) > 0 && self != nil {
		self.Unreachable(to, unreachable)
	}
}

func (n *memNet) deliver(from, to NodeID, env transport.Envelope) {
	n.mu.Lock()
	h := n.hosts[to]
	blocked := n.blockedLocked(from, to)
	n.mu.Unlock()
	if h != nil && !blocked {
		h.Deliver(from, []transport.Envelope{env})
	}
}

func (n *memNet) set(f func(n *memNet)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(n)
}

// isolate cuts every link to and from x.
func (n *memNet) isolate(x NodeID, ids []NodeID, on bool) {
	n.set(func(n *memNet) {
		for _, y := range ids {
			if y != x {
				n.cut[[2]NodeID{x, y}] = on
				n.cut[[2]NodeID{y, x}] = on
			}
		}
	})
}

// recordSM records what one node's groups apply, per group; machine
// gives each group its GroupMachine over it.
type recordSM struct {
	mu       sync.Mutex
	applied  map[GroupID][]Entry
	restores int
	// restoredAt and restoredData are the last Restore's arguments.
	restoredAt   uint64
	restoredData []byte
}

func newRecordSM() *recordSM { return &recordSM{applied: map[GroupID][]Entry{}} }

// machine is group g's state machine on this node.
func (s *recordSM) machine(g GroupID) GroupMachine { return recordMachine{s, g} }

// recordMachine is one group's GroupMachine over a recordSM.
type recordMachine struct {
	s *recordSM
	g GroupID
}

func (m recordMachine) Apply(e Entry) {
	s, g := m.s, m.g
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.applied[g]; len(prev) > 0 && prev[len(prev)-1].Index >= e.Index {
		panic(fmt.Sprintf("group %d: index %d applied after %d", g, e.Index, prev[len(prev)-1].Index))
	}
	s.applied[g] = append(s.applied[g], Entry{Index: e.Index, Term: e.Term, Data: bytes.Clone(e.Data)})
}

// Snapshot encodes the applied list: per entry index, term, length, data.
func (m recordMachine) Snapshot() ([]byte, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	return encodeEntries(m.s.applied[m.g]), nil
}

// encodeEntries is the snapshot format of recordMachine.
func encodeEntries(ents []Entry) []byte {
	var b []byte
	for _, e := range ents {
		b = binary.AppendUvarint(b, e.Index)
		b = binary.AppendUvarint(b, e.Term)
		b = binary.AppendUvarint(b, uint64(len(e.Data)))
		b = append(b, e.Data...)
	}
	return b
}

func (m recordMachine) Restore(index uint64, data []byte) error {
	var out []Entry
	r := bytes.NewReader(data)
	for r.Len() > 0 {
		idx, err1 := binary.ReadUvarint(r)
		term, err2 := binary.ReadUvarint(r)
		l, err3 := binary.ReadUvarint(r)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		d := make([]byte, l)
		if _, err := io.ReadFull(r, d); err != nil {
			return err
		}
		out = append(out, Entry{Index: idx, Term: term, Data: d})
	}
	s := m.s
	s.mu.Lock()
	s.applied[m.g] = out
	s.restores++
	s.restoredAt, s.restoredData = index, bytes.Clone(data)
	s.mu.Unlock()
	return nil
}

func (s *recordSM) entries(g GroupID) []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.applied[g])
}

// cluster is n hosts on a memNet, with per-node storages kept across
// crashes (a crash loses only what a restart would).
type cluster struct {
	t        *testing.T
	net      *memNet
	ids      []NodeID
	hosts    map[NodeID]*Host
	sms      map[NodeID]*recordSM
	storages map[NodeID]map[GroupID]LogStorage
	voters   map[GroupID][]NodeID
	mutate   func(*Config)
}

func newCluster(t *testing.T, n int, seed uint64, mutate func(*Config)) *cluster {
	t.Helper()
	c := &cluster{
		t: t, net: newMemNet(seed), hosts: map[NodeID]*Host{}, sms: map[NodeID]*recordSM{},
		storages: map[NodeID]map[GroupID]LogStorage{}, voters: map[GroupID][]NodeID{}, mutate: mutate,
	}
	for i := range n {
		c.ids = append(c.ids, NodeID(i))
	}
	for _, id := range c.ids {
		c.start(id)
	}
	t.Cleanup(c.stop)
	return c
}

func (c *cluster) start(id NodeID) {
	c.t.Helper()
	if !slices.Contains(c.ids, id) {
		c.ids = append(c.ids, id)
	}
	cfg := Config{Self: id, Peers: c.ids, Timing: testTiming, Network: c.net.endpoint(id), Logger: testLogger()}
	if c.mutate != nil {
		c.mutate(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sms[id] = newRecordSM()
	c.net.set(func(n *memNet) { n.hosts[id] = h; n.down[id] = false })
	c.hosts[id] = h
	if c.storages[id] == nil {
		c.storages[id] = map[GroupID]LogStorage{}
	}
	for g, voters := range c.voters {
		if st, ok := c.storages[id][g]; ok {
			c.addGroupOn(id, g, GroupOptions{Storage: st})
		} else if slices.Contains(voters, id) {
			c.addGroupOn(id, g, GroupOptions{Voters: voters})
		}
	}
}

func (c *cluster) stop() {
	for _, h := range c.hosts {
		h.Close()
	}
}

// crash stops id; its storages survive for a restart.
func (c *cluster) crash(id NodeID) {
	c.net.set(func(n *memNet) { n.down[id] = true; delete(n.hosts, id) })
	c.hosts[id].Close()
	delete(c.hosts, id)
}

// addGroupOn adds g on node id, with the node's recordSM as its machine
// unless opts names one.
func (c *cluster) addGroupOn(id NodeID, g GroupID, opts GroupOptions) {
	c.t.Helper()
	if opts.Storage == nil {
		opts.Storage = NewMemoryLog()
	}
	if opts.Machine == nil {
		opts.Machine = c.sms[id].machine(g)
	}
	c.storages[id][g] = opts.Storage
	if err := c.hosts[id].AddGroup(context.Background(), g, opts); err != nil {
		c.t.Fatal(err)
	}
}

// addGroup creates g on every node with all nodes as voters.
func (c *cluster) addGroup(g GroupID) {
	c.t.Helper()
	c.voters[g] = slices.Clone(c.ids)
	for _, id := range c.ids {
		c.addGroupOn(id, g, GroupOptions{Voters: c.ids})
	}
}

// leader waits until a node leads g with a majority of the voters naming
// it (an isolated stale leader does not count).
func (c *cluster) leader(g GroupID, within time.Duration) NodeID {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		voters := c.voters[g]
		for _, cand := range voters {
			h := c.hosts[cand]
			if h == nil {
				continue
			}
			if v, _ := h.Status(g); v.Role != RoleLeader {
				continue
			}
			support := 0
			for _, id := range voters {
				if o := c.hosts[id]; o != nil {
					if l, ok := o.Leader(g); ok && l == cand {
						support++
					}
				}
			}
			if support > len(voters)/2 {
				return cand
			}
		}
		time.Sleep(testTiming.Tick)
	}
	c.t.Fatalf("group %d: no leader with majority support within %s", g, within)
	return 0
}

// propose retries a proposal of data on whichever node leads g until it
// is acknowledged, and returns the index. An outcome-unknown error is
// retried too, so data may commit twice; callers use unique payloads and
// check for that.
func (c *cluster) propose(g GroupID, data []byte, within time.Duration) (uint64, error) {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		lead := c.leader(g, within)
		h := c.hosts[lead]
		if h == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		idx, err := h.Propose(ctx, g, data)
		cancel()
		if err == nil {
			return idx, nil
		}
		last = err
		time.Sleep(testTiming.Tick)
	}
	return 0, fmt.Errorf("not acknowledged within %s: %w", within, last)
}

// checkSame asserts that every listed node applied a prefix of the same
// sequence for g, and returns the longest sequence.
func (c *cluster) checkSame(g GroupID, ids []NodeID) []Entry {
	c.t.Helper()
	var longest []Entry
	var who NodeID
	for _, id := range ids {
		if e := c.sms[id].entries(g); len(e) > len(longest) {
			longest, who = e, id
		}
	}
	for _, id := range ids {
		got := c.sms[id].entries(g)
		for i, e := range got {
			w := longest[i]
			if e.Index != w.Index || e.Term != w.Term || !bytes.Equal(e.Data, w.Data) {
				c.t.Fatalf("group %d: node %d applied %d:%d %q at position %d, node %d applied %d:%d %q",
					g, id, e.Index, e.Term, e.Data, i, who, w.Index, w.Term, w.Data)
			}
		}
	}
	return longest
}

// waitApplied waits until every listed node applied at least n entries of g.
func (c *cluster) waitApplied(g GroupID, ids []NodeID, n int, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok := true
		for _, id := range ids {
			if len(c.sms[id].entries(g)) < n {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			for _, id := range ids {
				c.t.Logf("node %d applied %d", id, len(c.sms[id].entries(g)))
			}
			c.t.Fatalf("group %d: not every node applied %d entries within %s", g, n, within)
		}
		time.Sleep(testTiming.Tick)
	}
}

// checkAcked asserts that every acknowledged proposal is in seq at its
// index, exactly once.
func checkAcked(t *testing.T, g GroupID, seq []Entry, acked map[string]uint64) {
	t.Helper()
	at := map[uint64]Entry{}
	count := map[string]int{}
	for _, e := range seq {
		at[e.Index] = e
		count[string(e.Data)]++
	}
	for data, idx := range acked {
		e, ok := at[idx]
		if !ok || string(e.Data) != data {
			t.Fatalf("group %d: acknowledged %q at %d is lost (found %q)", g, data, idx, e.Data)
		}
	}
	for data, n := range count {
		if n > 1 {
			if _, ok := acked[data]; ok {
				t.Logf("group %d: %q applied %d times (a retry after an unknown outcome)", g, data, n)
			}
		}
	}
}

// testLogger discards logs unless IGGO_RAFT_DEBUG is set.
func testLogger() *slog.Logger {
	if os.Getenv("IGGO_RAFT_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
