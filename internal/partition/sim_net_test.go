package partition

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// simNet is the simulation's in-memory network between hosts. Every
// envelope travels alone; what happens to it (dropped, duplicated,
// delayed, so reordered) is drawn from the random source of its directed
// link, seeded from the run's seed and the link's ends, so the fate of
// the n-th envelope on a link depends on the seed and n only, never on
// how the goroutines of other links were scheduled. Links can be cut one
// way (from→to drops, to→from delivers) or both ways; a node that is
// down neither sends nor receives.
type simNet struct {
	seed uint64

	mu    sync.Mutex // guards everything below
	hosts map[replication.NodeID]*replication.Host
	links map[[2]replication.NodeID]*rand.Rand
	cut   map[[2]replication.NodeID]bool
	// dropRate, dupRate and maxDelay are the current link faults
	// (delays up to maxDelay reorder envelopes).
	dropRate, dupRate float64
	maxDelay          time.Duration
	stats             netStats
}

// netStats counts what the network did to envelopes.
type netStats struct {
	Sent, Dropped, Duplicated, Cut, Delivered int
}

func newSimNet(seed uint64) *simNet {
	return &simNet{
		seed: seed, hosts: map[replication.NodeID]*replication.Host{},
		links: map[[2]replication.NodeID]*rand.Rand{}, cut: map[[2]replication.NodeID]bool{},
		maxDelay: time.Millisecond,
	}
}

// simEndpoint is node self's replication.Network on a simNet.
type simEndpoint struct {
	n    *simNet
	self replication.NodeID
}

// linkLocked is the random source of link from→to; caller holds n.mu.
func (n *simNet) linkLocked(from, to replication.NodeID) *rand.Rand {
	k := [2]replication.NodeID{from, to}
	r := n.links[k]
	if r == nil {
		r = rand.New(rand.NewPCG(n.seed, uint64(from)<<32|uint64(to)|1<<63))
		n.links[k] = r
	}
	return r
}

// Send implements replication.Network.
func (e simEndpoint) Send(to replication.NodeID, envs []transport.Envelope) {
	n := e.n
	n.mu.Lock()
	self, dest := n.hosts[e.self], n.hosts[to]
	if self == nil {
		n.mu.Unlock()
		return // a stopped incarnation
	}
	var unreachable []transport.Envelope
	for _, env := range envs {
		n.stats.Sent++
		// Draw the envelope's fate first, whatever happens to it, so the
		// link's sequence does not depend on the faults of the moment.
		r := n.linkLocked(e.self, to)
		drop, dup := r.Float64(), r.Float64()
		d1, d2 := r.Int64N(int64(time.Millisecond)*1000), r.Int64N(int64(time.Millisecond)*1000)
		if dest == nil || n.cut[[2]replication.NodeID{e.self, to}] {
			n.stats.Cut++
			unreachable = append(unreachable, env)
			continue
		}
		if drop < n.dropRate {
			n.stats.Dropped++
			continue
		}
		copies := []int64{d1}
		if dup < n.dupRate {
			n.stats.Duplicated++
			copies = append(copies, d2)
		}
		for _, d := range copies {
			c := cloneEnvelope(env)
			// At least 50 µs: a zero-length timer is avoided (see the
			// replication package's memNet).
			delay := 50*time.Microsecond + time.Duration(d%int64(max(n.maxDelay, time.Microsecond)))
			from := e.self
			time.AfterFunc(delay, func() { n.deliver(from, to, dest, c) })
		}
	}
	n.mu.Unlock()
	if len(unreachable) > 0 {
		self.Unreachable(to, unreachable)
	}
}

// cloneEnvelope copies env as serialisation would.
func cloneEnvelope(env transport.Envelope) transport.Envelope {
	c := env
	if c.Msg != nil {
		c.Msg = proto.CloneOf(env.Msg)
	}
	if c.Prefix != nil {
		c.Data, c.Prefix = append(bytes.Clone(c.Prefix), c.Data...), nil
	} else if c.Data != nil {
		c.Data = bytes.Clone(c.Data)
	}
	return c
}

// deliver hands env to dest if dest is still the running incarnation of
// to and the link is not cut by now.
func (n *simNet) deliver(from, to replication.NodeID, dest *replication.Host, env transport.Envelope) {
	n.mu.Lock()
	ok := n.hosts[to] == dest && n.hosts[from] != nil && !n.cut[[2]replication.NodeID{from, to}]
	if ok {
		n.stats.Delivered++
	}
	n.mu.Unlock()
	if ok {
		dest.Deliver(from, []transport.Envelope{env})
	}
}

// attach makes h node id's running incarnation (nil: the node is down).
func (n *simNet) attach(id replication.NodeID, h *replication.Host) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h == nil {
		delete(n.hosts, id)
		return
	}
	n.hosts[id] = h
}

// setCut cuts (or heals) the directed link from→to.
func (n *simNet) setCut(from, to replication.NodeID, on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if on {
		n.cut[[2]replication.NodeID{from, to}] = true
	} else {
		delete(n.cut, [2]replication.NodeID{from, to})
	}
}

// healAll removes every cut and link fault.
func (n *simNet) healAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
	n.dropRate, n.dupRate, n.maxDelay = 0, 0, time.Millisecond
}

// setFaults sets the link faults of every link.
func (n *simNet) setFaults(drop, dup float64, maxDelay time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropRate, n.dupRate, n.maxDelay = drop, dup, maxDelay
}

func (n *simNet) snapshot() netStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}
