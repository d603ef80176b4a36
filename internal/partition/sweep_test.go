package partition

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

func TestSweepOrphans(t *testing.T) {
	dir := t.TempDir()
	var logBuf bytes.Buffer
	p, err := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logBuf, nil)), RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	live := catalog.TopicRef{StreamID: 1, TopicID: 1, Incarnation: 10, Settings: wire.DefaultTopicSettings()}
	if err := p.CreatePartitions(live, []uint32{1, 2}); err != nil {
		t.Fatal(err)
	}
	appendTo(t, p, live, 1, 4)
	// A partition that failed to open is still live: its data must stay.
	p.topics[live.Incarnation].unopened[5] = struct{}{}

	mkdir := func(rel string) string {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(path, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, "00000000000000000000.log"), []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write := func(rel string) string {
		t.Helper()
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.WriteFile(path, []byte("keep"), 0o640); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mkdir("1/topics/1-5/partitions/1")
	mkdir("7/topics/2-3/partitions/1")
	orphans := []string{ // the directories the sweep removes
		filepath.Join(dir, "1", "topics", "1-5"), // a deleted incarnation of the same topic ids
		filepath.Join(dir, "7", "topics", "2-3"), // a deleted stream
		mkdir("1/topics/1-10/partitions/9"),      // a deleted partition of the live topic
	}
	kept := []string{
		p.PartitionDir(live, 1),
		p.PartitionDir(live, 2),
		mkdir("1/topics/1-10/partitions/5"),  // live but not opened
		mkdir("1/topics/1-10/partitions/09"), // not canonical
		mkdir("1/topics/1-010"),              // not canonical
		mkdir("1/topics/lost+found"),
		mkdir("1/topics/4"),
		mkdir("1/other"),
		mkdir("stream-x/topics/1-1"),
		mkdir("3/topics/1-10/partitions/1"), // live incarnation, other stream
		write("1/topics/1-10/partitions/notes.txt"),
		write("1/topics/1-10/notes.txt"),
		write("README"),
	}
	removed, err := p.SweepOrphans()
	if err != nil {
		t.Fatal(err)
	}
	if removed != len(orphans) {
		t.Errorf("removed %d, want %d", removed, len(orphans))
	}
	for _, path := range orphans {
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("orphan %s still there (%v)", path, err)
		}
	}
	for _, path := range kept {
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("%s was removed: %v", path, err)
		}
	}
	// The emptied deleted stream goes with its last topic.
	if _, err := os.Lstat(filepath.Join(dir, "7")); !os.IsNotExist(err) {
		t.Errorf("empty stream directory 7 kept (%v)", err)
	}
	logs := logBuf.String()
	for _, path := range orphans {
		if !strings.Contains(logs, "level=INFO msg=\"sweep: removing orphaned") || !strings.Contains(logs, "path="+path) {
			t.Errorf("no info log for %s in:\n%s", path, logs)
		}
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "path="+filepath.Join(dir, "README")) {
		t.Errorf("no warn log for the foreign file in:\n%s", logs)
	}
	// The live partition still has its messages and accepts more.
	if st := p.PartitionStats(live, 1); st.Messages != 4 {
		t.Fatalf("live partition stats after the sweep %+v", st)
	}
	appendTo(t, p, live, 1, 1)
	if removed, err := p.SweepOrphans(); err != nil || removed != 0 {
		t.Fatalf("second sweep removed %d, err %v", removed, err)
	}
}

func TestSweepOrphansNoData(t *testing.T) {
	p := newPlane(t, filepath.Join(t.TempDir(), "missing"))
	if removed, err := p.SweepOrphans(); err != nil || removed != 0 {
		t.Fatalf("removed %d, err %v", removed, err)
	}
}

func TestParseTopicDirName(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		topic uint32
		inc   uint64
		ok    bool
	}{
		{"plain", "3-17", 3, 17, true},
		{"zeros", "0-0", 0, 0, true},
		{"max", "4294967295-18446744073709551615", 1<<32 - 1, 1<<64 - 1, true},
		{"topic overflow", "4294967296-1", 0, 0, false},
		{"leading zero", "03-17", 0, 0, false},
		{"leading zero incarnation", "3-017", 0, 0, false},
		{"sign", "+3-17", 0, 0, false},
		{"no dash", "317", 0, 0, false},
		{"two dashes", "3-1-7", 0, 0, false},
		{"empty incarnation", "3-", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topic, inc, ok := parseTopicDirName(tc.in)
			if ok != tc.ok || (ok && (topic != tc.topic || inc != tc.inc)) {
				t.Fatalf("parseTopicDirName(%q) = %d, %d, %v; want %d, %d, %v", tc.in, topic, inc, ok, tc.topic, tc.inc, tc.ok)
			}
		})
	}
}
