package replicated

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

// fakeLocal is a partition's plane-side state in tests of a bare log.
type fakeLocal struct {
	tag    uint8
	from   uint64
	verify func([]byte) error
}

func (l fakeLocal) Sealing() (uint8, uint64) { return l.tag, l.from }
func (l fakeLocal) VerifySealed(rec []byte) error {
	if l.verify == nil {
		return nil
	}
	return l.verify(rec)
}
func (fakeLocal) Purge(uint64) error         { return nil }
func (fakeLocal) Counted(error, uint32, int) {}
func (fakeLocal) ApplyTier([]byte) error     { return nil }
func (fakeLocal) TierSnapshot() []byte       { return nil }
func (fakeLocal) RestoreTier([]byte) error   { return nil }

// testRef is the topic of the bare replicas.
var testRef = catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 5, Settings: wire.DefaultTopicSettings()}

// hostless is a Replicator without a host: every blocking call fails at
// once (the Set's lifecycle worker is closed, so no group starts).
type hostless struct{}

func (hostless) Self() replication.NodeID     { return 0 }
func (hostless) Voters() []replication.NodeID { return []replication.NodeID{0} }
func (hostless) AddGroup(context.Context, replication.GroupID, replication.GroupOptions) error {
	return replication.ErrStopped
}
func (hostless) RemoveGroup(context.Context, replication.GroupID) error {
	return replication.ErrStopped
}
func (hostless) Propose(context.Context, replication.GroupID, []byte) (uint64, error) {
	return 0, replication.ErrStopped
}
func (hostless) Leader(replication.GroupID) (replication.NodeID, bool) { return 0, false }
func (hostless) WaitFor(context.Context, replication.GroupID, func(replication.View) bool) (replication.View, error) {
	return replication.View{}, replication.ErrStopped
}
func (hostless) CompactTo(context.Context, replication.GroupID, uint64, []byte) error {
	return replication.ErrStopped
}

// bareReplica returns the replica of partition 0 of testRef over a held
// storage partition in a temporary directory, in a Set without a host.
func bareReplica(t *testing.T) *Replica {
	t.Helper()
	dir := t.TempDir()
	log, err := storage.Open(dir, storage.Options{Format: commit.BatchFormat{}, Held: true})
	if err != nil {
		t.Fatal(err)
	}
	s := New(hostless{}, Options{Logger: quiet()})
	s.ops.close() // no host: keep the group lifecycle from running
	rep := s.Add(testRef, Partition{ID: 0, Dir: dir, Log: log, Window: commit.NewWindow(0)})
	t.Cleanup(func() {
		s.Close()
		_ = log.Close()
	})
	return rep
}

// appendBatch appends a batch of n messages to rep's partition.
func appendBatch(t *testing.T, rep *Replica, n int) {
	t.Helper()
	if _, err := rep.part.Log.Append(testutil.Batch(t, n), uint32(n)); err != nil {
		t.Fatal(err)
	}
}

// stampFixture is a stampLog over a log with the replica whose Prepare
// hook it serves, as a group's start wires them.
type stampFixture struct {
	*stampLog
	rep *Replica
}

// newTestStamp wraps st for partition pid with clock; the requests in
// committed are in the duplicate window.
func newTestStamp(st replication.LogStorage, pid uint32, clock func() time.Time, stored func() (uint64, uint64), committed ...commit.Key) (stampFixture, error) {
	w := commit.NewWindow(0)
	for _, k := range committed {
		w.Commit(k)
	}
	rep := &Replica{set: &Set{opts: Options{Clock: clock}}, part: &Partition{ID: pid, Window: w}, reqs: newRequests(w)}
	s, err := newStampLog(st, pid, stored, rep.reqs)
	if err != nil {
		return stampFixture{}, err
	}
	rep.stamp.Store(s)
	return stampFixture{stampLog: s, rep: rep}, nil
}

// prepare is the replica's Prepare hook.
func (f stampFixture) prepare(data []byte) (func(), error) { return f.rep.prepare(data) }

// applied is what apply tells the log and the requests.
func (f stampFixture) applied(index uint64, data []byte) {
	f.stampLog.applied(index, data)
	if key, ok := windowKeyOf(data); ok {
		f.rep.reqs.leave(index, key)
	}
}

// quiet is a logger that writes nothing.
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
