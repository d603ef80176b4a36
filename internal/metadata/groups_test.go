package metadata

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

var (
	memberA = wire.Uint128{Lo: 0xa}
	memberB = wire.Uint128{Lo: 0xb}
)

// groupFixture creates stream 0, topic 0 with partitions and group 0.
func groupFixture(t testing.TB, s *testStore, partitions uint32) catalog.TopicRef {
	t.Helper()
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: partitions, Name: "t"})
	s.ok(t, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Name: "g"})
	ref, _, err := s.ResolveTopic(wire.NumericID(0), wire.NumericID(0))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// member commits a JOIN (or LEAVE) of group 0 for client.
func (s *testStore) member(t testing.TB, code wire.Command, client wire.Uint128) {
	t.Helper()
	body := wire.JoinConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), GroupID: wire.NumericID(0)}
	c, err := s.submit(Entry{Kind: KindCommand, Client: client, Code: code, Body: body.AppendTo(nil)})
	if err != nil || c.res.code != 0 {
		t.Fatalf("command %d for %v: %v, code %d", code, client, err, c.res.code)
	}
}

// assignment is SYNC's view of client in group 0.
func (s *testStore) assignment(t testing.TB, client wire.Uint128) (groups.Generation, []groups.PartitionID) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	gen, parts, err := s.st.streams[0].Topics[0].Groups[0].G.Assignment(groups.ClientID(client))
	if err != nil {
		t.Fatalf("assignment of %v: %v", client, err)
	}
	return gen, parts
}

func (s *testStore) revocations() []groups.Revocation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.streams[0].Topics[0].Groups[0].G.Revocations()
}

func parts(ids ...groups.PartitionID) []groups.PartitionID { return ids }

// TestJoinDefersOnlyInFlightPartitions: a JOIN moves at once (through a
// second journal entry) every partition without in-flight data and leaves
// the polled-but-uncommitted one pending until its owner commits.
func TestJoinDefersOnlyInFlightPartitions(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	ref := groupFixture(t, s, 4)
	s.member(t, wire.CmdJoinConsumerGroup, memberA)
	if err := s.GroupPartition(ref, 0, memberA, 3, catalog.GroupPoll); err != nil {
		t.Fatalf("sole member may not poll: %v", err)
	}
	if err := s.GroupPolled(ref, 0, memberA, 3, 9); err != nil {
		t.Fatal(err)
	}
	if err := s.GroupPolled(ref, 0, memberA, 1, 4); err != nil {
		t.Fatal(err)
	}
	s.GroupCommitted(ref, 0, memberA, 1, 4) // partition 1: settled
	op := s.Op()
	s.member(t, wire.CmdJoinConsumerGroup, memberB)
	if got := s.Op() - op; got != 2 {
		t.Fatalf("JOIN wrote %d entries, want the join and one completion", got)
	}
	_, a := s.assignment(t, memberA)
	genB, b := s.assignment(t, memberB)
	if !slices.Equal(a, parts(0, 1)) || !slices.Equal(b, parts(2)) {
		t.Fatalf("after join: A %v, B %v", a, b)
	}
	if r := s.revocations(); len(r) != 1 || r[0].Partition != 3 || r[0].Target != 1 {
		t.Fatalf("revocations %+v", r)
	}
	for _, tc := range []struct {
		name   string
		client wire.Uint128
		access catalog.GroupAccess
		want   error
	}{
		{"source may not poll a pending partition", memberA, catalog.GroupPoll, wire.ErrConsumerGroupPartitionNotOwned},
		{"source may commit it", memberA, catalog.GroupCommit, nil},
		{"target may not poll it yet", memberB, catalog.GroupPoll, wire.ErrConsumerGroupPartitionNotOwned},
		{"non-member", wire.Uint128{Lo: 77}, catalog.GroupPoll, wire.ErrConsumerGroupMemberNotFound},
	} {
		if err := s.GroupPartition(ref, 0, tc.client, 3, tc.access); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.GroupPolled(ref, 0, memberA, 3, 12); !errors.Is(err, wire.ErrConsumerGroupPartitionNotOwned) {
		t.Fatalf("a poll recorded after the revocation began: %v", err)
	}
	if err := s.GroupPartition(ref, 9, memberA, 3, catalog.GroupPoll); !errors.Is(err, wire.ErrConsumerGroupIDNotFound) {
		t.Fatalf("unknown group: %v", err)
	}
	op = s.Op()
	s.GroupCommitted(ref, 0, memberA, 3, 8) // still below the polled 9
	if s.Op() != op || len(s.revocations()) != 1 {
		t.Fatal("a commit below the polled offset completed the revocation")
	}
	s.GroupCommitted(ref, 0, memberA, 3, 9)
	gen, b := s.assignment(t, memberB)
	if !slices.Equal(b, parts(2, 3)) || gen != genB+1 || len(s.revocations()) != 0 || s.Op() != op+1 {
		t.Fatalf("after the catching-up commit: B %v gen %d (was %d), op +%d", b, gen, genB, s.Op()-op)
	}

	// The journal replays to the same generation: completions are entries.
	// Start-up then drops the memberships (one more rebalance).
	again := openTest(t, dir, 1<<30, nil)
	again.mu.RLock()
	g := again.st.streams[0].Topics[0].Groups[0].G
	regen, members := g.Generation(), g.Len()
	again.mu.RUnlock()
	if regen != gen+1 || members != 0 {
		t.Fatalf("after restart: generation %d (live %d), %d members", regen, gen, members)
	}
	s.Close()
	again.Close()
}

// TestPendingRevocationSurvivesSnapshot: a snapshot taken while a
// revocation is pending (with or without marks) loads again.
func TestPendingRevocationSurvivesSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	ref := groupFixture(t, s, 2)
	s.member(t, wire.CmdJoinConsumerGroup, memberA)
	if err := s.GroupPolled(ref, 0, memberA, 1, 3); err != nil {
		t.Fatal(err)
	}
	s.member(t, wire.CmdJoinConsumerGroup, memberB)
	if len(s.revocations()) != 1 {
		t.Fatalf("revocations %+v", s.revocations())
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again := openTest(t, dir, 1<<30, nil)
	defer again.Close()
	again.mu.RLock()
	n := again.st.streams[0].Topics[0].Groups[0].G.Len()
	again.mu.RUnlock()
	if n != 0 {
		t.Fatalf("%d members after restart, want none", n)
	}
}

// TestRevocationTimeout: RunRevocations completes a pending revocation
// exactly when consumer_group.rebalancing_timeout has passed, on the
// bubble's fake clock.
func TestRevocationTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 7 * time.Second
		st, err := Open(Config{
			Dir: t.TempDir(), Hasher: auth.NewHasher(cheapParams, nil), ClientsTableMax: 16, Logger: quiet,
			RebalancingTimeout: timeout,
			Root:               func() (string, string, error) { return "iggy", "iggy", nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		s := &testStore{Store: st}
		ref := groupFixture(t, s, 2)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.RunRevocations(ctx); close(done) }()

		s.member(t, wire.CmdJoinConsumerGroup, memberA)
		if err := s.GroupPolled(ref, 0, memberA, 1, 3); err != nil {
			t.Fatal(err)
		}
		s.member(t, wire.CmdJoinConsumerGroup, memberB)
		started := time.Now()
		synctest.Wait()
		time.Sleep(timeout - time.Microsecond)
		synctest.Wait()
		if len(s.revocations()) != 1 {
			t.Fatal("revocation completed before the timeout")
		}
		time.Sleep(time.Microsecond)
		synctest.Wait()
		if len(s.revocations()) != 0 {
			t.Fatalf("revocation pending %v after the timeout", time.Since(started))
		}
		if _, b := s.assignment(t, memberB); !slices.Equal(b, parts(1)) {
			t.Fatalf("target owns %v", b)
		}
		cancel()
		<-done
		s.Close()
	})
}

func TestRevItemsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []revItem
	}{
		{"none", nil},
		{"one", []revItem{{1, 2, 3, 4}}},
		{"several", []revItem{{0, 0, 0, 0}, {1 << 20, 4095, 7, 999_999}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := appendRevItems(nil, tc.items)
			got := decodeRevItems(b)
			if len(got) != len(tc.items) || (len(got) > 0 && !slices.Equal(got, tc.items)) {
				t.Fatalf("round trip %v -> %v", tc.items, got)
			}
			if len(b) > 0 && decodeRevItems(b[:len(b)-1]) != nil {
				t.Fatal("a truncated body decoded")
			}
		})
	}
}

// FuzzRevItems: the KindCompleteRevocations body decoder never panics,
// and whatever it decodes re-encodes to the same bytes.
func FuzzRevItems(f *testing.F) {
	f.Add(appendRevItems(nil, nil))
	f.Add(appendRevItems(nil, []revItem{{1, 2, 3, 4}, {5, 6, 7, 8}}))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		items := decodeRevItems(b)
		if items == nil {
			return
		}
		if again := appendRevItems(nil, items); !slices.Equal(again, b) {
			t.Fatalf("re-encoded % x, input % x", again, b)
		}
	})
}
