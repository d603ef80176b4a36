package replication

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Leadership announcements (the sending side of directory.go). Once per
// heartbeat interval the loop recomputes the claims of the groups whose
// leadership may have changed (a role change, a removal, a quiescence:
// dirDirty) and of the leaders still ticking (their followers' progress
// moves), compares them with what it announced last, and sends the
// difference to every live peer that has its full table; a peer without
// it (new, back from the dead, its connection lost, an announcement to it
// lost, or it asked) gets the full table instead. Quiesced leaders cost
// nothing: their claim does not change while they are quiet, and an idle
// cluster announces nothing.
//
// Envelope body (transport.KindDirectory): u8 flags (full: forget every
// earlier claim of the sender first; want table: send me your full
// table) | uvarint claims | per claim uvarint group, uvarint term,
// uvarint count, count × uvarint caught-up replica | uvarint drops | per
// drop uvarint group. The claims' leader is the sender.

// CaughtUpLag is how far (in log entries) a member's log may trail the
// leader's and still count as caught up in an announcement.
const CaughtUpLag = 64

// maxClaimsPerEnvelope bounds the claims of one announcement envelope (a
// full table of many groups travels in several).
const maxClaimsPerEnvelope = 4096

// Announcement flags.
const (
	annFull      byte = 1 << 0
	annWantTable byte = 1 << 1
)

// claim is one group's leadership as announced.
type claim struct {
	group GroupID
	l     Leadership
}

// announcement is a decoded envelope.
type announcement struct {
	full, wantTable bool
	claims          []claim
	drops           []GroupID
}

// announcer is the loop's state of the announcements.
type announcer struct {
	// announced is what this host announced last, per group it leads.
	announced map[GroupID]Leadership
	// dirty are the groups whose claim may have changed.
	dirty map[GroupID]struct{}
	// tabled are the peers that got the full table and every change
	// since.
	tabled map[NodeID]bool
}

func newAnnouncer() announcer {
	return announcer{announced: map[GroupID]Leadership{}, dirty: map[GroupID]struct{}{}, tabled: map[NodeID]bool{}}
}

// dirDirty marks g's claim for the next announcement. Runs on the loop.
func (h *Host) dirDirty(g GroupID) { h.ann.dirty[g] = struct{}{} }

// announce runs once per heartbeat interval on the loop.
func (h *Host) announce() {
	a := &h.ann
	var changes []claim
	var drops []GroupID
	for id := range a.dirty {
		h.reclaim(id, h.groups[id], &changes, &drops)
	}
	for id, g := range h.leading {
		if _, done := a.dirty[id]; !done && !g.quiesced {
			h.reclaim(id, g, &changes, &drops)
		}
	}
	clear(a.dirty)
	h.dir.setOwn(changes, drops)
	for p := range h.dir.takeResync() {
		delete(a.tabled, p)
	}
	var delta, table [][]byte
	for p := range h.peers {
		if !h.alive(p) {
			// Back from the dead, it gets the table (peerUp).
			delete(a.tabled, p)
			continue
		}
		if !a.tabled[p] {
			if table == nil {
				table = encodeAnnouncements(annFull, h.ownClaims(), nil)
			}
			h.sendAnnouncements(p, table)
			a.tabled[p] = true
			continue
		}
		if len(changes)+len(drops) == 0 {
			continue
		}
		if delta == nil {
			delta = encodeAnnouncements(0, changes, drops)
		}
		h.sendAnnouncements(p, delta)
	}
}

// reclaim recomputes the claim of group id (g nil: removed) into changes
// or drops, and records it as announced.
func (h *Host) reclaim(id GroupID, g *group, changes *[]claim, drops *[]GroupID) {
	a := &h.ann
	cur, had := a.announced[id]
	if g == nil || g.state != raft.StateLeader {
		if had {
			delete(a.announced, id)
			*drops = append(*drops, id)
		}
		return
	}
	l := h.leadership(g)
	if had && cur.equal(l) {
		return
	}
	a.announced[id] = l
	*changes = append(*changes, claim{group: id, l: l})
}

// leadership is this host's claim on g, which it leads: its term and the
// members whose log trails the leader's by at most CaughtUpLag entries,
// are being replicated to, and are alive.
func (h *Host) leadership(g *group) Leadership {
	self := raftID(h.cfg.Self)
	type member struct {
		id, match uint64
		ok        bool
	}
	var buf [8]member
	ms := buf[:0]
	var last uint64
	g.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		ms = append(ms, member{id: id, match: pr.Match, ok: pr.State == tracker.StateReplicate})
		if id == self {
			last = pr.Match
		}
	})
	cu := make([]NodeID, 0, len(ms))
	for _, m := range ms {
		if m.id == self || m.match >= last || (m.ok && m.match+CaughtUpLag >= last && h.alive(nodeID(m.id))) {
			cu = append(cu, nodeID(m.id))
		}
	}
	slices.Sort(cu)
	return Leadership{Leader: h.cfg.Self, Term: g.rn.BasicStatus().GetTerm(), CaughtUp: cu}
}

// ownClaims lists everything this host announced, by group.
func (h *Host) ownClaims() []claim {
	out := make([]claim, 0, len(h.ann.announced))
	for g, l := range h.ann.announced {
		out = append(out, claim{group: g, l: l})
	}
	slices.SortFunc(out, func(a, b claim) int {
		switch {
		case a.group < b.group:
			return -1
		case a.group > b.group:
			return 1
		}
		return 0
	})
	return out
}

// sendAnnouncements queues the envelopes of one announcement for peer p.
func (h *Host) sendAnnouncements(p NodeID, bodies [][]byte) {
	for _, b := range bodies {
		h.enqueue(p, transport.Envelope{Kind: transport.KindDirectory, Data: b})
	}
	h.stats.announcements.Add(uint64(len(bodies)))
}

// requestTable asks peer p for its full table (a malformed announcement
// came from it, or this host had declared it dead and forgot its claims).
// Safe for any goroutine.
func (h *Host) requestTable(p NodeID) {
	h.cfg.Network.Send(p, []transport.Envelope{{Kind: transport.KindDirectory, Data: encodeAnnouncements(annWantTable, nil, nil)[0]}})
}

// encodeAnnouncements encodes claims and drops in envelopes of at most
// maxClaimsPerEnvelope claims (and as many drops); flags go on the first.
func encodeAnnouncements(flags byte, claims []claim, drops []GroupID) [][]byte {
	var out [][]byte
	for first := true; first || len(claims) > 0 || len(drops) > 0; first = false {
		nc, nd := min(len(claims), maxClaimsPerEnvelope), min(len(drops), maxClaimsPerEnvelope)
		f := byte(0)
		if first {
			f = flags
		}
		out = append(out, appendAnnouncement(nil, f, claims[:nc], drops[:nd]))
		claims, drops = claims[nc:], drops[nd:]
	}
	return out
}

func appendAnnouncement(dst []byte, flags byte, claims []claim, drops []GroupID) []byte {
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(claims)))
	for _, c := range claims {
		dst = binary.AppendUvarint(dst, uint64(c.group))
		dst = binary.AppendUvarint(dst, c.l.Term)
		dst = binary.AppendUvarint(dst, uint64(len(c.l.CaughtUp)))
		for _, n := range c.l.CaughtUp {
			dst = binary.AppendUvarint(dst, uint64(n))
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(drops)))
	for _, g := range drops {
		dst = binary.AppendUvarint(dst, uint64(g))
	}
	return dst
}

var errBadAnnouncement = errors.New("malformed announcement")

// decodeAnnouncement decodes one envelope body.
func decodeAnnouncement(b []byte) (announcement, error) {
	var a announcement
	if len(b) < 1 {
		return a, errBadAnnouncement
	}
	a.full, a.wantTable = b[0]&annFull != 0, b[0]&annWantTable != 0
	b = b[1:]
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errBadAnnouncement
		}
		b = b[n:]
		return v, nil
	}
	n, err := next()
	if err != nil || n > uint64(len(b)) {
		return a, errBadAnnouncement
	}
	a.claims = make([]claim, 0, n)
	for range n {
		g, err1 := next()
		term, err2 := next()
		k, err3 := next()
		if err := errors.Join(err1, err2, err3); err != nil || k > uint64(len(b)) {
			return a, errBadAnnouncement
		}
		c := claim{group: GroupID(g), l: Leadership{Term: term, CaughtUp: make([]NodeID, 0, k)}}
		for range k {
			m, err := next()
			if err != nil {
				return a, errBadAnnouncement
			}
			c.l.CaughtUp = append(c.l.CaughtUp, NodeID(m))
		}
		a.claims = append(a.claims, c)
	}
	n, err = next()
	if err != nil || n > uint64(len(b)) {
		return a, errBadAnnouncement
	}
	a.drops = make([]GroupID, 0, n)
	for range n {
		g, err := next()
		if err != nil {
			return a, errBadAnnouncement
		}
		a.drops = append(a.drops, GroupID(g))
	}
	if len(b) != 0 {
		return a, fmt.Errorf("%w: %d trailing bytes", errBadAnnouncement, len(b))
	}
	return a, nil
}
