package groups

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

const (
	propTimeout    = 10 * time.Second
	propClients    = 8
	propMaxPartIDs = 40
	propMaxParts   = 24
)

// groupMachine drives a Group and an identical twin through random
// operations; the twin proves the results do not depend on map iteration or
// any other hidden source of nondeterminism.
//
// logged is driven the way the metadata plane drives a group (JoinPending,
// NoteCommit, completions decided outside and applied with
// CompleteRevocation); it must reach exactly the ownership of g.
type groupMachine struct {
	g, twin, logged *Group
	now             time.Time
	gen             Generation
}

// settleLogged completes the revocations of m.logged that Settled reports,
// as the metadata plane does right after a join.
func (m *groupMachine) settleLogged(t *rapid.T) {
	for _, p := range m.logged.Settled() {
		if !m.logged.CompleteRevocation(p) {
			t.Fatalf("CompleteRevocation(%d) of a settled revocation refused", p)
		}
	}
}

func (m *groupMachine) clients() []ClientID {
	var out []ClientID
	for _, mi := range m.g.Members() {
		out = append(out, mi.Client)
	}
	return out
}

// expectGen checks that the generation grew by exactly delta.
func (m *groupMachine) expectGen(t *rapid.T, op string, delta Generation) {
	if got := m.g.Generation(); got != m.gen+delta {
		t.Fatalf("%s: generation %d -> %d, want +%d", op, m.gen, got, delta)
	}
	m.gen = m.g.Generation()
}

// expectFull checks the i % M layout after a full rebalance.
func (m *groupMachine) expectFull(t *rapid.T, op string) {
	var memberIDs []MemberID
	for _, mi := range m.g.Members() {
		memberIDs = append(memberIDs, mi.ID)
	}
	want := fullModel(memberIDs, m.g.Partitions())
	got := layout(m.g)
	if !maps.EqualFunc(want, got, func(a, b []PartitionID) bool { return slices.Equal(a, b) }) {
		t.Fatalf("%s: layout %v, want full rebalance %v", op, got, want)
	}
	if len(m.g.Revocations()) != 0 {
		t.Fatalf("%s: revocations left after a full rebalance", op)
	}
}

func drawClient(t *rapid.T) ClientID {
	return cid(uint64(rapid.IntRange(1, propClients).Draw(t, "client")))
}

func drawPartitions(t *rapid.T) []PartitionID {
	return rapid.SliceOfNDistinct(rapid.Custom(func(t *rapid.T) PartitionID {
		return PartitionID(rapid.IntRange(0, propMaxPartIDs).Draw(t, "id"))
	}), 0, propMaxParts, rapid.ID[PartitionID]).Draw(t, "partitions")
}

func (m *groupMachine) join(t *rapid.T) {
	c := drawClient(t)
	before := eventualSets(m.g)
	oldID, wasMember := m.g.MemberOf(c)
	var used []MemberID
	for _, mi := range m.g.Members() {
		used = append(used, mi.ID)
	}
	id, err := m.g.Join(c, m.now)
	id2, err2 := m.twin.Join(c, m.now)
	if err != nil || err2 != nil || id != id2 {
		t.Fatalf("Join: %d %v / twin %d %v", id, err, id2, err2)
	}
	if id3, err3 := m.logged.JoinPending(c, m.now); err3 != nil || id3 != id {
		t.Fatalf("JoinPending: %d %v, Join %d", id3, err3, id)
	}
	m.settleLogged(t)
	if wasMember {
		if id != oldID {
			t.Fatalf("re-join returned %d, member is %d", id, oldID)
		}
		m.expectGen(t, "re-join", 0)
		return
	}
	want := MemberID(0)
	for slices.Contains(used, want) {
		want++
	}
	if id != want {
		t.Fatalf("Join got member id %d, lowest unused is %d", id, want)
	}
	m.expectGen(t, "join", 1)
	// Cooperative: a member that held partitions before the join only
	// loses some; partitions only go to members that held nothing.
	after := eventualSets(m.g)
	for mid, set := range before {
		if len(set) == 0 {
			continue
		}
		for _, p := range after[mid] {
			if !slices.Contains(set, p) {
				t.Fatalf("join gave partition %d to member %d, which already held %v", p, mid, set)
			}
		}
	}
}

func (m *groupMachine) leave(t *rapid.T) {
	c := drawClient(t)
	_, wasMember := m.g.MemberOf(c)
	err := m.g.Leave(c)
	err2 := m.twin.Leave(c)
	_ = m.logged.Leave(c)
	if !errors.Is(err2, err) && err != err2 {
		t.Fatalf("Leave: %v / twin %v", err, err2)
	}
	if !wasMember {
		if !errors.Is(err, ErrMemberNotFound) {
			t.Fatalf("Leave of a non-member = %v", err)
		}
		m.expectGen(t, "failed leave", 0)
		return
	}
	if err != nil {
		t.Fatalf("Leave of a member = %v", err)
	}
	m.expectGen(t, "leave", 1)
	m.expectFull(t, "leave")
}

func (m *groupMachine) remove(t *rapid.T) {
	c := drawClient(t)
	_, wasMember := m.g.MemberOf(c)
	ok, ok2 := m.g.RemoveClient(c), m.twin.RemoveClient(c)
	m.logged.RemoveClient(c)
	if ok != wasMember || ok2 != ok {
		t.Fatalf("RemoveClient = %v / twin %v, member %v", ok, ok2, wasMember)
	}
	if !ok {
		m.expectGen(t, "remove of a non-member", 0)
		return
	}
	m.expectGen(t, "remove", 1)
	m.expectFull(t, "remove")
}

func (m *groupMachine) setPartitions(t *rapid.T) {
	ps := drawPartitions(t)
	if err := m.g.SetPartitions(ps); err != nil {
		t.Fatalf("SetPartitions: %v", err)
	}
	if err := m.twin.SetPartitions(ps); err != nil {
		t.Fatalf("twin SetPartitions: %v", err)
	}
	if err := m.logged.SetPartitions(ps); err != nil {
		t.Fatalf("logged SetPartitions: %v", err)
	}
	m.expectGen(t, "set partitions", 1)
	m.expectFull(t, "set partitions")
}

func (m *groupMachine) poll(t *rapid.T) {
	cs := m.clients()
	if len(cs) == 0 {
		t.Skip("no members")
	}
	c := rapid.SampledFrom(cs).Draw(t, "member")
	_, pollable, _ := m.g.Assignment(c)
	if len(pollable) == 0 {
		t.Skip("nothing to poll")
	}
	p := rapid.SampledFrom(pollable).Draw(t, "partition")
	off := uint64(rapid.IntRange(0, 20).Draw(t, "offset"))
	if err := m.g.RecordPoll(c, p, off); err != nil {
		t.Fatalf("RecordPoll of a pollable partition: %v", err)
	}
	if err := m.twin.RecordPoll(c, p, off); err != nil {
		t.Fatalf("twin RecordPoll: %v", err)
	}
	if err := m.logged.RecordPoll(c, p, off); err != nil {
		t.Fatalf("logged RecordPoll: %v", err)
	}
	m.expectGen(t, "poll", 0)
}

func (m *groupMachine) commit(t *rapid.T) {
	members := m.g.Members()
	if len(members) == 0 {
		t.Skip("no members")
	}
	mi := rapid.SampledFrom(members).Draw(t, "member")
	if len(mi.Partitions) == 0 {
		t.Skip("nothing owned")
	}
	p := rapid.SampledFrom(mi.Partitions).Draw(t, "partition")
	off := uint64(rapid.IntRange(0, 20).Draw(t, "offset"))
	revs := len(m.g.Revocations())
	if err := m.g.RecordCommit(mi.Client, p, off); err != nil {
		t.Fatalf("RecordCommit of an owned partition: %v", err)
	}
	if err := m.twin.RecordCommit(mi.Client, p, off); err != nil {
		t.Fatalf("twin RecordCommit: %v", err)
	}
	ready, err := m.logged.NoteCommit(mi.Client, p, off)
	if err != nil {
		t.Fatalf("logged NoteCommit: %v", err)
	}
	if ready && !m.logged.CompleteRevocation(p) {
		t.Fatalf("CompleteRevocation(%d) after a ready commit refused", p)
	}
	done := revs - len(m.g.Revocations())
	if done < 0 || done > 1 {
		t.Fatalf("commit changed the revocations from %d to %d", revs, len(m.g.Revocations()))
	}
	m.expectGen(t, "commit", Generation(done))
}

// probe calls the checks with arbitrary arguments: they must agree with the
// exported state and change nothing.
func (m *groupMachine) probe(t *rapid.T) {
	c := drawClient(t)
	p := PartitionID(rapid.IntRange(0, propMaxPartIDs+1).Draw(t, "partition"))
	before := m.g.AppendTo(nil)
	id, member := m.g.MemberOf(c)
	var owner, pending bool
	for _, mi := range m.g.Members() {
		if member && mi.ID == id {
			owner = slices.Contains(mi.Partitions, p)
		}
	}
	for _, r := range m.g.Revocations() {
		pending = pending || r.Partition == p
	}
	pollErr, commitErr := m.g.CanPoll(c, p), m.g.CanCommit(c, p)
	switch {
	case !member:
		if !errors.Is(pollErr, ErrMemberNotFound) || !errors.Is(commitErr, ErrMemberNotFound) {
			t.Fatalf("non-member: CanPoll %v, CanCommit %v", pollErr, commitErr)
		}
	case !owner:
		if !errors.Is(pollErr, ErrPartitionNotOwned) || !errors.Is(commitErr, ErrPartitionNotOwned) {
			t.Fatalf("not owned: CanPoll %v, CanCommit %v", pollErr, commitErr)
		}
	default:
		if commitErr != nil || (pollErr == nil) == pending {
			t.Fatalf("owned (pending %v): CanPoll %v, CanCommit %v", pending, pollErr, commitErr)
		}
	}
	if pollErr != nil && m.g.RecordPoll(c, p, 1) == nil {
		t.Fatal("RecordPoll accepted what CanPoll refused")
	}
	if commitErr != nil && m.g.RecordCommit(c, p, 1) == nil {
		t.Fatal("RecordCommit accepted what CanCommit refused")
	}
	if !slices.Equal(before, m.g.AppendTo(nil)) {
		t.Fatal("a refused call changed the state")
	}
}

func (m *groupMachine) advance(t *rapid.T) {
	d := time.Duration(rapid.Int64Range(0, int64(2*propTimeout)).Draw(t, "advance"))
	m.now = m.now.Add(d)
	n, n2 := m.g.ExpireRevocations(m.now), m.twin.ExpireRevocations(m.now)
	if n != n2 {
		t.Fatalf("ExpireRevocations = %d / twin %d", n, n2)
	}
	for _, r := range m.logged.Revocations() {
		if !m.now.Before(r.Since.Add(propTimeout)) && !m.logged.CompleteRevocation(r.Partition) {
			t.Fatalf("CompleteRevocation(%d) of an expired revocation refused", r.Partition)
		}
	}
	m.expectGen(t, "expire", Generation(n))
	for _, r := range m.g.Revocations() {
		if !m.now.Before(r.Since.Add(propTimeout)) {
			t.Fatalf("revocation %v outlived the timeout at %v", r, m.now)
		}
	}
}

func (m *groupMachine) drop(t *rapid.T) {
	n := m.g.Len()
	m.logged.DropMembers()
	if got, got2 := m.g.DropMembers(), m.twin.DropMembers(); got != n || got2 != n {
		t.Fatalf("DropMembers = %d / twin %d, want %d", got, got2, n)
	}
	if n > 0 {
		m.expectGen(t, "drop", 1)
	} else {
		m.expectGen(t, "drop of none", 0)
	}
}

// check runs after every action: structural invariants, determinism, and
// convergence of a copy once every revocation has completed.
func (m *groupMachine) check(t *rapid.T) {
	if err := checkInvariants(m.g); err != nil {
		t.Fatal(err)
	}
	snap := m.g.AppendTo(nil)
	if !slices.Equal(snap, m.twin.AppendTo(nil)) {
		t.Fatal("twin diverged")
	}
	if err := checkStructure(m.logged); err != nil {
		t.Fatalf("logged: %v", err)
	}
	if got, want := layout(m.logged), layout(m.g); !maps.EqualFunc(want, got, func(a, b []PartitionID) bool { return slices.Equal(a, b) }) {
		t.Fatalf("logged layout %v, Join-driven layout %v", got, want)
	}
	if got, want := m.logged.Revocations(), m.g.Revocations(); !slices.Equal(got, want) {
		t.Fatalf("logged revocations %v, Join-driven %v", got, want)
	}
	if m.logged.Generation() < m.g.Generation() {
		t.Fatalf("logged generation %d below %d", m.logged.Generation(), m.g.Generation())
	}
	settled, err := New(Config{RebalancingTimeout: propTimeout}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := settled.Decode(snap); err != nil {
		t.Fatalf("decode: %v", err)
	}
	settled.ExpireRevocations(m.now.Add(propTimeout))
	if len(settled.Revocations()) != 0 {
		t.Fatalf("revocations left after the timeout: %v", settled.Revocations())
	}
	counts := make(map[MemberID]int)
	for _, mi := range settled.Members() {
		counts[mi.ID] = len(mi.Partitions)
		if len(mi.Partitions) == 0 && settled.Len() <= len(settled.Partitions()) {
			t.Fatalf("member %d starved with %d members and %d partitions", mi.ID, settled.Len(), len(settled.Partitions()))
		}
	}
	if err := balanced(counts, len(settled.Partitions())); err != nil {
		t.Fatalf("settled assignment: %v", err)
	}
	if err := checkInvariants(settled); err != nil {
		t.Fatalf("settled: %v", err)
	}
}

// eventualSets returns member id -> partitions held once revocations complete.
func eventualSets(g *Group) map[MemberID][]PartitionID {
	out := make(map[MemberID][]PartitionID)
	revs := g.Revocations()
	for _, mi := range g.Members() {
		out[mi.ID] = slices.DeleteFunc(mi.Partitions, func(p PartitionID) bool {
			return slices.ContainsFunc(revs, func(r Revocation) bool { return r.Partition == p })
		})
	}
	for _, r := range revs {
		out[r.Target] = append(out[r.Target], r.Partition)
	}
	return out
}

// TestGroupProperties: random sequences of joins, leaves, removals, partition
// changes, polls, commits and clock advances keep every partition with at most
// one owner and one poller, keep the eventual assignment balanced (no member
// starved when members <= partitions), grow the generation by exactly one per
// rebalance, converge to the fair distribution once revocations complete,
// round-trip through the snapshot and stay deterministic.
func TestGroupProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ps := drawPartitions(t)
		g, err := New(Config{RebalancingTimeout: propTimeout}, ps)
		if err != nil {
			t.Fatal(err)
		}
		twin, err := New(Config{RebalancingTimeout: propTimeout}, ps)
		if err != nil {
			t.Fatal(err)
		}
		logged, err := New(Config{RebalancingTimeout: propTimeout}, ps)
		if err != nil {
			t.Fatal(err)
		}
		m := &groupMachine{g: g, twin: twin, logged: logged, now: t0}
		t.Repeat(map[string]func(*rapid.T){
			"join":          m.join,
			"join again":    m.join, // joins twice as likely: revocations pile up
			"leave":         m.leave,
			"remove":        m.remove,
			"setPartitions": m.setPartitions,
			"poll":          m.poll,
			"poll again":    m.poll,
			"commit":        m.commit,
			"probe":         m.probe,
			"advance":       m.advance,
			"drop":          m.drop,
			"":              m.check,
		})
	})
}
