package partition

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// callForward is the call kind the tests register ServeForwarded under.
const callForward uint8 = 1

// hostForwarder is the broker's Forwarder over a test replicator's host.
type hostForwarder struct{ r *testReplicator }

func (f hostForwarder) Self() replication.NodeID { return f.r.self }
func (f hostForwarder) LeaderOf(g replication.GroupID) (replication.NodeID, bool) {
	return f.r.host().LeaderOf(g)
}
func (f hostForwarder) AwaitLeader(ctx context.Context, g replication.GroupID) (replication.NodeID, error) {
	return f.r.host().AwaitLeader(ctx, g)
}
func (f hostForwarder) AwaitReadable(ctx context.Context, g replication.GroupID, within time.Duration) error {
	return f.r.host().AwaitReadable(ctx, g, within)
}
func (f hostForwarder) Forward(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error) {
	return f.r.host().Call(ctx, to, callForward, payload)
}

// startForwardingCluster starts n replicas of clusterRef's partition 0
// that forward to each other.
func startForwardingCluster(t *testing.T, n int) []*testNode {
	t.Helper()
	_, nodes := startNodes(t, n, clusterRef, func(_ int, r *testReplicator) Options {
		return Options{Dir: t.TempDir(), Replicator: r, Forwarder: hostForwarder{r}}
	}, func(r *testReplicator, p *Plane) { r.host().HandleCall(callForward, p.ServeForwarded) })
	return nodes
}

// frameOf runs handler h on a request and returns the whole reply frame
// as a client would read it.
func frameOf(t *testing.T, h func(*dispatch.Exchange), hdr wire.RequestHeader, body []byte) []byte {
	t.Helper()
	b := session.Binding{Client: hdr.Client, Session: 77, UserID: 1}
	return frameOn(t, h, hdr, body, session.ForwardedConn(context.Background(), b, "test"))
}

func frameOn(t *testing.T, h func(*dispatch.Exchange), hdr wire.RequestHeader, body []byte, conn *session.Conn) []byte {
	t.Helper()
	x := &dispatch.Exchange{Header: hdr, Body: bytes.Clone(body), Conn: conn}
	if hdr.Operation == wire.OpNonReplicated {
		x.Info, _ = wire.LookupCommand(hdr.Code)
	} else {
		x.Info, _ = wire.CommandForOperation(hdr.Operation)
	}
	defer x.Reset()
	h(x)
	if !x.Answered {
		t.Fatal("not answered")
	}
	f, err := replyFrame(x)
	if err != nil {
		t.Fatal(err)
	}
	return f[1:]
}

// reply decodes a frame's header and body.
func reply(t *testing.T, f []byte) (wire.ReplyHeader, []byte) {
	t.Helper()
	var r wire.ReplyHeader
	if err := r.Decode(f); err != nil {
		t.Fatal(err)
	}
	return r, f[wire.HeaderSize:]
}

func reqHeader(op wire.Operation, code wire.Command, client wire.Uint128, request uint64) wire.RequestHeader {
	h := wire.RequestHeader{Client: client, Request: request, Operation: op, Session: 77, Timestamp: 12345}
	if op == wire.OpNonReplicated {
		h.Code = code
	}
	return h
}

func pollRequest(offset uint64) []byte {
	req := wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: offset}, Count: 1000}
	return req.AppendTo(nil)
}

// TestForwardToLeader: every partition command sent to a follower is
// served by the leader, and the follower answers with the leader's reply
// frame byte for byte; the duplicate window sees a retry through another
// node as a retry.
func TestForwardToLeader(t *testing.T) {
	nodes := startForwardingCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	leader, f1, f2 := nodes[0].plane, nodes[1].plane, nodes[2].plane
	client := wire.Uint128{Lo: 42}

	body := sendBody(t, clusterRef, 3, "a")
	r, out := reply(t, frameOf(t, f1.send, reqHeader(wire.OpSendMessages, 0, client, 1), body))
	if r.Status != 0 || len(out) != 24 || binary.LittleEndian.Uint64(out[16:]) != 0 {
		t.Fatalf("send through a follower: status %d body %x", r.Status, out)
	}
	if r.Replica != 0 || r.Op == 0 || r.Commit != r.Op || r.View == 0 {
		t.Fatalf("the relayed reply is the leader's committed one: %+v", r)
	}
	// The same request again, through the other follower: a duplicate.
	r, out = reply(t, frameOf(t, f2.send, reqHeader(wire.OpSendMessages, 0, client, 1), body))
	if r.Status != 0 || !bytes.Equal(out, []byte{0, 0, 0, 0}) {
		t.Fatalf("retry through another follower: status %d body %x", r.Status, out)
	}
	if _, out = reply(t, frameOf(t, f2.send, reqHeader(wire.OpSendMessages, 0, client, 2), sendBody(t, clusterRef, 2, "b"))); binary.LittleEndian.Uint64(out[16:]) != 3 {
		t.Fatalf("second send stored at %d", binary.LittleEndian.Uint64(out[16:]))
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated messages", func() bool { return messages(nd.plane) == 5 })
	}

	// Polls: the follower's answer is the leader's, byte for byte.
	ph := reqHeader(wire.OpNonReplicated, wire.CmdPollMessages, client, 0)
	want := frameOf(t, leader.poll, ph, pollRequest(1))
	before := nodes[0].host().Stats().CallsServed
	if got := frameOf(t, f1.poll, ph, pollRequest(1)); !bytes.Equal(got, want) {
		t.Fatalf("forwarded poll frame differs from the leader's:\n%x\n%x", got, want)
	}
	if n := nodes[0].host().Stats().CallsServed; n != before+1 {
		t.Fatalf("the follower's poll must be served by the leader (%d calls served, want %d)", n, before+1)
	}
	if r, out := reply(t, want); r.Status != 0 || binary.LittleEndian.Uint32(out[12:]) != 4 {
		t.Fatalf("poll from offset 1: status %d, %d messages", r.Status, binary.LittleEndian.Uint32(out[12:]))
	}

	// Offsets through followers.
	store := wire.StoreConsumerOffset{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Offset: 2, Ack: wire.AckQuorum}
	if r, _ := reply(t, frameOf(t, f2.storeOffset, reqHeader(wire.OpStoreConsumerOffset, 0, client, 3), store.AppendTo(nil))); r.Status != 0 || r.Replica != 0 {
		t.Fatalf("offset store through a follower: %+v", r)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated offset", func() bool {
			off, ok := nd.plane.lookup(clusterRef.Incarnation, 0).log.Offsets().Get(storage.KindConsumer, 7)
			return ok && off == 2
		})
	}
	get := wire.GetConsumerOffset{Consumer: store.Consumer, StreamID: store.StreamID, TopicID: store.TopicID, Partition: store.Partition}
	gh := reqHeader(wire.OpNonReplicated, wire.CmdGetConsumerOffset, client, 0)
	if got, want := frameOf(t, f1.getOffset, gh, get.AppendTo(nil)), frameOf(t, leader.getOffset, gh, get.AppendTo(nil)); !bytes.Equal(got, want) {
		t.Fatal("forwarded offset read differs from the leader's")
	}
	del := wire.DeleteConsumerOffset{Consumer: store.Consumer, StreamID: store.StreamID, TopicID: store.TopicID, Partition: store.Partition, Ack: wire.AckQuorum}
	if r, _ := reply(t, frameOf(t, f1.deleteOffset, reqHeader(wire.OpDeleteConsumerOffset, 0, client, 4), del.AppendTo(nil))); r.Status != 0 {
		t.Fatalf("offset delete through a follower: %+v", r)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "replicated offset deletion", func() bool {
			_, ok := nd.plane.lookup(clusterRef.Incarnation, 0).log.Offsets().Get(storage.KindConsumer, 7)
			return !ok
		})
	}

	// Many at once, through both followers.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		via := nodes[1+i%2].plane
		wg.Go(func() {
			b, err := buildSend(clusterRef, 1, fmt.Sprint(i))
			if err != nil {
				errs <- err
				return
			}
			a, err := runExchange(via.send, wire.OpSendMessages, wire.Uint128{Lo: uint64(100 + i)}, 1, b)
			if err == nil && a.status != 0 {
				err = fmt.Errorf("send %d: status %d", i, a.status)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "concurrent sends", func() bool { return messages(leader) == 45 })
}

// TestServeForwardedRefuses: a node that does not lead answers "not the
// leader" without running anything; other commands and garbage are
// refused.
func TestServeForwardedRefuses(t *testing.T) {
	nodes := startForwardingCluster(t, 3)
	g := replicated.GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	x := &dispatch.Exchange{Header: reqHeader(wire.OpSendMessages, 0, wire.Uint128{Lo: 1}, 1), Body: sendBody(t, clusterRef, 1, "x"),
		Conn: session.ForwardedConn(context.Background(), session.Binding{Client: wire.Uint128{Lo: 1}, Session: 77, UserID: 1}, "test")}
	payload, ok := encodeForward(x, 0)
	if !ok {
		t.Fatal("encode")
	}
	ctx := context.Background()
	out, err := nodes[1].plane.ServeForwarded(ctx, 2, payload)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeForwardReply(out)
	if err != nil || !r.notLeader || !r.hasLeader || r.leader != 0 {
		t.Fatalf("a follower answers not-leader naming the leader: %+v %v", r, err)
	}
	if messages(nodes[0].plane) != 0 {
		t.Fatal("nothing may run")
	}
	if _, err := nodes[0].plane.ServeForwarded(ctx, 1, payload[:10]); !errors.Is(err, replication.ErrCallRefused) {
		t.Fatalf("garbage: %v", err)
	}
	x.Header = reqHeader(wire.OpNonReplicated, wire.CmdGetStreams, wire.Uint128{Lo: 1}, 0)
	other, _ := encodeForward(x, 0)
	if _, err := nodes[0].plane.ServeForwarded(ctx, 1, other); !errors.Is(err, replication.ErrCallRefused) {
		t.Fatalf("a command that is not forwarded: %v", err)
	}
}

// fakeForwarder scripts the other nodes.
type fakeForwarder struct {
	mu      sync.Mutex
	self    replication.NodeID
	leader  replication.NodeID
	known   bool
	calls   []replication.NodeID
	answers []func(to replication.NodeID, payload []byte) ([]byte, error)
}

func (f *fakeForwarder) Self() replication.NodeID { return f.self }
func (f *fakeForwarder) LeaderOf(replication.GroupID) (replication.NodeID, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader, f.known
}
func (f *fakeForwarder) AwaitReadable(context.Context, replication.GroupID, time.Duration) error {
	return nil
}
func (f *fakeForwarder) AwaitLeader(ctx context.Context, g replication.GroupID) (replication.NodeID, error) {
	for {
		if l, ok := f.LeaderOf(g); ok {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
func (f *fakeForwarder) Forward(_ context.Context, to replication.NodeID, payload []byte) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, to)
	a := f.answers[0]
	f.answers = f.answers[1:]
	f.mu.Unlock()
	return a(to, payload)
}

func (f *fakeForwarder) setLeader(l replication.NodeID) {
	f.mu.Lock()
	f.leader, f.known = l, true
	f.mu.Unlock()
}

// served answers with a frame whose body names the node.
func served(to replication.NodeID, _ []byte) ([]byte, error) {
	body := fmt.Appendf(nil, "served by %d", to)
	h := wire.ReplyHeader{Prologue: wire.Prologue{Size: uint32(wire.HeaderSize + len(body))}, Operation: wire.OpNonReplicated}
	var head [wire.HeaderSize]byte
	h.Encode(head[:])
	return append(append([]byte{forwardServed}, head[:]...), body...), nil
}

func notLeaderHint(hint replication.NodeID) func(replication.NodeID, []byte) ([]byte, error) {
	return func(replication.NodeID, []byte) ([]byte, error) {
		out := make([]byte, 10)
		out[0], out[1] = forwardNotLeader, 1
		binary.LittleEndian.PutUint64(out[2:], uint64(hint))
		return out, nil
	}
}

func failing(err error) func(replication.NodeID, []byte) ([]byte, error) {
	return func(replication.NodeID, []byte) ([]byte, error) { return nil, err }
}

// TestForwardRetries: one more try only when the request certainly did
// not run, 57 when it may have, 58 when no leader is known.
func TestForwardRetries(t *testing.T) {
	ref := catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 5, Settings: wire.DefaultTopicSettings()}
	f := &fakeForwarder{self: 0}
	p := newClusterPlaneOpts(t, Options{Dir: t.TempDir(), Forwarder: f}, &fakeTopics{ref: ref, ids: []uint32{0}})
	t.Cleanup(func() { p.Close() })
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	client := wire.Uint128{Lo: 5}
	hdr := reqHeader(wire.OpNonReplicated, wire.CmdPollMessages, client, 0)
	run := func(leader replication.NodeID, answers ...func(replication.NodeID, []byte) ([]byte, error)) (wire.ReplyHeader, []byte, []replication.NodeID) {
		t.Helper()
		f.mu.Lock()
		f.leader, f.known, f.calls, f.answers = leader, true, nil, answers
		f.mu.Unlock()
		frame := frameOf(t, p.poll, hdr, pollRequest(0))
		r, body := reply(t, frame)
		f.mu.Lock()
		defer f.mu.Unlock()
		return r, body, f.calls
	}

	if r, _, calls := run(0); r.Status != 0 || len(calls) != 0 {
		t.Fatalf("leading here: status %d, %d forwards", r.Status, len(calls))
	}
	if _, body, calls := run(1, served); len(calls) != 1 || string(body) != "served by 1" {
		t.Fatalf("forwarded: %q via %v", body, calls)
	}
	// The relayed frame is what the leader answered, header included.
	f.mu.Lock()
	f.leader, f.calls, f.answers = 1, nil, []func(replication.NodeID, []byte) ([]byte, error){served}
	f.mu.Unlock()
	want, _ := served(1, nil)
	if got := frameOf(t, p.poll, hdr, pollRequest(0)); !bytes.Equal(got, want[1:]) {
		t.Fatal("the leader's frame must be relayed unchanged")
	}
	if r, _, calls := run(1, notLeaderHint(2), served); r.Status != 0 || len(calls) != 2 || calls[1] != 2 {
		t.Fatalf("not-leader with a hint: status %d via %v", r.Status, calls)
	}
	if r, _, calls := run(1, notLeaderHint(2), notLeaderHint(1)); r.Status != wire.ErrTransientNotAccepted.Code || len(calls) != 2 {
		t.Fatalf("not-leader twice: status %d via %v", r.Status, calls)
	}
	lost := fmt.Errorf("call: %w", replication.ErrCallLost)
	if r, _, calls := run(1, failing(lost), served); r.Status != wire.ErrTransientNotCommitted.Code || len(calls) != 1 {
		t.Fatalf("lost: status %d via %v, want 57 without a retry", r.Status, calls)
	}
	if r, _, calls := run(1, failing(context.DeadlineExceeded)); r.Status != wire.ErrTransientNotCommitted.Code || len(calls) != 1 {
		t.Fatalf("deadline: status %d via %v, want 57", r.Status, calls)
	}
	// Unreachable: tried again once another leader is named.
	unreachable := func(replication.NodeID, []byte) ([]byte, error) {
		go func() { time.Sleep(30 * time.Millisecond); f.setLeader(2) }()
		return nil, fmt.Errorf("call: %w", replication.ErrCallUnreachable)
	}
	if r, _, calls := run(1, unreachable, served); r.Status != 0 || len(calls) != 2 || calls[1] != 2 {
		t.Fatalf("unreachable, then a new leader: status %d via %v", r.Status, calls)
	}

	// No leader known: 58 once the wait ends (the connection's context
	// here, replicated.LeaderWait at most).
	f.mu.Lock()
	f.known, f.calls = false, nil
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	conn := session.ForwardedConn(ctx, session.Binding{Client: client, Session: 77, UserID: 1}, "test")
	if r, _ := reply(t, frameOn(t, p.poll, hdr, pollRequest(0), conn)); r.Status != wire.ErrTransientNotAccepted.Code {
		t.Fatalf("no leader: status %d", r.Status)
	}
}
