package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/wire"
)

// collect iterates c until n messages arrived and returns their payloads
// by partition.
func collect(t *testing.T, c *Consumer, n int) map[uint32][]string {
	t.Helper()
	got := map[uint32][]string{}
	count := 0
	ctx := ctxTimeout(t)
	for m, err := range c.Messages(ctx) {
		if err != nil {
			t.Fatalf("consume: %v", err)
		}
		got[m.Partition] = append(got[m.Partition], string(m.Payload))
		count++
		if count == n {
			break
		}
	}
	if count != n {
		t.Fatalf("iteration ended after %d messages, want %d", count, n)
	}
	return got
}

func seq(p uint32, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "p"+itoa(int(p))+"-"+itoa(i))
	}
	return out
}

func TestConsumerSingle(t *testing.T) {
	b := newMemBroker(t, 2)
	b.seed(0, 5)
	b.seed(1, 3)
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s)
	me := wire.SingleConsumer(wire.NamedID("reader"))
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), me, WithPollCount(2), WithPollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]uint32{0, 1}, co.Assignment().Partitions); d != "" {
		t.Fatalf("partitions: %s", d)
	}
	got := collect(t, co, 8)
	want := map[uint32][]string{0: seq(0, 0, 5), 1: seq(1, 0, 3)}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("messages (-want +got):\n%s", d)
	}
	if err := co.Close(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[uint32]uint64{0: 4, 1: 2} {
		if v, ok := b.stored(me, p); !ok || v != want {
			t.Fatalf("stored offset of partition %d = %d, %v; want %d", p, v, ok, want)
		}
	}
	// A new consumer with the same name continues after the stored offsets.
	b.seed(0, 2) // offsets 5, 6 ("p0-0", "p0-1" again as payloads)
	co2, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), me, WithPollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer co2.Close(ctxTimeout(t))
	if got := collect(t, co2, 2); !slices.Equal(got[0], seq(0, 0, 2)) {
		t.Fatalf("resumed at %v", got)
	}
}

func TestConsumerStartPositions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  StartPosition
		stored bool
		want   []string
	}{
		{"first", StartFirst(), false, seq(0, 0, 5)},
		{"offset", StartAtOffset(3), false, seq(0, 3, 5)},
		{"last", StartLast(), false, seq(0, 3, 5)},
		{"next without offset", StartNext(), false, seq(0, 0, 5)},
		{"next after stored", StartNext(), true, seq(0, 2, 5)},
		{"time", StartAtTime(time.UnixMicro(1)), false, seq(0, 0, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newMemBroker(t, 1)
			b.seed(0, 5)
			me := wire.SingleConsumer(wire.NumericID(9))
			if tc.stored {
				b.offsets[offsetKey(me, 0)] = 1
			}
			s := newFakeServer(t, b.handle)
			c := dialFake(t, s)
			co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), me,
				WithStart(tc.start), WithPollCount(2), WithPollInterval(time.Millisecond), WithCommit(CommitNone))
			if err != nil {
				t.Fatal(err)
			}
			defer co.Close(ctxTimeout(t))
			got := collect(t, co, len(tc.want))
			if d := cmp.Diff(tc.want, got[0]); d != "" {
				t.Fatalf("messages (-want +got):\n%s", d)
			}
		})
	}
}

func TestConsumerCommitModes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opt        ConsumerOption
		wantStored bool
		wantAuto   bool
	}{
		{"after handle", WithCommit(CommitAfterHandle), true, false},
		{"none", WithCommit(CommitNone), false, false},
		{"after poll", WithCommit(CommitAfterPoll), true, true},
		{"interval", WithCommitInterval(time.Hour), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newMemBroker(t, 1)
			b.seed(0, 4)
			s := newFakeServer(t, b.handle)
			c := dialFake(t, s)
			me := wire.SingleConsumer(wire.NumericID(1))
			co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), me, tc.opt, WithPollInterval(time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			collect(t, co, 4)
			if err := co.Close(ctxTimeout(t)); err != nil {
				t.Fatal(err)
			}
			v, ok := b.stored(me, 0)
			if ok != tc.wantStored || ok && v != 3 {
				t.Fatalf("stored %d, %v", v, ok)
			}
			stores := 0
			for _, r := range s.requests() {
				if r.Command() == wire.CmdStoreConsumerOffset {
					stores++
				}
			}
			b.mu.Lock()
			auto := b.autoCommit > 0
			b.mu.Unlock()
			if auto != tc.wantAuto || tc.wantAuto && stores != 0 {
				t.Fatalf("auto-commit polls %v, explicit stores %d", auto, stores)
			}
		})
	}
}

// TestConsumerGroup: a member polls only its assigned partitions and
// re-syncs when fenced (resync sentinel, 5009, 5006), calling the
// rebalance handler with each new assignment; when the server forgets the
// member it joins again.
func TestConsumerGroup(t *testing.T) {
	b := newMemBroker(t, 3)
	for p := range uint32(3) {
		b.seed(p, 4)
	}
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s, WithClientID(wire.Uint128{Lo: 77}))
	b.setAssignment(c.ID(), 1)
	var seen []Assignment
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), wire.GroupConsumer(wire.NamedID("g")),
		WithPollCount(10), WithPollInterval(time.Millisecond), WithSyncInterval(time.Hour),
		WithRebalanceHandler(func(a Assignment) { seen = append(seen, a) }))
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, co, 4); !slices.Equal(got[1], seq(1, 0, 4)) || len(got) != 1 {
		t.Fatalf("first assignment consumed %v", got)
	}
	for i, fence := range []int{0, int(wire.ErrConsumerGroupPartitionNotOwned.Code), int(wire.ErrConsumerGroupMemberNotFound.Code)} {
		p := uint32([]int{0, 2, 1}[i])
		b.setAssignment(c.ID(), p)
		b.mu.Lock()
		b.fence[c.ID()] = fence
		if i == 2 {
			delete(b.members, c.ID()) // the server forgot the member
			b.mu.Unlock()
			b.seed(p, 2) // offsets 4 and 5: the group stored 3 for partition 1
		} else {
			b.mu.Unlock()
		}
		want := 4
		if i == 2 {
			want = 2
		}
		got := collect(t, co, want)
		if len(got) != 1 || len(got[p]) != want {
			t.Fatalf("after fence %d consumed %v, want partition %d", fence, got, p)
		}
	}
	b.mu.Lock()
	member := b.members[c.ID()]
	b.mu.Unlock()
	if !member {
		t.Fatal("consumer did not join again")
	}
	var parts [][]uint32
	for _, a := range seen {
		parts = append(parts, a.Partitions)
	}
	if d := cmp.Diff([][]uint32{{1}, {0}, {2}, {1}}, parts); d != "" {
		t.Fatalf("rebalances (-want +got):\n%s", d)
	}
	if err := co.Close(ctxTimeout(t)); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	member = b.members[c.ID()]
	b.mu.Unlock()
	if member {
		t.Fatal("Close did not leave the group")
	}
	// Group offsets were stored per partition.
	g := wire.GroupConsumer(wire.NamedID("g"))
	if v, ok := b.stored(g, 0); !ok || v != 3 {
		t.Fatalf("group offset of partition 0: %d %v", v, ok)
	}
}

// TestConsumerCreateGroup: WithCreateGroup creates a missing group by
// name before joining.
func TestConsumerCreateGroup(t *testing.T) {
	b := newMemBroker(t, 1)
	created := false
	s := newFakeServer(t, func(fc *fakeConn, r fakeReq) bool {
		switch r.Command() {
		case wire.CmdJoinConsumerGroup:
			if !created {
				fc.reply(r, 0, wire.AppendResultError(nil, wire.ErrConsumerGroupIDNotFound.Code))
				return true
			}
		case wire.CmdCreateConsumerGroup:
			created = true
			d := wire.GroupDetails{ConsumerGroup: wire.ConsumerGroup{ID: 0, Name: "new", PartitionsCount: 1}}
			fc.reply(r, 0, d.AppendTo(wire.AppendResultOK(nil)))
			return true
		}
		return b.handle(fc, r)
	})
	c := dialFake(t, s)
	g := wire.GroupConsumer(wire.NamedID("new"))
	if _, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), g); !errors.Is(err, wire.ErrConsumerGroupIDNotFound) {
		t.Fatalf("without WithCreateGroup: %v", err)
	}
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), g, WithCreateGroup())
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("group not created")
	}
	co.Close(ctxTimeout(t))
}

// TestConsumerPoll: the Poll API; messages count as handled at the next
// Poll.
func TestConsumerPoll(t *testing.T) {
	b := newMemBroker(t, 1)
	b.seed(0, 3)
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s)
	me := wire.SingleConsumer(wire.NumericID(5))
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), me, WithPollCount(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t)
	first, err := co.Poll(ctx)
	if err != nil || len(first) != 2 {
		t.Fatalf("poll: %d messages, %v", len(first), err)
	}
	if _, ok := b.stored(me, 0); ok {
		t.Fatal("offset stored before the messages were handled")
	}
	second, err := co.Poll(ctx)
	if err != nil || len(second) != 1 || second[0].Offset != 2 {
		t.Fatalf("second poll: %+v, %v", second, err)
	}
	if v, ok := b.stored(me, 0); !ok || v != 1 {
		t.Fatalf("stored %d %v after the second poll", v, ok)
	}
	if err := co.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.stored(me, 0); v != 2 {
		t.Fatalf("stored %d after close", v)
	}
	if _, err := co.Poll(ctx); !errors.Is(err, ErrConsumerClosed) {
		t.Fatalf("poll after close: %v", err)
	}
}

// TestConsumerStopsOnCancel: cancelling the context ends the iteration
// without an error.
func TestConsumerStopsOnCancel(t *testing.T) {
	b := newMemBroker(t, 1)
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s)
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), wire.SingleConsumer(wire.NumericID(1)), WithPollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		s.waitFor(func(rs []fakeReq) bool {
			n := 0
			for _, r := range rs {
				if r.Command() == wire.CmdPollMessages {
					n++
				}
			}
			return n >= 3
		})
		cancel()
	}()
	for _, err := range co.Messages(ctx) {
		t.Fatalf("unexpected item: %v", err)
	}
}

// TestConsumerCommitBeforeNextPoll: with CommitAfterHandle the offsets of
// a handled batch are stored before the next poll is sent.
func TestConsumerCommitBeforeNextPoll(t *testing.T) {
	b := newMemBroker(t, 1)
	b.seed(0, 4)
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s)
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), wire.SingleConsumer(wire.NumericID(3)),
		WithPollCount(2), WithPollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close(ctxTimeout(t))
	collect(t, co, 3)
	b.mu.Lock()
	at := slices.Clone(b.storedAtPoll)
	b.mu.Unlock()
	if len(at) < 2 || at[0] != -1 || at[1] != 1 {
		t.Fatalf("stored offsets seen by the polls: %v, want [-1 1 ...]", at)
	}
}

// TestConsumerGroupCommitFenced: when the server forgot the member (a
// reconnect ended its session), storing its handled offsets is refused;
// the consumer keeps them, syncs, joins again and stores them then,
// without reporting an error.
func TestConsumerGroupCommitFenced(t *testing.T) {
	b := newMemBroker(t, 1)
	b.seed(0, 4)
	s := newFakeServer(t, b.handle)
	c := dialFake(t, s)
	b.setAssignment(c.ID(), 0)
	g := wire.GroupConsumer(wire.NamedID("g"))
	co, err := c.NewConsumer(ctxTimeout(t), wire.NumericID(1), wire.NumericID(1), g, WithPollCount(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t)
	if msgs, err := co.Poll(ctx); err != nil || len(msgs) != 2 {
		t.Fatalf("first poll: %d, %v", len(msgs), err)
	}
	b.mu.Lock()
	delete(b.members, c.ID())
	b.mu.Unlock()
	msgs, err := co.Poll(ctx) // store refused, re-sync, join, poll
	if err != nil || len(msgs) != 2 || msgs[0].Offset != 2 {
		t.Fatalf("poll after losing the membership: %+v, %v", msgs, err)
	}
	if _, ok := b.stored(g, 0); ok {
		t.Fatal("a fenced store was accepted")
	}
	if err := co.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok := b.stored(g, 0); !ok || v != 3 {
		t.Fatalf("stored %d, %v after rejoining", v, ok)
	}
}
