package partition

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Simulation shape.
const (
	simNodes    = 4 // nodes in the roster
	simReplicas = 3 // replicas of the partition
	simClients  = 3
	// simFaultSpan is the virtual time over which faults are injected;
	// then everything heals and the cluster must converge.
	simFaultSpan = 20 * time.Second
)

// Event kinds of a schedule.
const (
	evCrash    = "crash"    // stop a node
	evRestart  = "restart"  // start a stopped node over its files
	evIsolate  = "isolate"  // cut every link to and from a node
	evCutOne   = "cut"      // cut the link node→peer only (one way)
	evHeal     = "heal"     // remove every cut
	evLossy    = "lossy"    // drops, duplicates and delays on every link
	evCalm     = "calm"     // no more drops or duplicates
	evMove     = "move"     // move a replica (which one: drawn when it runs)
	evFlip     = "bitflip"  // flip one bit of a stopped node's file
	evTruncate = "truncate" // cut the tail of a stopped node's file
	evTransfer = "transfer" // the leader hands its leadership to a replica
	evDelete   = "delete"   // every running node deletes its oldest sealed segments (raft log compacted first)
)

// simEvent is one scheduled fault or membership change.
type simEvent struct {
	At   time.Duration // since the start of the run (virtual time)
	Kind string
	Node replication.NodeID
	Peer replication.NodeID
	// Rand feeds choices made when the event runs (which file, which
	// byte), drawn with the schedule so they are part of it.
	Rand uint64
}

func (e simEvent) String() string {
	switch e.Kind {
	case evCutOne:
		return fmt.Sprintf("%s n%d→n%d", e.Kind, e.Node, e.Peer)
	case evHeal, evLossy, evCalm, evMove, evTransfer, evDelete:
		return e.Kind
	}
	return fmt.Sprintf("%s n%d", e.Kind, e.Node)
}

// simOp is one client send: msgs messages at At.
type simOp struct {
	At   time.Duration
	Msgs int
}

// simSchedule is everything a seed decides before the run starts.
type simSchedule struct {
	Seed    uint64
	Events  []simEvent
	Clients [][]simOp
	// Storage says whether storage faults were drawn.
	Storage bool
}

// simProfile selects the fault kinds a schedule draws.
type simProfile struct {
	// storage draws bit flips and truncations of stopped nodes' files.
	storage bool
	// moves draws replica moves (membership changes).
	moves bool
	// crashLeader retargets crashes at the leader when they run
	// (simRun.retarget); the schedule itself is unchanged.
	crashLeader bool
}

// newSchedule draws the schedule of seed from one PCG source: events at
// random gaps over simFaultSpan, each kind's preconditions checked
// against the state the schedule itself implies (which nodes are down),
// and each client's sends.
func newSchedule(seed uint64, prof simProfile) simSchedule {
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed5eed5eed))
	s := simSchedule{Seed: seed, Storage: prof.storage}
	down := map[replication.NodeID]bool{}
	damaged := map[replication.NodeID]bool{}
	damagedNode := func() (replication.NodeID, bool) {
		for id := range damaged {
			return id, true
		}
		return 0, false
	}
	node := func() replication.NodeID { return replication.NodeID(rng.IntN(simNodes)) }
	for at := time.Duration(0); ; {
		at += time.Duration(200_000+rng.IntN(1_300_000)) * time.Microsecond
		if at >= simFaultSpan {
			break
		}
		e := simEvent{At: at, Node: node(), Rand: rng.Uint64()}
		e.Peer = (e.Node + 1 + replication.NodeID(rng.IntN(simNodes-1))) % simNodes
		switch roll := rng.IntN(100); {
		case roll < 15:
			// A second node down (a majority of the replicas, maybe)
			// only now and then.
			if down[e.Node] || len(down) >= 2 || (len(down) == 1 && rng.IntN(4) != 0) {
				continue
			}
			e.Kind, down[e.Node] = evCrash, true
		case roll < 30:
			if len(down) == 0 {
				continue
			}
			for id := range simNodes {
				if down[replication.NodeID(id)] {
					e.Node = replication.NodeID(id)
				}
			}
			e.Kind = evRestart
			delete(down, e.Node)
		case roll < 40:
			e.Kind = evIsolate
		case roll < 50:
			e.Kind = evCutOne
		case roll < 62:
			e.Kind = evHeal
		case roll < 70:
			e.Kind = evLossy
		case roll < 78:
			e.Kind = evCalm
		case roll < 84:
			if !prof.moves {
				continue
			}
			e.Kind = evMove
		case roll < 88:
			e.Kind = evTransfer
		case roll < 92:
			e.Kind = evDelete
		default:
			if !prof.storage || len(down) == 0 {
				continue
			}
			// Storage faults only while the node is down, on one node
			// of the run (a minority): the first one damaged.
			for id := range simNodes {
				if down[replication.NodeID(id)] {
					e.Node = replication.NodeID(id)
				}
			}
			if damaged, ok := damagedNode(); ok && damaged != e.Node {
				continue
			}
			damaged[e.Node] = true
			e.Kind = evFlip
			if rng.IntN(2) == 0 {
				e.Kind = evTruncate
			}
		}
		s.Events = append(s.Events, e)
		// With storage faults on, a crash is often followed by damage to
		// the stopped node's files (if it is the run's damaged node).
		if e.Kind == evCrash && prof.storage && rng.IntN(2) == 0 {
			if d, ok := damagedNode(); !ok || d == e.Node {
				damaged[e.Node] = true
				f := simEvent{At: e.At + time.Duration(1+rng.IntN(100_000))*time.Microsecond, Kind: evFlip, Node: e.Node, Peer: e.Peer, Rand: rng.Uint64()}
				if rng.IntN(2) == 0 {
					f.Kind = evTruncate
				}
				s.Events = append(s.Events, f)
			}
		}
	}
	for range simClients {
		var ops []simOp
		for at := time.Duration(0); ; {
			// Microsecond resolution: no two clients (and no tick)
			// at one instant.
			at += time.Duration(50_000+rng.IntN(600_000)) * time.Microsecond
			if at >= simFaultSpan {
				break
			}
			ops = append(ops, simOp{At: at, Msgs: 1 + rng.IntN(5)})
		}
		s.Clients = append(s.Clients, ops)
	}
	return s
}

// hash is a digest of the schedule (the part of a run a seed fixes).
func (s simSchedule) hash() uint64 {
	h := fnv.New64a()
	for _, e := range s.Events {
		fmt.Fprintf(h, "%d %s %d %d %d;", e.At, e.Kind, e.Node, e.Peer, e.Rand)
	}
	for i, ops := range s.Clients {
		for _, o := range ops {
			fmt.Fprintf(h, "c%d %d %d;", i, o.At, o.Msgs)
		}
	}
	return h.Sum64()
}

// simTrace is the event trace of one run: what the driver did and what
// the clients saw, each line stamped with the virtual time since start.
type simTrace struct {
	start time.Time
	// live, when set, also receives every line as it is added (-sim.live:
	// a run that panics still shows its trace).
	live  func(string)
	mu    sync.Mutex // guards lines
	lines []string
}

func newSimTrace() *simTrace { return &simTrace{start: time.Now()} }

func (tr *simTrace) add(format string, args ...any) {
	line := fmt.Sprintf("%9.3fs ", time.Since(tr.start).Seconds()) + fmt.Sprintf(format, args...)
	tr.mu.Lock()
	tr.lines = append(tr.lines, line)
	tr.mu.Unlock()
	if tr.live != nil {
		tr.live(line)
	}
}

func (tr *simTrace) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.lines, "\n")
}

// hash is a digest of the trace lines sorted (by virtual time, then
// text): lines added at one virtual instant by different goroutines
// (the acknowledgements of one commit) come in no fixed order.
func (tr *simTrace) hash() uint64 {
	tr.mu.Lock()
	lines := slices.Clone(tr.lines)
	tr.mu.Unlock()
	slices.Sort(lines) // the stamp is fixed-width: time order first
	h := fnv.New64a()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return h.Sum64()
}

// sortedKinds lists m's keys in order.
func sortedKinds(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
