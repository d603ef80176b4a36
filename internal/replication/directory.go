package replication

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// The leader directory: every host tells its peers which groups it leads
// (announce.go), so any host can answer who leads a group it does not
// hold a replica of (LeaderOf, Directory). A claim is (group, term,
// caught-up members); a claim with a higher term replaces a lower one,
// and a host's claims go when it stops leading, sends a full table
// without them, or is declared dead.

// Leadership is what the directory knows about one group's leader.
type Leadership struct {
	Leader NodeID
	Term   uint64
	// CaughtUp are the members whose log matched the leader's within
	// CaughtUpLag entries at its last announcement (the leader
	// included), ascending; nil when unknown (the leader is known only
	// from this node's own replica of the group).
	CaughtUp []NodeID
}

func (l Leadership) equal(o Leadership) bool {
	return l.Leader == o.Leader && l.Term == o.Term && slices.Equal(l.CaughtUp, o.CaughtUp)
}

// directory holds the claims received from peers and the ones this host
// announced. Safe for concurrent use; mu is a leaf.
type directory struct {
	mu sync.RWMutex
	// remote are the peers' claims, own this host's (as last announced).
	remote, own map[GroupID]Leadership
	// changed is closed at the next change, when somebody waits.
	changed chan struct{}
	// resync are the peers that get a full table with the next
	// announcement (a lost announcement, a lost connection, a request).
	resync map[NodeID]bool
}

func newDirectory() *directory {
	return &directory{remote: map[GroupID]Leadership{}, own: map[GroupID]Leadership{}, resync: map[NodeID]bool{}}
}

// notifyLocked wakes the waiters. Caller holds mu for writing.
func (d *directory) notifyLocked() {
	if d.changed != nil {
		close(d.changed)
		d.changed = nil
	}
}

// wait returns the channel closed at the next change.
func (d *directory) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed == nil {
		d.changed = make(chan struct{})
	}
	return d.changed
}

// lookup returns group g's leader as a peer claims it. (This host's own
// claims are not consulted: for a group it leads, its own view says so.)
func (d *directory) lookup(g GroupID) (Leadership, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	l, ok := d.remote[g]
	return l, ok
}

// claim records from's claim to lead g (a higher term wins; the same
// term may update the caught-up members). Caller holds mu.
func (d *directory) claimLocked(from NodeID, g GroupID, l Leadership) bool {
	cur, ok := d.remote[g]
	if ok && (l.Term < cur.Term || l.Term == cur.Term && cur.Leader != from || cur.equal(l)) {
		return false
	}
	d.remote[g] = l
	return true
}

// dropLocked forgets from's claim on g. Caller holds mu.
func (d *directory) dropLocked(from NodeID, g GroupID) bool {
	if cur, ok := d.remote[g]; ok && cur.Leader == from {
		delete(d.remote, g)
		return true
	}
	return false
}

// forgetLocked drops every claim of from. Caller holds mu.
func (d *directory) forgetLocked(from NodeID) bool {
	n := len(d.remote)
	maps.DeleteFunc(d.remote, func(_ GroupID, l Leadership) bool { return l.Leader == from })
	return len(d.remote) != n
}

// forget drops every claim of a peer declared dead.
func (d *directory) forget(peer NodeID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.forgetLocked(peer) {
		d.notifyLocked()
	}
}

// receiveAnnouncement applies an announcement from peer from
// (announce.go has the layout). A malformed one is ignored and a full
// table asked for. It runs on a transport reader and does not block.
func (h *Host) receiveAnnouncement(from NodeID, data []byte) {
	a, err := decodeAnnouncement(data)
	if err != nil {
		h.log.Warn("malformed leadership announcement", "peer", uint64(from), "err", err)
		h.requestTable(from)
		return
	}
	d := h.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	changed := false
	if a.full {
		changed = d.forgetLocked(from)
	}
	for _, c := range a.claims {
		c.l.Leader = from
		changed = d.claimLocked(from, c.group, c.l) || changed
	}
	for _, g := range a.drops {
		changed = d.dropLocked(from, g) || changed
	}
	if a.wantTable {
		d.resync[from] = true
	}
	if changed {
		d.notifyLocked()
	}
}

// markResync makes the next announcement to peer a full table.
func (d *directory) markResync(peer NodeID) {
	d.mu.Lock()
	d.resync[peer] = true
	d.mu.Unlock()
}

// takeResync returns and clears the peers that want a full table.
func (d *directory) takeResync() map[NodeID]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.resync) == 0 {
		return nil
	}
	r := d.resync
	d.resync = map[NodeID]bool{}
	return r
}

// setOwn publishes this host's own claims after an announcement round.
func (d *directory) setOwn(changes []claim, drops []GroupID) {
	if len(changes) == 0 && len(drops) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range changes {
		d.own[c.group] = c.l
	}
	for _, g := range drops {
		delete(d.own, g)
	}
	d.notifyLocked()
}

// LeaderOf returns the leader of group g: this node's own view when it
// holds a replica of g that knows a leader, else the peer that announced
// leading g (the directory covers groups this node does not hold).
func (h *Host) LeaderOf(g GroupID) (NodeID, bool) {
	if v, ok := h.Status(g); ok && v.HasLeader {
		return v.Leader, true
	}
	l, ok := h.dir.lookup(g)
	return l.Leader, ok
}

// Directory returns, for every group whose leader this node knows, its
// leader, term and caught-up members: the peers' announcements and this
// node's own, with this node's view of the groups it holds taking
// precedence (the caught-up members are then those the leader announced
// for that leader and term, or nil).
func (h *Host) Directory() map[GroupID]Leadership {
	d := h.dir
	d.mu.RLock()
	out := make(map[GroupID]Leadership, len(d.remote)+len(d.own))
	maps.Copy(out, d.remote)
	for g, o := range d.own {
		if r, ok := out[g]; !ok || o.Term >= r.Term {
			out[g] = o
		}
	}
	d.mu.RUnlock()
	h.viewMu.RLock()
	defer h.viewMu.RUnlock()
	for g, v := range h.views {
		if !v.HasLeader {
			continue
		}
		if cur, ok := out[g]; ok && cur.Leader == v.Leader && cur.Term == v.Term {
			continue
		}
		out[g] = Leadership{Leader: v.Leader, Term: v.Term}
	}
	return out
}

// awaitPoll bounds a wait of AwaitLeader between checks (a group this
// node holds is watched through its view, others through the directory;
// the poll covers a group added while waiting).
const awaitPoll = 50 * time.Millisecond

// AwaitLeader returns the leader of group g (LeaderOf) once one is known,
// waiting for it until ctx ends or the host stops.
func (h *Host) AwaitLeader(ctx context.Context, g GroupID) (NodeID, error) {
	t := time.NewTimer(awaitPoll)
	defer t.Stop()
	for {
		dch := h.dir.wait()
		if l, ok := h.LeaderOf(g); ok {
			return l, nil
		}
		var vch chan struct{}
		if _, held := h.Status(g); held {
			_, _, vch = h.viewWait(g)
		}
		t.Reset(awaitPoll)
		select {
		case <-dch:
		case <-vch:
		case <-t.C:
		case <-ctx.Done():
			return 0, fmt.Errorf("leader of group %d: %w", g, ctx.Err())
		case <-h.done:
			return 0, ErrStopped
		}
	}
}
