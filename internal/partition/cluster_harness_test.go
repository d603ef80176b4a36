package partition

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/replication/transport"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// testNet is an in-memory network between hosts: envelopes are cloned (as
// serialisation would) and delivered at once; a node marked down neither
// sends nor receives.
type testNet struct {
	mu    sync.Mutex
	hosts map[replication.NodeID]*replication.Host
	down  map[replication.NodeID]bool
}

func newTestNet() *testNet {
	return &testNet{hosts: map[replication.NodeID]*replication.Host{}, down: map[replication.NodeID]bool{}}
}

type testEndpoint struct {
	n    *testNet
	self replication.NodeID
}

func (e testEndpoint) Send(to replication.NodeID, envs []transport.Envelope) {
	e.n.mu.Lock()
	h := e.n.hosts[to]
	blocked := e.n.down[e.self] || e.n.down[to]
	e.n.mu.Unlock()
	if h == nil || blocked {
		return
	}
	out := make([]transport.Envelope, len(envs))
	for i, env := range envs {
		out[i] = env
		if env.Msg != nil {
			out[i].Msg = proto.CloneOf(env.Msg)
		}
		if env.Prefix != nil {
			// One body on the wire.
			out[i].Data, out[i].Prefix = append(bytes.Clone(env.Prefix), env.Data...), nil
		}
	}
	h.Deliver(e.self, out)
}

func (n *testNet) setDown(id replication.NodeID) {
	n.mu.Lock()
	n.down[id] = true
	n.mu.Unlock()
}

// testReplicator is the broker's wrapper: a host plus the roster.
type testReplicator struct {
	mu     sync.Mutex
	h      *replication.Host
	self   replication.NodeID
	voters []replication.NodeID
	// noCompact refuses every compaction (a node stopped before its
	// compaction ran).
	noCompact bool
}

func (r *testReplicator) host() *replication.Host {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h
}

func (r *testReplicator) Self() replication.NodeID     { return r.self }
func (r *testReplicator) Voters() []replication.NodeID { return r.voters }
func (r *testReplicator) AddGroup(ctx context.Context, id replication.GroupID, o replication.GroupOptions) error {
	return r.host().AddGroup(ctx, id, o)
}
func (r *testReplicator) RemoveGroup(ctx context.Context, id replication.GroupID) error {
	return r.host().RemoveGroup(ctx, id)
}
func (r *testReplicator) Propose(ctx context.Context, id replication.GroupID, data []byte) (uint64, error) {
	return r.host().Propose(ctx, id, data)
}
func (r *testReplicator) Leader(id replication.GroupID) (replication.NodeID, bool) {
	return r.host().Leader(id)
}
func (r *testReplicator) WaitFor(ctx context.Context, id replication.GroupID, cond func(replication.View) bool) (replication.View, error) {
	return r.host().WaitFor(ctx, id, cond)
}
func (r *testReplicator) CompactTo(ctx context.Context, id replication.GroupID, index uint64, data []byte) error {
	if r.noCompact {
		return errors.New("compaction refused by the test")
	}
	return r.host().CompactTo(ctx, id, index, data)
}

// fastTiming: 10 ms ticks, 100 ms election timeout.
var fastTiming = replication.Timing{Tick: 10 * time.Millisecond, HeartbeatTicks: 1, ElectionTicks: 10}

// testNode is one replica: a plane and its host.
type testNode struct {
	id    replication.NodeID
	plane *Plane
	repl  *testReplicator
}

func (n *testNode) host() *replication.Host { return n.repl.host() }

// startHost starts a host for node id over net (each partition group gets
// its plane's replica as machine).
func startHost(t *testing.T, net *testNet, r *testReplicator, peers []replication.NodeID) {
	t.Helper()
	h, err := replication.New(replication.Config{
		Self: r.self, Peers: peers, Timing: fastTiming, Network: testEndpoint{net, r.self},
		Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.h = h
	r.mu.Unlock()
	net.mu.Lock()
	net.hosts[r.self] = h
	delete(net.down, r.self)
	net.mu.Unlock()
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newClusterPlane opens a cluster-mode plane in dir.
func newClusterPlane(t *testing.T, dir string, r *testReplicator, logs func(string) (replication.LogStorage, error), topics catalog.Topics) *Plane {
	t.Helper()
	return newClusterPlaneOpts(t, Options{Dir: dir, Replicator: r, LogStorage: logs}, topics)
}

// newClusterPlaneOpts opens a cluster-mode plane with opts (quiet logger,
// no retention loop).
func newClusterPlaneOpts(t *testing.T, opts Options, topics catalog.Topics) *Plane {
	t.Helper()
	opts.Logger, opts.RetentionInterval = quietLogger(), -1
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	p.SetTopics(topics)
	return p
}

// fakeTopics resolves one topic and allows everything.
type fakeTopics struct {
	ref catalog.TopicRef
	ids []uint32
}

func (f *fakeTopics) ResolveTopic(stream, topic wire.Identifier) (catalog.TopicRef, []uint32, error) {
	if stream.Num != f.ref.StreamID || topic.Num != f.ref.TopicID {
		return catalog.TopicRef{}, nil, wire.ErrTopicIDNotFound
	}
	return f.ref, f.ids, nil
}
func (f *fakeTopics) Allowed(uint32, catalog.Action, uint32, uint32) bool { return true }
func (f *fakeTopics) ResolveGroup(catalog.TopicRef, wire.Identifier) (uint32, error) {
	return 0, wire.ErrConsumerGroupIDNotFound
}
func (f *fakeTopics) GroupPartition(catalog.TopicRef, uint32, wire.Uint128, uint32, catalog.GroupAccess) error {
	return nil
}
func (f *fakeTopics) GroupPolled(catalog.TopicRef, uint32, wire.Uint128, uint32, uint64) error {
	return nil
}
func (f *fakeTopics) GroupCommitted(catalog.TopicRef, uint32, wire.Uint128, uint32, uint64) {}
func (f *fakeTopics) Replicas(catalog.TopicRef, uint32) []uint8                             { return nil }

// answer is a decoded reply.
type answer struct {
	status uint32
	body   []byte
}

// exchange runs handler h on a request of op with body for client.
func exchange(t *testing.T, h func(*dispatch.Exchange), op wire.Operation, client wire.Uint128, request uint64, body []byte) answer {
	t.Helper()
	a, err := runExchange(h, op, client, request, body)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runExchange is exchange for any goroutine.
func runExchange(h func(*dispatch.Exchange), op wire.Operation, client wire.Uint128, request uint64, body []byte) (answer, error) {
	x := &dispatch.Exchange{
		Header: wire.RequestHeader{Client: client, Request: request, Operation: op},
		Body:   bytes.Clone(body),
		Conn:   session.ReadConn(client, 1, "test"),
	}
	defer x.Reset()
	h(x)
	if !x.Answered {
		return answer{}, errors.New("request not answered")
	}
	var r wire.ReplyHeader
	if err := r.Decode(x.Head[:]); err != nil {
		return answer{}, err
	}
	out := bytes.Clone(x.Out)
	if x.Tail != nil {
		var b bytes.Buffer
		if _, err := x.Tail.WriteTo(&b); err != nil {
			return answer{}, err
		}
		out = append(out, b.Bytes()...)
	}
	return answer{status: r.Status, body: out}, nil
}

// sendBody is a SEND_MESSAGES body of n messages to partition 0 with
// payloads tagged by tag.
func sendBody(t *testing.T, ref catalog.TopicRef, n int, tag string) []byte {
	t.Helper()
	b, err := buildSend(ref, n, tag)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildSend is sendBody for any goroutine.
func buildSend(ref catalog.TopicRef, n int, tag string) ([]byte, error) {
	var b wire.BatchBuilder
	b.Reset(nil)
	for i := range n {
		if err := b.Add(wire.Uint128{Lo: uint64(i + 1)}, 10, []byte(tag), nil); err != nil {
			return nil, err
		}
	}
	batch, err := b.Finish()
	if err != nil {
		return nil, err
	}
	s := wire.SendMessages{StreamID: wire.NumericID(ref.StreamID), TopicID: wire.NumericID(ref.TopicID),
		Partitioning: wire.Partitioning{Kind: wire.PartitionByID, PartitionID: 0}}
	s.SetBatch(batch)
	return s.AppendTo(nil), nil
}

// sendTo sends and returns the status and the base offset (or -1 for an
// empty success).
func csend(t *testing.T, p *Plane, client wire.Uint128, request uint64, body []byte) (uint32, int64) {
	t.Helper()
	a := exchange(t, p.send, wire.OpSendMessages, client, request, body)
	if a.status != 0 {
		return a.status, 0
	}
	switch len(a.body) {
	case 4:
		if binary.LittleEndian.Uint32(a.body) != 0 {
			t.Fatalf("short confirmation %x", a.body)
		}
		return 0, -1
	case 24:
		return 0, int64(binary.LittleEndian.Uint64(a.body[16:]))
	}
	t.Fatalf("send reply body %x", a.body)
	return 0, 0
}

// pollAll polls partition 0 from offset 0 (no auto-commit) and returns the
// reply body.
func pollAll(t *testing.T, p *Plane, ref catalog.TopicRef) []byte {
	t.Helper()
	req := wire.PollMessages{Consumer: wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(7)},
		StreamID: wire.NumericID(ref.StreamID), TopicID: wire.NumericID(ref.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Strategy: wire.PollingStrategy{Kind: wire.PollOffset}, Count: 1000}
	a := exchange(t, p.poll, wire.OpNonReplicated, wire.Uint128{Lo: 99}, 0, req.AppendTo(nil))
	if a.status != 0 {
		t.Fatalf("poll status %d", a.status)
	}
	return a.body
}

// eventually retries cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// replicaOf returns the replica of group g on p (nil if none): the
// committer of its partition.
func replicaOf(p *Plane, g replication.GroupID) *replicated.Replica {
	part := p.lookup(uint64(g)>>24, uint32(g)&(1<<24-1))
	if part == nil {
		return nil
	}
	rep, _ := part.commit.(*replicated.Replica)
	return rep
}

// purgeEntry is the raw log entry of the purge of identity id proposed by
// node origin, laid out as internal/partition/replicated/entry.go says: a
// second node proposing a purge its keeper believes wanted.
func purgeEntry(origin uint32, id uint64) []byte {
	b := []byte{5, 1, 0, 0} // kind purge, version 1, no flags, plaintext
	b = binary.LittleEndian.AppendUint32(b, origin)
	b = append(b, make([]byte, 40)...) // nonce, client, request, hash
	return binary.LittleEndian.AppendUint64(b, id)
}
