package itest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/partition"
	"github.com/iggo-dev/iggo/wire"
)

// TestRestartSweepsOrphanedData plants the leftovers of deletions a crash
// interrupted (a topic directory of a deleted incarnation, a deleted
// stream's directory) and checks that the next start removes them while
// the live topic keeps serving its messages.
func TestRestartSweepsOrphanedData(t *testing.T) {
	dir := t.TempDir()
	s1 := Start(t, WithDir(dir))
	c := s1.Dial(t)
	c.LoginRoot()
	st := mkStream(t, c, "orders")
	td := mkTopic(t, c, st, "eu", 1, nil)
	c.MustSend(sid(st), sid(td.ID), wire.PartitioningByID(0), Batch(t, 1, Payloads(3, 16, "m")...))
	s1.Stop()

	topicsDir := filepath.Join(dir, partition.StreamsDirName, strconv.FormatUint(uint64(st), 10), "topics")
	live, err := filepath.Glob(filepath.Join(topicsDir, strconv.FormatUint(uint64(td.ID), 10)+"-*"))
	if err != nil || len(live) != 1 {
		t.Fatalf("live topic directories %v (%v)", live, err)
	}
	inc, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(live[0]), strconv.FormatUint(uint64(td.ID), 10)+"-"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	orphanTopic := filepath.Join(topicsDir, strconv.FormatUint(uint64(td.ID), 10)+"-"+strconv.FormatUint(inc+1000, 10))
	orphanStream := filepath.Join(dir, partition.StreamsDirName, "4242")
	foreign := filepath.Join(topicsDir, "keep.me")
	for _, d := range []string{
		filepath.Join(orphanTopic, "partitions", "0"),
		filepath.Join(orphanStream, "topics", "1-1", "partitions", "0"),
	} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "00000000000000000000.log"), []byte("stale"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(foreign, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}

	s2 := Start(t, WithDir(dir))
	for _, gone := range []string{orphanTopic, orphanStream} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("orphan %s survived the restart (%v)", gone, err)
		}
	}
	for _, kept := range []string{live[0], foreign} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s removed: %v", kept, err)
		}
	}
	r := s2.Dial(t)
	r.LoginRoot()
	p := r.MustPoll(wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: sid(st), TopicID: sid(td.ID),
		Partition: wire.SomePartition(0), Strategy: wire.FirstStrategy(), Count: 10})
	if p.Count != 3 {
		t.Fatalf("polled %d messages after the restart, want 3", p.Count)
	}
}
