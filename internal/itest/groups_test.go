package itest

import (
	"slices"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// expectAssignment fails unless m's SYNC lists exactly want (any order).
func expectAssignment(t *testing.T, m *member, want ...uint32) wire.ConsumerGroupAssignment {
	t.Helper()
	a := m.mustSync(t)
	got := slices.Sorted(slices.Values(a.Partitions))
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s owns %v, want %v", m.name, got, want)
	}
	return a
}

func expectResync(t *testing.T, p wire.PolledMessages) {
	t.Helper()
	if p.PartitionID != wire.PollResyncPartition || p.Count != 0 {
		t.Fatalf("poll answered partition %#x with %d messages, want the RESYNC head", p.PartitionID, p.Count)
	}
}

// TestGroupHandOffByCommit: a join takes a partition with in-flight data
// cooperatively: the source may no longer poll it but may commit, the
// target gets it only once the source committed what it polled, and then
// continues right after that offset (no message delivered twice).
func TestGroupHandOffByCommit(t *testing.T) {
	e := startGroups(t, 2)
	e.fill(t, 10, 16, 10)
	a, b := e.member(t, "a"), e.member(t, "b")
	a.mustJoin(t)
	expectAssignment(t, a, 0, 1)
	// Partition 1 in flight (polled 0..3, not committed); partition 0
	// polled and auto-committed.
	if got := offsets(a.mustPoll(t, 1, 4, false)); !equalU64(got, span(0, 3)) {
		t.Fatalf("a polled %v", got)
	}
	a.mustPoll(t, 0, 4, true)
	gen := expectAssignment(t, a, 0, 1).Generation
	b.mustJoin(t)
	// Partition 1 is pending revocation: neither member may poll it.
	ga := expectAssignment(t, a, 0)
	expectAssignment(t, b)
	if ga.Generation <= gen {
		t.Fatalf("generation %d after a join, was %d", ga.Generation, gen)
	}
	expectResync(t, a.mustPoll(t, 1, 4, false))
	expectResync(t, b.mustPoll(t, 1, 4, false))
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, e.root.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&e.ref))), &gd)
	if len(gd.Members) != 2 || !slices.Equal(gd.Members[0].Partitions, []uint32{0, 1}) || len(gd.Members[1].Partitions) != 0 {
		t.Fatalf("GET group while pending: %+v", gd.Members)
	}
	// A commit below what was polled does not complete the hand-off.
	if ok, err := a.store(1, 2); !ok || err != nil {
		t.Fatalf("source commit of a pending partition: %v %v", ok, err)
	}
	expectAssignment(t, b)
	// The catching-up commit does, before its reply.
	if ok, err := a.store(1, 3); !ok || err != nil {
		t.Fatalf("source commit: %v %v", ok, err)
	}
	gb := expectAssignment(t, b, 1)
	if gb.Generation != ga.Generation+1 {
		t.Fatalf("generation %d after the completion, want %d", gb.Generation, ga.Generation+1)
	}
	if got := offsets(b.mustPoll(t, 1, 100, true)); !equalU64(got, span(4, 9)) {
		t.Fatalf("target continued with %v, want 4..9", got)
	}
	expectResync(t, a.mustPoll(t, 1, 4, false))
	if ok, err := a.store(1, 9); ok || err != nil {
		t.Fatalf("commit by the former owner: %v %v, want refused", ok, err)
	}
}

// TestGroupHandOffByTimeout: a source that never commits loses the
// partition once consumer_group.rebalancing_timeout has passed on the
// broker's clock (the broker's revocation timer, driven here by a manual
// clock); the target then re-reads what the source had polled
// (at-least-once).
func TestGroupHandOffByTimeout(t *testing.T) {
	e := startGroups(t, 2)
	e.fill(t, 6, 16, 6)
	a, b := e.member(t, "a"), e.member(t, "b")
	a.mustJoin(t)
	a.mustPoll(t, 1, 3, false) // 0..2 in flight
	b.mustJoin(t)
	expectAssignment(t, b)
	e.clock.Advance(groups.DefaultRebalancingTimeout - time.Microsecond)
	expectAssignment(t, b)
	e.clock.Advance(time.Microsecond)
	waitFor(t, "the revocation timer", func() bool {
		as, _, err := b.sync()
		return err == nil && len(as.Partitions) == 1
	})
	expectAssignment(t, b, 1)
	if got := offsets(b.mustPoll(t, 1, 100, true)); !equalU64(got, span(0, 5)) {
		t.Fatalf("target read %v after the timeout, want 0..5", got)
	}
}

// TestGroupLeaveAndDisconnect: a LEAVE and a dropped connection each end
// a membership with a full rebalance (semantics.md §6.3, §1.9).
func TestGroupLeaveAndDisconnect(t *testing.T) {
	e := startGroups(t, 6)
	a, b, c := e.member(t, "a"), e.member(t, "b"), e.member(t, "c")
	for _, m := range []*member{a, b, c} {
		m.mustJoin(t)
	}
	// Cooperative joins: b takes a's tail 3..5, c one from each.
	expectAssignment(t, a, 0, 1)
	expectAssignment(t, b, 3, 4)
	expectAssignment(t, c, 2, 5)
	if err := b.leave(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.sync(); ok || err != nil {
		t.Fatalf("SYNC after LEAVE: member %v, %v", ok, err)
	}
	// Full rebalance: partition i to member i % 2 (a is member 0, c 2).
	expectAssignment(t, a, 0, 2, 4)
	expectAssignment(t, c, 1, 3, 5)
	c.c.Conn.Close()
	waitFor(t, "the disconnect to end the membership", func() bool {
		as, _, err := a.sync()
		return err == nil && len(as.Partitions) == 6
	})
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, e.root.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&e.ref))), &gd)
	if gd.MembersCount != 1 || len(gd.Members) != 1 || len(gd.Members[0].Partitions) != 6 {
		t.Fatalf("GET group after disconnect: %+v", gd)
	}
}

// TestGroupStaleMemberEviction: the heartbeat verifier, driven on the
// broker's manual clock, evicts a stale member (Eviction 13, connection
// closed, membership removed with a rebalance) and leaves alone a stale
// client that is in no group and a member that kept talking.
func TestGroupStaleMemberEviction(t *testing.T) {
	e := startGroups(t, 4)
	live, stale := e.member(t, "live"), e.member(t, "stale")
	live.mustJoin(t)
	stale.mustJoin(t)
	bystander := e.s.Dial(t)
	bystander.LoginRoot()
	expectAssignment(t, stale, 2, 3)
	const interval = 30 * time.Second
	e.clock.Advance(interval) // 30 s idle: not yet stale (1.2 x interval)
	e.s.Broker.Sessions().VerifyHeartbeats(interval)
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, e.root.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&e.ref))), &gd)
	if gd.MembersCount != 2 {
		t.Fatalf("a member was evicted before 1.2 x interval: %+v", gd)
	}
	e.clock.Advance(7 * time.Second)
	e.root.Ping()
	live.c.Ping() // every request is a heartbeat
	e.s.Broker.Sessions().VerifyHeartbeats(interval)
	frames := stale.c.ExpectClosed()
	if len(frames) != 1 {
		t.Fatalf("stale member got %v, want one eviction", frames)
	}
	ExpectEviction(t, frames[0], wire.EvictStaleClient)
	expectAssignment(t, live, 0, 1, 2, 3)
	bystander.Ping()
}

// TestGroupMembershipAcrossRestart writes down what a restart keeps:
// groups and their generation survive, memberships do not (no connection
// survives a restart; start-up drops them through the metadata log), so
// a client's SYNC is empty until it joins again (what the Go SDK does on
// an empty SYNC).
func TestGroupMembershipAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	e := startGroups(t, 3, WithDir(dir))
	a := e.member(t, "a")
	a.mustJoin(t)
	gen := expectAssignment(t, a, 0, 1, 2).Generation
	e.s.Stop()

	s := Start(t, WithDir(dir))
	c := s.Dial(t)
	c.LoginRoot()
	m := &member{name: "again", c: c, ref: e.ref}
	if _, ok, err := m.sync(); ok || err != nil {
		t.Fatalf("SYNC after restart: member %v, %v", ok, err)
	}
	var gd wire.GroupDetails
	decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetConsumerGroup, (*wire.GetConsumerGroup)(&e.ref))), &gd)
	if gd.Name != "g" || gd.MembersCount != 0 {
		t.Fatalf("group after restart: %+v", gd)
	}
	m.mustJoin(t)
	if a := expectAssignment(t, m, 0, 1, 2); a.Generation <= gen {
		t.Fatalf("generation %d after restart and re-join, was %d", a.Generation, gen)
	}
}
