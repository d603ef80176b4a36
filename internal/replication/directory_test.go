package replication

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

func TestAnnouncementCodec(t *testing.T) {
	var claims []claim
	for g := range GroupID(10_000) {
		claims = append(claims, claim{group: g<<24 | 3, l: Leadership{Term: uint64(g % 7), CaughtUp: []NodeID{0, NodeID(g % 5)}}})
	}
	drops := []GroupID{1, 1 << 40}
	bodies := encodeAnnouncements(annFull, claims, drops)
	if len(bodies) != 3 {
		t.Fatalf("10,000 claims in %d envelopes, want 3", len(bodies))
	}
	var got []claim
	var gotDrops []GroupID
	for i, b := range bodies {
		a, err := decodeAnnouncement(b)
		if err != nil {
			t.Fatal(err)
		}
		if a.full != (i == 0) || a.wantTable {
			t.Fatalf("envelope %d: flags full=%v want=%v", i, a.full, a.wantTable)
		}
		got = append(got, a.claims...)
		gotDrops = append(gotDrops, a.drops...)
	}
	if len(got) != len(claims) || !slices.Equal(gotDrops, drops) {
		t.Fatalf("%d claims and drops %v", len(got), gotDrops)
	}
	for i := range claims {
		if got[i].group != claims[i].group || !got[i].l.equal(claims[i].l) {
			t.Fatalf("claim %d: %+v, want %+v", i, got[i], claims[i])
		}
	}
	size := 0
	for _, b := range bodies {
		size += len(b)
	}
	t.Logf("full table of 10,000 groups: %d bytes", size)
	if size > 150_000 {
		t.Fatalf("a full table of 10,000 groups takes %d bytes", size)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 5, 1}, {0, 1, 1, 1, 9, 0, 0}, append(appendAnnouncement(nil, 0, nil, nil), 7)} {
		if _, err := decodeAnnouncement(bad); err == nil {
			t.Fatalf("% x must not decode", bad)
		}
	}
}

// TestDirectoryClaims: a higher term wins, a drop or a full table only
// removes the sender's own claims, a dead peer's claims go.
func TestDirectoryClaims(t *testing.T) {
	h, err := New(Config{Self: 0, Peers: []NodeID{0, 1, 2}, Timing: testTiming, Network: nopNetwork{}, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	send := func(from NodeID, flags byte, claims []claim, drops []GroupID) {
		for _, b := range encodeAnnouncements(flags, claims, drops) {
			h.receiveAnnouncement(from, b)
		}
	}
	leader := func(g GroupID) (NodeID, uint64, bool) {
		l, ok := h.dir.lookup(g)
		return l.Leader, l.Term, ok
	}
	send(1, annFull, []claim{{group: 10, l: Leadership{Term: 3, CaughtUp: []NodeID{1, 2}}}, {group: 11, l: Leadership{Term: 1}}}, nil)
	if l, term, ok := leader(10); !ok || l != 1 || term != 3 {
		t.Fatalf("group 10: %d@%d %v", l, term, ok)
	}
	send(2, 0, []claim{{group: 10, l: Leadership{Term: 2}}}, nil) // older term: ignored
	if l, _, _ := leader(10); l != 1 {
		t.Fatal("a lower term must not win")
	}
	send(2, 0, []claim{{group: 10, l: Leadership{Term: 4}}}, nil)
	if l, term, _ := leader(10); l != 2 || term != 4 {
		t.Fatal("a higher term must win")
	}
	send(1, 0, nil, []GroupID{10}) // 1 no longer leads 10: 2's claim stays
	if l, _, ok := leader(10); !ok || l != 2 {
		t.Fatal("a drop removes only the sender's claim")
	}
	send(1, annFull, []claim{{group: 12, l: Leadership{Term: 1}}}, nil) // 11 is gone from 1's table
	if _, _, ok := leader(11); ok {
		t.Fatal("a full table replaces the sender's earlier claims")
	}
	if l, _, ok := leader(12); !ok || l != 1 {
		t.Fatal("group 12 from the full table")
	}
	h.dir.forget(2)
	if _, _, ok := leader(10); ok {
		t.Fatal("a dead peer's claims go")
	}
	send(1, annWantTable, nil, nil)
	if r := h.dir.takeResync(); !r[1] {
		t.Fatal("a request for the table marks the peer")
	}
	if _, ok := h.LeaderOf(99); ok {
		t.Fatal("unknown group")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go func() {
		time.Sleep(20 * time.Millisecond)
		send(1, 0, []claim{{group: 99, l: Leadership{Term: 5}}}, nil)
	}()
	if l, err := h.AwaitLeader(ctx, 99); err != nil || l != 1 {
		t.Fatalf("AwaitLeader: %d %v", l, err)
	}
}

type nopNetwork struct{}

func (nopNetwork) Send(NodeID, []transport.Envelope) {}

// TestDirectoryOverTCP: three hosts; group 1 lives on nodes 0 and 1
// only. Node 2 learns its leader, then the new one after a transfer,
// with the caught-up members; a dead leader's claims go; an idle cluster
// announces nothing; a restarted node learns every leader from the full
// tables.
func TestDirectoryOverTCP(t *testing.T) {
	c := newTCPCluster(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const g GroupID = 1
	const others = 20 // groups on all three nodes
	for _, id := range []NodeID{1, 0} {
		n := c.nodes[id]
		if err := n.h.AddGroup(ctx, g, GroupOptions{Voters: []NodeID{0, 1}, Machine: n.sm.machine(g)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []NodeID{2, 1, 0} {
		n := c.nodes[id]
		for o := range GroupID(others) {
			if err := n.h.AddGroup(ctx, 100+o, GroupOptions{Voters: c.ids, Machine: n.sm.machine(100 + o)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h2 := c.nodes[2].h
	if _, held := h2.Status(g); held {
		t.Fatal("node 2 must not hold group 1")
	}
	first, err := h2.AwaitLeader(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	lead := c.nodes[first].h
	v, _ := lead.Status(g)
	if v.Role != RoleLeader {
		t.Fatalf("node 2 says %d leads group 1, which says %v", first, v.Role)
	}
	eventually(t, 10*time.Second, "both members caught up in node 2's directory", func() bool {
		l, ok := h2.Directory()[g]
		return ok && l.Leader == first && l.Term == v.Term && slices.Equal(l.CaughtUp, []NodeID{0, 1})
	})

	// A leader change: node 2 learns the new leader, at a higher term.
	next := 1 - first
	if err := lead.TransferLeadership(ctx, g, next); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "node 2 to learn the new leader", func() bool {
		l, ok := h2.LeaderOf(g)
		return ok && l == next
	})
	if l := h2.Directory()[g]; l.Term <= v.Term {
		t.Fatalf("term %d after the transfer, %d before", l.Term, v.Term)
	}
	// A group node 2 holds: its own view answers.
	for o := range GroupID(others) {
		want, _ := h2.Leader(100 + o)
		if got, ok := h2.LeaderOf(100 + o); !ok || got != want {
			t.Fatalf("group %d: LeaderOf %d, own view %d", 100+o, got, want)
		}
	}

	// Idle: once every group is quiet, nothing is announced.
	eventually(t, 20*time.Second, "every group quiesced", func() bool {
		for _, n := range c.nodes {
			if n.h.Stats().ActiveGroups != 0 {
				return false
			}
		}
		return true
	})
	before := announcements(c)
	time.Sleep(4 * testTiming.Tick * time.Duration(testTiming.HeartbeatTicks))
	if after := announcements(c); after != before {
		t.Fatalf("%d announcements while idle", after-before)
	}

	// Node 2 restarts: the full tables of the others tell it every leader
	// at once (its own groups' views come later, through raft).
	c.stop(2)
	n2 := c.restart(2)
	eventually(t, 10*time.Second, "the restarted node to learn group 1's leader", func() bool {
		l, ok := n2.h.LeaderOf(g)
		return ok && l == next
	})
	// The leader dies: its claims go once it is declared dead.
	c.stop(next)
	eventually(t, 10*time.Second, "the dead leader's claim to go", func() bool {
		_, ok := n2.h.LeaderOf(g)
		return !ok
	})
}

func announcements(c *tcpCluster) uint64 {
	var n uint64
	for _, node := range c.nodes {
		n += node.h.Stats().Announcements
	}
	return n
}
