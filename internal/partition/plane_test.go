package partition

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

func newPlane(t *testing.T, dir string) *Plane {
	t.Helper()
	p, err := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func appendTo(t *testing.T, p *Plane, ref catalog.TopicRef, id uint32, n int) storage.AppendResult {
	t.Helper()
	part := p.lookup(ref.Incarnation, id)
	if part == nil || part.log == nil {
		t.Fatalf("partition %d not open", id)
	}
	res, err := part.log.Append(testutil.Batch(t, n), uint32(n))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestDataIdempotentAndLayout(t *testing.T) {
	dir := t.TempDir()
	p := newPlane(t, dir)
	ref := catalog.TopicRef{StreamID: 2, TopicID: 3, Incarnation: 17, Settings: wire.DefaultTopicSettings()}
	for range 2 {
		if err := p.CreatePartitions(ref, []uint32{0, 1}); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(dir, "2", "topics", "3-17", "partitions", "1")
	if st, err := os.Stat(want); err != nil || !st.IsDir() {
		t.Fatalf("partition directory %s: %v", want, err)
	}
	appendTo(t, p, ref, 0, 3)
	// Creating again keeps the open partition and its data.
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	if st := p.PartitionStats(ref, 0); st.Messages != 3 || st.CurrentOffset != 2 || st.Segments != 1 || st.SizeBytes == 0 {
		t.Fatalf("stats %+v", st)
	}
	if st := p.PartitionStats(ref, 9); st != (catalog.PartitionStats{}) {
		t.Fatalf("unknown partition stats %+v", st)
	}
	for range 2 {
		if err := p.DeletePartitions(ref, []uint32{1, 5}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted partition directory still there: %v", err)
	}
	for range 2 {
		if err := p.DeleteTopic(ref); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty stream directory left: %v", err)
	}
	// Idempotent operations on what is gone.
	if err := p.PurgeTopic(ref); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteSegments(ref, 0, 3); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteGroupOffsets(ref, 1); err != nil {
		t.Fatal(err)
	}
}

// TestRecycledIDsSeeNoOldData: a topic re-created under the same stream
// and topic ids (a new incarnation) starts empty even if the old files
// were never removed (a crash before DeleteTopic).
func TestRecycledIDsSeeNoOldData(t *testing.T) {
	dir := t.TempDir()
	p := newPlane(t, dir)
	old := catalog.TopicRef{StreamID: 0, TopicID: 0, Incarnation: 1, Settings: wire.DefaultTopicSettings()}
	if err := p.CreatePartitions(old, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	appendTo(t, p, old, 0, 5)
	fresh := old
	fresh.Incarnation = 2
	if err := p.CreatePartitions(fresh, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	if st := p.PartitionStats(fresh, 0); st.Messages != 0 {
		t.Fatalf("new incarnation sees %d old messages", st.Messages)
	}
	if st := p.PartitionStats(old, 0); st.Messages != 5 {
		t.Fatalf("old incarnation lost data: %+v", st)
	}
}

func TestPurgeSegmentsAndGroupOffsets(t *testing.T) {
	p := newPlane(t, t.TempDir())
	s := wire.DefaultTopicSettings()
	s.SegmentSize = 512
	ref := catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 3, Settings: s}
	if err := p.CreatePartitions(ref, []uint32{0, 1}); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		appendTo(t, p, ref, 0, 4) // 476 bytes: two batches per segment
	}
	offs := p.lookup(3, 0).log.Offsets()
	if err := offs.Store(storage.KindGroup, 9, 3); err != nil {
		t.Fatal(err)
	}
	if err := offs.Store(storage.KindConsumer, 9, 3); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteGroupOffsets(ref, 9); err != nil {
		t.Fatal(err)
	}
	if _, ok := offs.Get(storage.KindGroup, 9); ok {
		t.Fatal("group offset not deleted")
	}
	if _, ok := offs.Get(storage.KindConsumer, 9); !ok {
		t.Fatal("consumer offset with the same id deleted")
	}
	before := p.PartitionStats(ref, 0)
	if err := p.DeleteSegments(ref, 0, 1); err != nil {
		t.Fatal(err)
	}
	after := p.PartitionStats(ref, 0)
	if before.Segments != 3 || after.Segments != 2 || after.Messages != 8 || after.CurrentOffset != 15 {
		t.Fatalf("before %+v after %+v", before, after)
	}
	if err := p.PurgeTopic(ref); err != nil {
		t.Fatal(err)
	}
	if st := p.PartitionStats(ref, 0); st.Messages != 0 || st.Segments != 1 || st.CurrentOffset != 0 {
		t.Fatalf("after purge %+v", st)
	}
	if _, ok := offs.Get(storage.KindConsumer, 9); ok {
		t.Fatal("purge kept a consumer offset")
	}
	if res := appendTo(t, p, ref, 0, 1); res.BaseOffset != 0 {
		t.Fatalf("offsets restart at %d after purge", res.BaseOffset)
	}
}

func TestRetentionPolicy(t *testing.T) {
	p := &Plane{opts: Options{MaxFrameBytes: 1 << 20}}
	s := wire.DefaultTopicSettings()
	if r := p.retentionPolicy(s, 3); r != (storage.Retention{}) {
		t.Fatalf("defaults retain forever, got %+v", r)
	}
	s.MessageExpiry = 0
	s.MaxTopicSize = 0
	if r := p.retentionPolicy(s, 3); r != (storage.Retention{}) {
		t.Fatalf("0 is the server default (never), got %+v", r)
	}
	s.MessageExpiry = 90_000_000
	s.SegmentSize = 1 << 20
	s.MaxTopicSize = 30 << 20
	r := p.retentionPolicy(s, 3)
	if r.MaxAge != 90*time.Second || r.MaxBytes != 10<<20 {
		t.Fatalf("policy %+v", r)
	}
	s.MaxTopicSize = 3 << 20
	if r := p.retentionPolicy(s, 3); r.MaxBytes != 2<<20 {
		t.Fatalf("budget floor segment_size + max_message_size: %+v", r)
	}
}

func TestPickPartition(t *testing.T) {
	tp := &topic{}
	ids := []uint32{0, 1, 2}
	for i, want := range []uint32{1, 2, 0, 1} {
		if got, ok := pick(&tp.rr, wire.BalancedPartitioning(), ids); !ok || got != want {
			t.Fatalf("balanced pick %d = %d, want %d", i, got, want)
		}
	}
	if _, ok := pick(&tp.rr, wire.PartitioningByID(3), ids); ok {
		t.Fatal("unknown partition picked")
	}
	if _, ok := pick(&tp.rr, wire.BalancedPartitioning(), nil); ok {
		t.Fatal("a topic without partitions picked one")
	}
	// XXH32("a") = 0x550D7456; % 3 = 1.
	if got, _ := pick(&tp.rr, wire.PartitioningByKey([]byte("a")), ids); got != 0x550D7456%3 {
		t.Fatalf("key pick %d", got)
	}
}

func TestBatchFormat(t *testing.T) {
	f := commit.BatchFormat{PartitionID: 4}
	rec := testutil.Batch(t, 3)
	if n, err := f.RecordLen(rec[:wire.BatchHeaderSize]); err != nil || n != int64(len(rec)) {
		t.Fatalf("RecordLen %d %v", n, err)
	}
	f.Stamp(rec, 40, 123456)
	info, err := f.Verify(rec)
	if err != nil || info != (storage.RecordInfo{BaseOffset: 40, Count: 3, Timestamp: 123456}) {
		t.Fatalf("Verify %+v %v", info, err)
	}
	v, _, _ := wire.ParseBatch(rec)
	if v.PartitionID() != 4 {
		t.Fatalf("partition id %d", v.PartitionID())
	}
	rec[len(rec)-1] ^= 1
	if _, err := f.Verify(rec); !errors.Is(err, wire.ErrInvalidMessageChecksum) {
		t.Fatalf("corrupt record verifies: %v", err)
	}
	if _, err := f.RecordLen(make([]byte, wire.BatchHeaderSize)); err == nil {
		t.Fatal("batch_length 0 accepted")
	}
}

func FuzzBatchFormat(f *testing.F) {
	var b wire.BatchBuilder
	b.Reset(nil)
	_ = b.Add(wire.Uint128{Lo: 1}, 1, []byte("x"), nil)
	seed, _ := b.Finish()
	f.Add(seed)
	f.Add(make([]byte, wire.BatchHeaderSize))
	f.Fuzz(func(t *testing.T, rec []byte) {
		bf := commit.BatchFormat{PartitionID: 1}
		if len(rec) >= wire.BatchHeaderSize {
			_, _ = bf.RecordLen(rec)
		}
		info, err := bf.Verify(rec)
		if err != nil {
			return
		}
		// A verified record stays valid after stamping.
		bf.Stamp(rec, info.BaseOffset+1, info.Timestamp+1)
		if _, err := bf.Verify(rec); err != nil {
			t.Fatalf("stamped record does not verify: %v", err)
		}
	})
}

// TestCorruptPartitionStopsOnlyItself: CreatePartitions over corrupt data
// whose damage storage cannot locate keeps that partition stopped (no error, so start-up continues) and
// opens the others.
func TestCorruptPartitionStopsOnlyItself(t *testing.T) {
	dir := t.TempDir()
	s := wire.DefaultTopicSettings()
	s.SegmentSize = 512
	ref := catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 1, Settings: s}
	func() {
		p, err := New(Options{Dir: dir, RetentionInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.CreatePartitions(ref, []uint32{0, 1}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			appendTo(t, p, ref, 0, 2)
		}
	}()
	// Empty the first (sealed) segment of partition 0: nothing says what
	// its records were (damage that is located is quarantined instead,
	// damage_test.go).
	seg := filepath.Join(dir, "1", "topics", "1-1", "partitions", "0", "00000000000000000000.log")
	if err := os.WriteFile(seg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Dir: dir, RetentionInterval: -1, VerifySealed: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.CreatePartitions(ref, []uint32{0, 1}); err != nil {
		t.Fatalf("corrupt partition failed start-up: %v", err)
	}
	if part := p.lookup(1, 0); part == nil || part.log != nil || !errors.Is(part.broken, storage.ErrCorrupt) {
		t.Fatalf("partition 0 not stopped: %+v", part)
	}
	if part := p.lookup(1, 1); part == nil || part.log == nil {
		t.Fatal("partition 1 not open")
	}
}
