package partition

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// windowOf returns the duplicate window of partition 0 on p.
func windowOf(p *Plane) []session.ClientWindow {
	return p.lookup(clusterRef.Incarnation, 0).window.Export(session.DefaultPartitionWindowClients)
}

// TestClusterWindowSurvivesSnapshot: while a replica is down, a client's
// send applies and the log is compacted past it; the replica catches up from
// the snapshot and becomes leader, and the client's retry of that send
// (same client id, request number and body) gets the duplicate's empty
// success there, with no second append. Every replica ends with the same
// window: the snapshot's is the window at its index, the leader's holds
// each request once.
func TestClusterWindowSurvivesSnapshot(t *testing.T) {
	net, nodes, g, sendOther := segmentedCluster(t)
	retrier, other := wire.Uint128{Lo: 42, Hi: 7}, segmentedClient
	req := 0 // requests of other
	send := func(n int) { t.Helper(); sendOther(n); req++ }
	for range 2 {
		send(2)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "first batches everywhere", func() bool { return messages(nd.plane) == 4 })
	}
	net.setDown(2)
	// Node 2 never sees this send: it learns of it from the snapshot.
	first := sendBody(t, clusterRef, 2, "first")
	if st, base := csend(t, nodes[0].plane, retrier, 1, first); st != 0 || base != 4 {
		t.Fatalf("first send: status %d base %d", st, base)
	}
	compactWhileDown(t, net, nodes, g, send)
	send(2)
	part2 := nodes[2].plane.lookup(clusterRef.Incarnation, 0)
	eventually(t, 10*time.Second, "the lagging replica caught up from the snapshot", func() bool {
		f, next := part2.log.Bounds()
		return f == 8 && next == 14
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nodes[0].host().TransferLeadership(ctx, g, 2); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, nodes[2], g, func(v replication.View) bool { return v.Role == replication.RoleLeader })
	if st, base := csend(t, nodes[2].plane, retrier, 1, first); st != 0 || base != -1 {
		t.Fatalf("retry on the restored replica: status %d base %d, want the duplicate's empty success", st, base)
	}
	// A new request of the same client still appends.
	if st, base := csend(t, nodes[2].plane, retrier, 2, sendBody(t, clusterRef, 1, "next")); st != 0 || base != 14 {
		t.Fatalf("next send on the restored replica: status %d base %d", st, base)
	}
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the last batch everywhere", func() bool {
			next, _ := nd.plane.lookup(clusterRef.Incarnation, 0).log.Tail()
			return next == 15
		})
	}
	want := windowOf(nodes[2].plane)
	for _, nd := range nodes {
		eventually(t, 5*time.Second, "the same window everywhere", func() bool { return reflect.DeepEqual(windowOf(nd.plane), want) })
	}
	for _, c := range want {
		if c.Client == other && len(c.Committed) != req {
			t.Fatalf("client %v remembers %d requests, sent %d: %+v", other, len(c.Committed), req, c.Committed)
		}
	}
}

// singleNode starts a one-replica cluster plane in dir over the raft log
// kept, with partition 0 of ref, and returns it with a stop function.
func singleNode(t *testing.T, dir string, kept replication.LogStorage, ref catalog.TopicRef) (*Plane, func()) {
	t.Helper()
	logs := func(string) (replication.LogStorage, error) { return kept, nil }
	voters := []replication.NodeID{0}
	r := &testReplicator{self: 0, voters: voters}
	p := newClusterPlane(t, dir, r, logs, &fakeTopics{ref: clusterRef, ids: []uint32{0}})
	startHost(t, newTestNet(), r, voters)
	nd := &testNode{id: 0, plane: p, repl: r}
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, nd, replicated.GroupID(clusterRef, 0), func(v replication.View) bool { return v.Role == replication.RoleLeader && v.Applied == v.Commit })
	return p, func() {
		nd.host().Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClusterWindowSurvivesRestartAfterCompaction: a node whose log was
// compacted past a send restarts and replays from the log's snapshot; a
// retry of that send gets the duplicate's empty success.
func TestClusterWindowSurvivesRestartAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	kept := replication.NewMemoryLog()
	ref := clusterRef
	ref.Settings.SegmentSize = 1
	client := wire.Uint128{Lo: 5}

	p, stop := singleNode(t, dir, kept, ref)
	for i := range 4 {
		if st, base := csend(t, p, client, uint64(i+1), sendBody(t, clusterRef, 2, "x")); st != 0 || base != int64(2*i) {
			t.Fatalf("send %d: status %d base %d", i, st, base)
		}
	}
	before, err := kept.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteSegments(ref, 0, 2); err != nil {
		t.Fatal(err)
	}
	part := p.lookup(clusterRef.Incarnation, 0)
	eventually(t, 5*time.Second, "segments removed", func() bool { f, _ := part.log.Bounds(); return f == 4 })
	if now, err := kept.FirstIndex(); err != nil || now <= before {
		t.Fatalf("raft log not compacted: first index %d, before %d (%v)", now, before, err)
	}
	stop()

	p, stop = singleNode(t, dir, kept, ref)
	defer stop()
	if st := p.PartitionStats(ref, 0); st.Messages != 4 {
		t.Fatalf("after restart: %+v", st)
	}
	if st, base := csend(t, p, client, 1, sendBody(t, clusterRef, 2, "x")); st != 0 || base != -1 {
		t.Fatalf("retry of a compacted send after restart: status %d base %d, want the duplicate's empty success", st, base)
	}
	if st := p.PartitionStats(ref, 0); st.Messages != 4 {
		t.Fatalf("the retry appended: %+v", st)
	}
}

// TestStateAtIsTheAppliedState: the state stateAt rebuilds from the log's
// snapshot and headers (duplicate window, last purge, consumer offsets) is
// the state apply built, including a windowed entry whose apply failed (a
// delete of a missing offset, which does not enter the window), entries
// after a compaction and after a purge; and at an earlier index it is the
// state as of that index, not the live one (no later offset write, no
// later purge).
func TestStateAtIsTheAppliedState(t *testing.T) {
	ref := clusterRef
	ref.Settings.SegmentSize = 1
	p, stop := singleNode(t, t.TempDir(), replication.NewMemoryLog(), ref)
	defer stop()
	g := replicated.GroupID(clusterRef, 0)
	rep := replicaOf(p, g)
	a, b := wire.Uint128{Lo: 1}, wire.Uint128{Lo: 2}
	consumer := func(id uint32) wire.Consumer { return wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(id)} }
	del := wire.DeleteConsumerOffset{Consumer: consumer(3),
		StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
		Partition: wire.OptPartition{Present: true, ID: 0}, Ack: wire.AckQuorum}
	store := func(req uint64, id uint32, offset uint64) {
		t.Helper()
		body := wire.StoreConsumerOffset{Consumer: consumer(id),
			StreamID: wire.NumericID(clusterRef.StreamID), TopicID: wire.NumericID(clusterRef.TopicID),
			Partition: wire.OptPartition{Present: true, ID: 0}, Offset: offset, Ack: wire.AckQuorum}
		if x := exchange(t, p.storeOffset, wire.OpStoreConsumerOffset, b, req, body.AppendTo(nil)); x.status != 0 {
			t.Fatalf("store offset %d of consumer %d: status %d", offset, id, x.status)
		}
	}
	applied := func() uint64 {
		t.Helper()
		last := rep.State().LastIndex
		// The view may lag the apply the reply waited for.
		return waitLeader(t, &testNode{plane: p, repl: p.opts.Replicator.(*testReplicator)}, g, func(v replication.View) bool { return v.Applied >= last }).Applied
	}
	live := func() replicated.PartitionState {
		return replicated.PartitionState{Window: windowOf(p), Purge: rep.State().PurgeApplied, Offsets: p.lookup(clusterRef.Incarnation, 0).log.Offsets().All()}
	}
	check := func(what string, index uint64, want replicated.PartitionState) {
		t.Helper()
		got, err := rep.StateAt(index)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Offsets) == 0 {
			want.Offsets = []storage.OffsetEntry{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: state at index %d\n%+v\nwant\n%+v", what, index, got, want)
		}
	}
	for i := uint64(1); i <= 3; i++ {
		csend(t, p, a, i, sendBody(t, clusterRef, 1, "a"))
		csend(t, p, b, i, sendBody(t, clusterRef, 1, "b"))
	}
	if x := exchange(t, p.deleteOffset, wire.OpDeleteConsumerOffset, a, 9, del.AppendTo(nil)); x.status != wire.ErrConsumerOffsetNotFound.Code {
		t.Fatalf("delete of nothing: status %d", x.status)
	}
	store(10, 4, 1)
	store(11, 5, 2)
	check("before a compaction", applied(), live())
	if err := p.DeleteSegments(ref, 0, 3); err != nil {
		t.Fatal(err)
	}
	part := p.lookup(clusterRef.Incarnation, 0)
	eventually(t, 5*time.Second, "segments removed", func() bool { f, _ := part.log.Bounds(); return f == 3 })
	csend(t, p, a, 4, sendBody(t, clusterRef, 1, "a"))
	store(12, 4, 0) // a store may move back
	at, then := applied(), live()
	check("after a compaction", at, then)
	// The retry of the failed delete fails again: it was never committed.
	if x := exchange(t, p.deleteOffset, wire.OpDeleteConsumerOffset, a, 9, del.AppendTo(nil)); x.status != wire.ErrConsumerOffsetNotFound.Code {
		t.Fatalf("retried delete of nothing: status %d", x.status)
	}
	// Later offset writes and a purge do not reach the state at an
	// earlier index. The plane's worker is held meanwhile, so the
	// compaction at the purge waits and the purge entry is read from the
	// log.
	hold := make(chan struct{})
	p.mode.(replicatedMode).set.Hold(hold)
	store(13, 5, 3)
	if err := p.PurgeTopic(purgeRef(7)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "purge", func() bool { return rep.State().PurgeApplied == 7 })
	csend(t, p, a, 5, sendBody(t, clusterRef, 1, "a"))
	store(14, 6, 0)
	check("at the index before the later writes", at, then)
	if now := live(); now.Purge != 7 || len(now.Offsets) != 1 {
		t.Fatalf("live state after the purge: %+v", now)
	}
	check("across a purge", applied(), live())
	close(hold)
	eventually(t, 5*time.Second, "compaction at the purge", func() bool {
		return rep.State().SnapshotPurge == 7
	})
	check("after a purge", applied(), live())
}
