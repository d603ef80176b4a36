package itest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// manualClock is a clock that moves only when a test advances it; After
// waits on it, so the broker's revocation timer fires without the wall
// clock.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires once the clock has been advanced by d (at once if d <= 0).
func (c *manualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if !at.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: at, ch: ch})
	return ch
}

// Advance moves the clock by d and fires the waiters that are due.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// groupEnv is a broker with stream 0, topic 0 of some partitions and
// consumer group "g" (id 0), on a manual clock with the heartbeat
// verifier off (tests drive it).
type groupEnv struct {
	s     *Server
	clock *manualClock
	root  *Client
	ref   wire.JoinConsumerGroup
	parts uint32
}

func startGroups(t testing.TB, partitions uint32, opts ...Option) *groupEnv {
	t.Helper()
	clock := newManualClock()
	opts = append([]Option{
		WithConfig(func(c *config.Config) { c.Heartbeat.Enabled = false }),
		WithBrokerOptions(broker.WithClock(clock.Now), broker.WithAfter(clock.After)),
	}, opts...)
	s := Start(t, opts...)
	root := s.Dial(t)
	root.LoginRoot()
	ExpectOK(t, root.Command(wire.OpCreateStream, &wire.CreateStream{Name: "s"}))
	ExpectOK(t, root.Command(wire.OpCreateTopic, &wire.CreateTopic{StreamID: sid(0), PartitionsCount: partitions, Name: "t"}))
	ExpectOK(t, root.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(0), TopicID: sid(0), Name: "g"}))
	return &groupEnv{s: s, clock: clock, root: root, ref: wire.JoinConsumerGroup{StreamID: sid(0), TopicID: sid(0), GroupID: name("g")}, parts: partitions}
}

// fill sends perPartition messages of size bytes to every partition in
// batches of at most batch messages.
func (e *groupEnv) fill(t testing.TB, perPartition, size, batch int) {
	t.Helper()
	for p := range e.parts {
		for sent := 0; sent < perPartition; sent += batch {
			n := min(batch, perPartition-sent)
			e.root.MustSend(sid(0), sid(0), wire.PartitioningByID(p), Batch(t, uint64(sent), Payloads(n, size, "m")...))
		}
	}
}

// member is a consumer-group member on its own connection. Its methods
// return errors instead of failing the test, so consumer goroutines can
// use them.
type member struct {
	name string
	c    *Client
	ref  wire.JoinConsumerGroup
}

func (e *groupEnv) member(t testing.TB, name string) *member {
	t.Helper()
	c := e.s.Dial(t)
	c.LoginRoot()
	return &member{name: name, c: c, ref: e.ref}
}

// do sends one request and reads its answer.
func (m *member) do(h wire.RequestHeader, body []byte) (Frame, error) {
	if err := m.c.Send(h, body); err != nil {
		return Frame{}, err
	}
	return m.c.Recv()
}

// command sends a metadata command with its checksum and expects success.
func (m *member) command(op wire.Operation, body wire.Body) error {
	b := body.AppendTo(nil)
	h := m.c.Header(op, 0)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(b)}
	f, err := m.do(h, b)
	if err != nil {
		return err
	}
	if _, err := wire.SplitResult(f.Body); f.Kind != wire.KindReply || f.Reply.Status != 0 || err != nil {
		return fmt.Errorf("%s: %v answered %v (body % x)", m.name, op, f, f.Body)
	}
	return nil
}

func (m *member) join() error { return m.command(wire.OpJoinConsumerGroup, &m.ref) }
func (m *member) leave() error {
	return m.command(wire.OpLeaveConsumerGroup, (*wire.LeaveConsumerGroup)(&m.ref))
}

// sync returns the member's assignment; member is false for an empty
// SYNC (not a member).
func (m *member) sync() (a wire.ConsumerGroupAssignment, isMember bool, err error) {
	f, err := m.do(m.c.Header(wire.OpNonReplicated, wire.CmdSyncConsumerGroup), (*wire.SyncConsumerGroup)(&m.ref).AppendTo(nil))
	if err != nil {
		return a, false, err
	}
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		return a, false, fmt.Errorf("%s: SYNC answered %v", m.name, f)
	}
	if len(f.Body) == 0 {
		return a, false, nil
	}
	return a, true, a.Decode(f.Body)
}

// poll polls partition p as the group with the Next strategy.
func (m *member) poll(p, count uint32, auto bool) (wire.PolledMessages, error) {
	req := wire.PollMessages{Consumer: wire.GroupConsumer(m.ref.GroupID), StreamID: m.ref.StreamID, TopicID: m.ref.TopicID,
		Partition: wire.SomePartition(p), Strategy: wire.NextStrategy(), Count: count, AutoCommit: auto}
	var out wire.PolledMessages
	f, err := m.do(m.c.Header(wire.OpNonReplicated, wire.CmdPollMessages), req.AppendTo(nil))
	if err != nil {
		return out, err
	}
	if f.Kind != wire.KindReply || f.Reply.Status != 0 {
		return out, fmt.Errorf("%s: poll of %d answered %v", m.name, p, f)
	}
	return out, out.Decode(f.Body)
}

// store stores the group offset of p; ok is false when the server refused
// it (the member no longer owns p: status 20).
func (m *member) store(p uint32, offset uint64) (ok bool, err error) {
	req := wire.StoreConsumerOffset{Consumer: wire.GroupConsumer(m.ref.GroupID), StreamID: m.ref.StreamID, TopicID: m.ref.TopicID,
		Partition: wire.SomePartition(p), Offset: offset, Ack: wire.AckQuorum}
	f, err := m.do(m.c.SendHeader(wire.OpStoreConsumerOffset), req.AppendTo(nil))
	if err != nil {
		return false, err
	}
	switch {
	case f.Kind == wire.KindReply && f.Reply.Status == wire.ErrResourceNotFound.Code:
		return false, nil
	case f.Kind != wire.KindReply || f.Reply.Status != 0:
		return false, fmt.Errorf("%s: store on %d answered %v", m.name, p, f)
	}
	return true, nil
}

// offsets lists the offsets of a poll reply.
func offsets(p wire.PolledMessages) []uint64 {
	var out []uint64
	it := p.Messages()
	for msg, ok := it.Next(); ok; msg, ok = it.Next() {
		out = append(out, msg.Offset)
	}
	return out
}

// mustSync is sync for the test goroutine.
func (m *member) mustSync(t testing.TB) wire.ConsumerGroupAssignment {
	t.Helper()
	a, ok, err := m.sync()
	if err != nil || !ok {
		t.Fatalf("%s: SYNC: member %v, %v", m.name, ok, err)
	}
	return a
}

func (m *member) mustJoin(t testing.TB) {
	t.Helper()
	if err := m.join(); err != nil {
		t.Fatal(err)
	}
}

func (m *member) mustPoll(t testing.TB, p, count uint32, auto bool) wire.PolledMessages {
	t.Helper()
	out, err := m.poll(p, count, auto)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
