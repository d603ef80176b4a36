package tier

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
)

// rig is a partition with a remote tier over a real object store.
type rig struct {
	t      *testing.T
	srv    *objstoretest.Server
	store  *objstore.Store
	state  string
	dir    string
	prefix string
	clock  *fakeClock
	m      *Manager
	log    *storage.Partition
	p      *Partition
	recs   [][]byte // stamped records, by append order
	counts []int
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const (
	testSegmentBytes = 64 << 10
	testChunkBytes   = 16 << 10
)

func newRig(t *testing.T, keep LocalRetention) *rig {
	t.Helper()
	srv := objstoretest.Start(t)
	r := &rig{t: t, srv: srv, state: t.TempDir(), dir: t.TempDir(), prefix: "it",
		clock: &fakeClock{now: time.Now()}}
	store, err := objstore.New(srv.Config(r.prefix))
	if err != nil {
		t.Fatal(err)
	}
	r.store = store
	r.open(keep)
	t.Cleanup(r.close)
	return r
}

func (r *rig) open(keep LocalRetention) {
	r.t.Helper()
	m, err := NewManager(Options{Bucket: r.store, StateDir: r.state, CacheBytes: 1 << 20,
		ChunkBytes: testChunkBytes, UploadInterval: 20 * time.Millisecond,
		RequestTimeout: 5 * time.Second, LocalRetention: keep, Clock: r.clock.Now})
	if err != nil {
		r.t.Fatal(err)
	}
	format := commit.BatchFormat{PartitionID: 0}
	log, err := storage.Open(r.dir, storage.Options{Format: format, SegmentBytes: testSegmentBytes,
		FlushInterval: -1, Clock: r.clock.Now})
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := m.Open(PartitionRef{StreamID: 1, TopicID: 2, Incarnation: 3}, r.dir, log, format, keep, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.m, r.log, r.p = m, log, p
}

func (r *rig) close() {
	if r.m == nil {
		return
	}
	r.p.Close()
	if err := r.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
		r.t.Error(err)
	}
	if err := r.m.Close(); err != nil {
		r.t.Error(err)
	}
	r.m = nil
}

// append adds n records of k messages each.
func (r *rig) append(n, k int) {
	r.t.Helper()
	for range n {
		rec := testutil.Batch(r.t, k)
		if _, err := r.log.Append(rec, uint32(k)); err != nil {
			r.t.Fatal(err)
		}
		r.recs = append(r.recs, rec)
		r.counts = append(r.counts, k)
	}
}

// waitFor polls cond for up to 20 s.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			_, tiers := r.p.Stats()
			r.t.Fatalf("timed out waiting for %s; tiers %+v, stats %+v", what, tiers, r.m.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// uploadedAll waits until every sealed segment is in the bucket and
// only the active one is local.
func (r *rig) uploadedAll() Tiers {
	r.t.Helper()
	var tiers Tiers
	r.waitFor("uploads and local drops", func() bool {
		_, tiers = r.p.Stats()
		return tiers.PendingSegments == 0 && len(r.log.Sealed()) == 0 && tiers.RemoteSegments > 0
	})
	return tiers
}

// readAll reads the whole log from offset 0 through the tiered
// partition and returns the record bytes.
func (r *rig) readAll() []byte {
	r.t.Helper()
	var out bytes.Buffer
	var rr storage.ReadResult
	defer rr.Release()
	_, next := r.p.Bounds()
	for from := uint64(0); from < next; {
		if err := r.p.Read(context.Background(), &rr, from, 1000, 1<<20); err != nil {
			r.t.Fatalf("read from %d: %v", from, err)
		}
		if len(rr.Extents) == 0 {
			r.t.Fatalf("read from %d returned nothing (next %d)", from, next)
		}
		for i := range rr.Extents {
			e := &rr.Extents[i]
			if _, err := io.Copy(&out, io.NewSectionReader(e, 0, e.Len)); err != nil {
				r.t.Fatal(err)
			}
			from = e.EndOffset
		}
	}
	return out.Bytes()
}

func (r *rig) want() []byte { return bytes.Join(r.recs, nil) }

func (r *rig) objects() []objstore.Object {
	r.t.Helper()
	objs, err := r.store.List(context.Background(), r.store.Key("streams/"))
	if err != nil {
		r.t.Fatal(err)
	}
	return objs
}

func TestUploadDropAndReadBack(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(300, 20) // 300 records of about 1.5 KiB: several segments
	tiers := r.uploadedAll()
	if tiers.RemoteOnlySegments != tiers.RemoteSegments || tiers.RemoteOnlyBytes == 0 {
		t.Fatalf("tiers %+v: want every uploaded segment dropped locally", tiers)
	}
	first, next := r.p.Bounds()
	if first != 0 || next != uint64(300*20) {
		t.Fatalf("bounds %d..%d, want 0..%d", first, next, 300*20)
	}
	if lf, _ := r.log.Bounds(); lf == 0 {
		t.Fatal("local log still starts at 0: nothing was dropped")
	}
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatalf("read back %d bytes differing from the %d appended", len(got), len(r.want()))
	}
	if objs := r.objects(); len(objs) != 2*tiers.RemoteSegments {
		t.Fatalf("%d objects in the bucket, want %d (log and index per segment)", len(objs), 2*tiers.RemoteSegments)
	}
	st := r.m.Stats()
	if st.Cache.Misses == 0 || st.Fetch.Count == 0 {
		t.Fatalf("stats %+v: remote reads did not fetch", st)
	}
	// Read again: served from the cache.
	hits := st.Cache.Hits
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("second read differs")
	}
	if r.m.Stats().Cache.Hits <= hits {
		t.Fatal("second read did not hit the cache")
	}
}

func TestRestartKeepsManifestAndDoesNotDuplicate(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(200, 20)
	tiers := r.uploadedAll()
	r.close()
	// A restart that lost the manifest (a crash between uploads and the
	// manifest save, at worst): uploads again under the same keys.
	r.open(LocalRetention{Bytes: Unlimited})
	if _, t2 := r.p.Stats(); t2.RemoteSegments != tiers.RemoteSegments {
		t.Fatalf("after restart %d remote segments, want %d", t2.RemoteSegments, tiers.RemoteSegments)
	}
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("read back after restart differs")
	}
	r.append(100, 20)
	r.waitFor("new segments uploaded", func() bool {
		_, t3 := r.p.Stats()
		return t3.PendingSegments == 0
	})
	_, t3 := r.p.Stats()
	if objs := r.objects(); len(objs) != 2*t3.RemoteSegments {
		t.Fatalf("%d objects for %d segments", len(objs), t3.RemoteSegments)
	}
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("read back differs")
	}
}

func TestCrashBeforeManifestUploadsSameKeys(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: Unlimited})
	r.append(200, 20)
	r.waitFor("uploads", func() bool {
		_, tiers := r.p.Stats()
		return tiers.PendingSegments == 0
	})
	before := r.objects()
	r.close()
	// The manifest is lost: every segment is local still (unlimited local
	// retention), so each is uploaded again, to the same keys.
	if err := os.Remove(r.dir + "/" + manifestName); err != nil {
		t.Fatal(err)
	}
	r.open(LocalRetention{Bytes: Unlimited})
	r.waitFor("uploads after the lost manifest", func() bool {
		_, tiers := r.p.Stats()
		return tiers.PendingSegments == 0
	})
	after := r.objects()
	if len(after) != len(before) {
		t.Fatalf("%d objects after re-upload, %d before", len(after), len(before))
	}
	for i := range after {
		if after[i] != before[i] {
			t.Fatalf("object %d: %+v, before %+v", i, after[i], before[i])
		}
	}
}

func TestRetentionRemovesRemoteObjects(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(200, 20)
	r.clock.Add(2 * time.Hour)
	r.append(100, 20)
	tiers := r.uploadedAll()
	rm, err := r.p.Retain(storage.Retention{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rm.Messages == 0 {
		t.Fatal("retention removed nothing")
	}
	first, _ := r.p.Bounds()
	if first != rm.Messages {
		t.Fatalf("first offset %d after removing %d messages", first, rm.Messages)
	}
	r.waitFor("remote deletions", func() bool {
		_, t2 := r.p.Stats()
		return len(r.objects()) == 2*t2.RemoteSegments && len(r.p.man.Load().Deletes) == 0
	})
	_, t2 := r.p.Stats()
	if t2.RemoteSegments >= tiers.RemoteSegments {
		t.Fatalf("remote segments %d, before %d", t2.RemoteSegments, tiers.RemoteSegments)
	}
	// Everything left reads back.
	var rr storage.ReadResult
	defer rr.Release()
	if err := r.p.Read(context.Background(), &rr, 0, 10, 0); err != nil || len(rr.Extents) == 0 || rr.Extents[0].FirstOffset != first {
		t.Fatalf("read from 0 after retention: %v %+v, want first offset %d", err, rr.Extents, first)
	}
}

func TestPurgeDeletesEverything(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(200, 20)
	r.uploadedAll()
	if err := r.p.Purge(0); err != nil {
		t.Fatal(err)
	}
	if first, next := r.p.Bounds(); first != 0 || next != 0 {
		t.Fatalf("bounds %d..%d after purge", first, next)
	}
	r.waitFor("deletion of every object", func() bool { return len(r.objects()) == 0 })
	r.recs = nil
	r.append(150, 20)
	r.uploadedAll()
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("read back after purge differs")
	}
	for _, o := range r.objects() {
		if !strings.Contains(o.Key, "/e1/") {
			t.Fatalf("object %s is not in the new epoch", o.Key)
		}
	}
}

func TestStoreDownKeepsLocalAndCatchesUp(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.srv.Stop(t)
	r.append(200, 20)
	r.waitFor("failed passes", func() bool { return r.m.Stats().Failures > 0 })
	if _, tiers := r.p.Stats(); tiers.PendingSegments == 0 || tiers.RemoteSegments != 0 {
		t.Fatalf("tiers %+v while the store is down", tiers)
	}
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("local read while the store is down differs")
	}
	r.srv.Restart(t)
	// The backoff after a few failures is a few seconds.
	r.uploadedAll()
	if got := r.readAll(); !bytes.Equal(got, r.want()) {
		t.Fatal("read back after catching up differs")
	}
}

func TestCorruptRemoteObjectIsNotServed(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(200, 20)
	r.uploadedAll()
	seg := r.p.man.Load().Segments[0]
	path := r.srv.ObjectPath(seg.Key)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var rr storage.ReadResult
	defer rr.Release()
	off := seg.Start + (seg.End-seg.Start)/3
	err = r.p.Read(context.Background(), &rr, off, 100, 0)
	if !errors.Is(err, ErrRemoteRead) || !strings.Contains(err.Error(), seg.Key) {
		t.Fatalf("read of a damaged object: %v, want ErrRemoteRead naming %s", err, seg.Key)
	}
	if len(rr.Extents) != 0 {
		t.Fatal("extents returned with the error")
	}
	if st := r.m.Stats().Cache; st.Chunks != 0 || st.Failures == 0 {
		t.Fatalf("cache %+v: the damaged chunk must fail its fetch and not be cached", st)
	}
}

func TestOffsetForTimestampAcrossTiers(t *testing.T) {
	r := newRig(t, LocalRetention{Bytes: 0})
	r.append(100, 20)
	r.clock.Add(time.Minute)
	mark := uint64(r.clock.Now().UnixMicro())
	r.append(100, 20)
	r.clock.Add(time.Minute)
	r.append(100, 20)
	r.uploadedAll()
	off, ok, err := r.p.OffsetForTimestamp(context.Background(), mark)
	if err != nil || !ok || off != 100*20 {
		t.Fatalf("offset for timestamp: %d %v %v, want %d", off, ok, err, 100*20)
	}
}
