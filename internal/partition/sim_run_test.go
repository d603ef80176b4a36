package partition

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// simWrite is one client send and what the client learnt of it.
type simWrite struct {
	client   int
	request  uint64
	payloads []string
	// acked: a status 0 reply; base is the acknowledged base offset, or
	// -1 when the reply was the empty success of a retried send that had
	// already committed.
	acked bool
	base  int64
	// tries is the number of attempts; last the last failure status.
	tries int
	last  string
}

// simRun is the state of one run.
type simRun struct {
	t     *testing.T
	seed  uint64
	sched simSchedule
	c     *simCluster
	tr    *simTrace

	mu     sync.Mutex // guards writes, leaders, anomalies
	writes []*simWrite
	// leaders is the leader seen in each term (no two leaders in one term).
	leaders   map[uint64]replication.NodeID
	anomalies []string
	// applied counts the schedule's events that took effect, by kind.
	applied map[string]int

	// seen is the offset of every message the leader held before a
	// segment deletion (so the checker knows a deleted one from a lost
	// one).
	seen map[string]uint64
	// observed is every message a replica served during the run, by
	// offset, and who served it first: an offset never changes its
	// message (applied means committed).
	observed map[uint64]observedMsg

	// crashLeader (-sim.crashleader) makes every other crash stop the
	// leader of the moment, and the restarts and damage that follow
	// apply to the nodes actually down (retarget).
	crashLeader bool
	// damagedNode is the node whose files were damaged (crashLeader).
	damagedNode   replication.NodeID
	damagedChosen bool

	// moving is held while a replica move runs (moves).
	moving sync.Mutex
	moves  sync.WaitGroup
}

func (r *simRun) anomaly(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.anomalies, msg) {
		return // seen again: reported once
	}
	r.tr.add("ANOMALY %s", msg)
	r.anomalies = append(r.anomalies, msg)
}

// simPayload names message i of a client's request: unique in a run.
func simPayload(seed uint64, client int, request uint64, i int) string {
	return fmt.Sprintf("s%d/c%d/r%d/m%d", seed, client, request, i)
}

// simSendBody is a SEND_MESSAGES body to partition 0 of simRef.
func simSendBody(payloads []string, client int, request uint64) ([]byte, error) {
	var b wire.BatchBuilder
	b.Reset(nil)
	for i, p := range payloads {
		id := wire.Uint128{Hi: uint64(client + 1), Lo: request<<8 | uint64(i+1)}
		if err := b.Add(id, 10, []byte(p), nil); err != nil {
			return nil, fmt.Errorf("add message: %w", err)
		}
	}
	batch, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("finish batch: %w", err)
	}
	s := wire.SendMessages{StreamID: wire.NumericID(simRef.StreamID), TopicID: wire.NumericID(simRef.TopicID),
		Partitioning: wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 0}}
	s.SetBatch(batch)
	return s.AppendTo(nil), nil
}

// simOpDeadline bounds the retries of one send (virtual time).
const simOpDeadline = 15 * time.Second

// client runs client i's sends in order, each retried with the same
// request number (so the duplicate window makes it exactly once) on
// whichever node leads, until acknowledged or simOpDeadline passed.
func (r *simRun) client(i int, ops []simOp) {
	clientID := wire.Uint128{Hi: 0x5151, Lo: uint64(i + 1)}
	for n, op := range ops {
		// Behind schedule (the previous send took long), a send still
		// waits a client-specific moment: clients answered by one
		// commit must not send again at one virtual instant, where
		// their order would be the scheduler's choice.
		time.Sleep(max(op.At-time.Since(r.tr.start), time.Duration(i+1)*173*time.Microsecond))
		w := &simWrite{client: i, request: uint64(n + 1), base: -1}
		for m := range op.Msgs {
			w.payloads = append(w.payloads, simPayload(r.seed, i, w.request, m))
		}
		r.mu.Lock()
		r.writes = append(r.writes, w)
		r.mu.Unlock()
		body, err := simSendBody(w.payloads, i, w.request)
		if err != nil {
			r.anomaly("client %d: build send: %v", i, err)
			return
		}
		deadline := time.Now().Add(simOpDeadline)
		for time.Now().Before(deadline) {
			lead, ok := r.c.leader()
			p, _, up := r.c.running(lead)
			if !ok || !up {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			w.tries++
			a, err := runExchange(p.send, wire.OpSendMessages, clientID, w.request, body)
			switch {
			case err != nil:
				w.last = err.Error()
			case a.status != 0:
				w.last = fmt.Sprint("status ", a.status)
			case len(a.body) == 4:
				w.acked = true
			case len(a.body) == 24:
				w.acked, w.base = true, int64(binary.LittleEndian.Uint64(a.body[16:]))
			default:
				w.last = fmt.Sprintf("reply body of %d bytes", len(a.body))
			}
			if w.acked {
				r.tr.add("c%d r%d acked via n%d base %d (%d msgs, try %d)", i, w.request, lead, w.base, len(w.payloads), w.tries)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !w.acked {
			r.tr.add("c%d r%d not acknowledged after %d tries: %s", i, w.request, w.tries, w.last)
		}
	}
}

// elected records an election won (from the nodes' raft logs): two
// nodes elected in one term is an anomaly (raft's election safety).
func (r *simRun) elected(id replication.NodeID, term uint64) {
	r.mu.Lock()
	prev, seen := r.leaders[term]
	if !seen {
		r.leaders[term] = id
	}
	r.mu.Unlock()
	if seen && prev != id {
		r.anomaly("two leaders in term %d: n%d and n%d", term, prev, id)
	} else if !seen {
		r.tr.add("n%d elected in term %d", id, term)
	}
}

// watchLeaders records, every tick until stop closes, the leader each
// running node reports and its term: two nodes leading one term is an
// anomaly (raft's election safety).
func (r *simRun) watchLeaders(stop <-chan struct{}) {
	g := r.c.group()
	for {
		select {
		case <-stop:
			return
		case <-time.After(simTiming.Tick):
		}
		for _, id := range r.c.roster {
			_, h, ok := r.c.running(id)
			if !ok {
				continue
			}
			v, ok := h.Status(g)
			if !ok || v.Role != replication.RoleLeader {
				continue
			}
			r.mu.Lock()
			prev, seen := r.leaders[v.Term]
			if !seen {
				r.leaders[v.Term] = id
			}
			r.mu.Unlock()
			if seen && prev != id {
				r.anomaly("two leaders in term %d: n%d and n%d", v.Term, prev, id)
			} else if !seen {
				r.tr.add("n%d leads term %d", id, v.Term)
			}
		}
	}
}

// apply carries out one scheduled event.
func (r *simRun) apply(e simEvent) {
	c := r.c
	did := true
	var note string
	switch e.Kind {
	case evCrash:
		if r.crashLeader {
			e = r.retarget(e)
		}
		if err := c.stop(e.Node); err != nil {
			note = fmt.Sprint("stop: ", err)
		}
	case evRestart:
		if r.crashLeader {
			e = r.retarget(e)
		}
		if err := c.start(e.Node); err != nil {
			r.anomaly("restart n%d: %v", e.Node, err)
		}
	case evIsolate:
		for _, id := range c.roster {
			if id != e.Node {
				c.net.setCut(e.Node, id, true)
				c.net.setCut(id, e.Node, true)
			}
		}
	case evCutOne:
		c.net.setCut(e.Node, e.Peer, true)
	case evHeal:
		c.net.mu.Lock()
		clear(c.net.cut)
		c.net.mu.Unlock()
	case evLossy:
		c.net.setFaults(0.05, 0.02, 30*time.Millisecond)
	case evCalm:
		c.net.setFaults(0, 0, time.Millisecond)
	case evMove:
		// One move at a time, beside the other events (a move waits
		// for catch-up and elections for seconds, as the broker's
		// mover does while faults go on).
		if !r.moving.TryLock() {
			did, note = false, "skipped: a move is running"
			break
		}
		did, note = false, "started"
		r.moves.Go(func() {
			defer r.moving.Unlock()
			ok, note := r.move(e)
			if ok {
				r.mu.Lock()
				r.applied[e.Kind]++
				r.mu.Unlock()
			}
			r.tr.add("event %s %s", e, note)
			r.traceViews()
		})
	case evTransfer:
		did, note = r.transfer(e)
	case evDelete:
		did, note = r.deleteSegments(uint32(1 + e.Rand%4))
	case evFlip, evTruncate:
		if r.crashLeader {
			e = r.retarget(e)
		}
		note = r.damage(e)
		did = !strings.HasPrefix(note, "skipped")
	}
	if did {
		r.mu.Lock()
		r.applied[e.Kind]++
		r.mu.Unlock()
	}
	r.tr.add("event %s %s", e, note)
	r.observe()
}

// observedMsg is what a replica served at one offset.
type observedMsg struct {
	payload string
	digest  uint64
	node    replication.NodeID
	at      time.Duration
}

// observe polls every healthy running replica and checks what it serves
// against what any replica served before at the same offsets.
func (r *simRun) observe() {
	for _, id := range r.c.roster {
		if r.c.healthy(id) != "" {
			continue
		}
		p, _, ok := r.c.running(id)
		if !ok {
			continue
		}
		msgs, err := pollReplica(p)
		if err != nil {
			continue // stopped meanwhile
		}
		now := time.Since(r.tr.start)
		r.mu.Lock()
		var bad []string
		for _, m := range msgs {
			prev, ok := r.observed[m.offset]
			if !ok {
				r.observed[m.offset] = observedMsg{payload: m.payload, digest: m.digest, node: id, at: now}
				continue
			}
			if (prev.payload != m.payload || prev.digest != m.digest) && len(bad) == 0 {
				bad = append(bad, fmt.Sprintf("offset %d: n%d serves %q (digest %016x), n%d served %q (digest %016x) at %.3fs",
					m.offset, id, m.payload, m.digest, prev.node, prev.payload, prev.digest, prev.at.Seconds()))
			}
		}
		r.mu.Unlock()
		for _, b := range bad {
			r.anomaly("served data changed: %s", b)
		}
	}
}

// simResult is what a run reports.
type simResult struct {
	schedHash, outcomeHash, stateHash, traceHash uint64
	acked, unacked, messages                     int
	applied                                      map[string]int
	net                                          netStats
	anomalies                                    []string
	unhealthy                                    []string
	trace                                        string
}

// run drives the schedule, heals everything, waits for the cluster to
// converge and checks it.
func (r *simRun) run() simResult {
	c := r.c
	for _, id := range c.roster {
		if err := c.start(id); err != nil {
			r.t.Fatal(err)
		}
		staggerStart(id)
	}
	if _, ok := c.awaitLeader(10 * time.Second); !ok {
		r.t.Fatal("no first leader")
	}
	live := r.tr.live
	r.tr = newSimTrace()
	r.tr.live = live
	c.trace = r.tr
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.watchLeaders(stop) })
	var clients sync.WaitGroup
	for i, ops := range r.sched.Clients {
		clients.Go(func() { r.client(i, ops) })
	}
	for _, e := range r.sched.Events {
		if d := e.At - time.Since(r.tr.start); d > 0 {
			time.Sleep(d)
		}
		r.apply(e)
	}
	if d := simFaultSpan - time.Since(r.tr.start); d > 0 {
		time.Sleep(d)
	}
	r.moves.Wait()
	// Heal: every link, every node.
	c.net.healAll()
	for _, id := range c.roster {
		if err := c.start(id); err != nil {
			r.anomaly("restart n%d after the faults: %v", id, err)
		}
		staggerStart(id)
	}
	r.tr.add("healed: every link restored, every node running")
	clients.Wait()
	res := r.check()
	close(stop)
	wg.Wait()
	r.mu.Lock()
	res.anomalies = slices.Clone(r.anomalies)
	res.applied = r.applied
	r.mu.Unlock()
	res.net = c.net.snapshot()
	res.schedHash = r.sched.hash()
	res.traceHash = r.tr.hash()
	res.trace = r.tr.String()
	return res
}

// ctxFor is a context bounded by d.
func ctxFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// traceViews adds every running node's view of the group to the trace.
func (r *simRun) traceViews() {
	for _, id := range r.c.roster {
		if _, h, ok := r.c.running(id); ok {
			if v, ok := h.Status(r.c.group()); ok {
				r.tr.add("n%d: %s term %d commit %d applied %d voters %v learners %v joint %v",
					id, v.Role, v.Term, v.Commit, v.Applied, v.Voters, v.Learners, v.Joint)
			} else {
				r.tr.add("n%d: no group", id)
			}
		}
	}
}

// staggerStart waits a node-specific fraction of a tick after node id
// started, so hosts started together do not tick at the same virtual
// instants: goroutines woken at one instant run in no fixed order, which
// is the main source of differences between runs of one seed.
func staggerStart(id replication.NodeID) {
	time.Sleep(time.Duration(id+1) * 1237 * time.Microsecond)
}

// retarget adapts a crash, restart or damage event of the schedule to
// -sim.crashleader: a crash whose e.Rand is even stops the leader (a
// third node is never stopped), a restart starts a node that is down,
// and damage goes to a stopped node, the same one all run.
func (r *simRun) retarget(e simEvent) simEvent {
	c := r.c
	var down []replication.NodeID
	for _, id := range c.roster {
		if _, _, up := c.running(id); !up {
			down = append(down, id)
		}
	}
	switch e.Kind {
	case evCrash:
		if lead, ok := c.leader(); ok && e.Rand%2 == 0 {
			e.Node = lead
		}
		if len(down) >= 2 && !slices.Contains(down, e.Node) {
			e.Node = down[0] // already down: no third
		}
	case evRestart:
		if len(down) > 0 && !slices.Contains(down, e.Node) {
			e.Node = down[e.Rand%uint64(len(down))]
		}
	default:
		if r.damagedChosen {
			e.Node = r.damagedNode
		} else if len(down) > 0 {
			e.Node = down[e.Rand%uint64(len(down))]
			r.damagedNode, r.damagedChosen = e.Node, true
		}
	}
	return e
}
