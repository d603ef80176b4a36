package partition

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/testutil"
	"github.com/iggo-dev/iggo/wire"
)

func TestAutoScrubRate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		total    uint64
		interval time.Duration
		want     int64
	}{
		{name: "nothing stored", total: 0, interval: 24 * time.Hour, want: MinAutoScrubRate},
		{name: "spread over the day", total: 100 << 30, interval: 24 * time.Hour, want: (100 << 30) / 86400},
		{name: "capped", total: 10 << 40, interval: 24 * time.Hour, want: MaxAutoScrubRate},
		{name: "sub-second interval", total: 4 << 20, interval: time.Millisecond, want: 4 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := autoScrubRate(tc.total, tc.interval); got != tc.want {
				t.Fatalf("rate %d, want %d", got, tc.want)
			}
		})
	}
}

// scrubCounts is a ScrubObserver that records what it is told.
type scrubCounts struct {
	mu     sync.Mutex
	found  map[string]int
	bytes  int64
	passes int
}

func (c *scrubCounts) DamageFound(source string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found == nil {
		c.found = map[string]int{}
	}
	c.found[source] += n
}

func (c *scrubCounts) ScrubRead(n int64) { c.mu.Lock(); c.bytes += n; c.mu.Unlock() }
func (c *scrubCounts) ScrubPass()        { c.mu.Lock(); c.passes++; c.mu.Unlock() }

func (c *scrubCounts) get() (found int, bytes int64, passes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.found[damageSourceScrub], c.bytes, c.passes
}

// hookCall is one call of the repair hook.
type hookCall struct {
	ref   catalog.TopicRef
	id    uint32
	found []storage.Damage
}

// scrubPlane opens a plane with small segments, fills partition 1 of a
// topic over several segments and partition 0 with one record.
func scrubPlane(t *testing.T, o Options) (*Plane, catalog.TopicRef) {
	t.Helper()
	o.Dir = t.TempDir()
	o.RetentionInterval = -1
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := wire.DefaultTopicSettings()
	s.SegmentSize = 4 << 10
	ref := catalog.TopicRef{StreamID: 1, TopicID: 2, Incarnation: 3, Settings: s}
	if err := p.CreatePartitions(ref, []uint32{0, 1}); err != nil {
		t.Fatal(err)
	}
	appendTo(t, p, ref, 0, 2)
	for range 30 {
		appendTo(t, p, ref, 1, 10)
	}
	return p, ref
}

// flipRecord flips a byte in the middle of record rec of the first segment
// of a partition directory and returns the range it quarantines.
func flipRecord(t *testing.T, dir string, rec int) storage.Damage {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	if len(logs) < 3 {
		t.Fatalf("%d segments in %s", len(logs), dir)
	}
	idx, err := os.ReadFile(strings.TrimSuffix(logs[0], ".log") + ".index")
	if err != nil || len(idx) < (rec+2)*24 {
		t.Fatalf("index of %s: %d bytes, %v", logs[0], len(idx), err)
	}
	off := binary.LittleEndian.Uint64(idx[rec*24:])
	pos := binary.LittleEndian.Uint64(idx[rec*24+16:])
	next := binary.LittleEndian.Uint64(idx[(rec+1)*24:])
	end := binary.LittleEndian.Uint64(idx[(rec+1)*24+16:])
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[pos+(end-pos)/2] ^= 0xff
	if err := os.WriteFile(logs[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	return storage.Damage{Path: logs[0], Pos: int64(pos), Len: int64(end - pos), First: off, Last: next - 1}
}

func TestRunScrubReportsNewDamageOnce(t *testing.T) {
	var logs testutil.SyncBuffer
	var counts scrubCounts
	var mu sync.Mutex
	var calls []hookCall
	p, ref := scrubPlane(t, Options{
		Logger:        slog.New(slog.NewTextHandler(&logs, nil)),
		ScrubObserver: &counts,
		OnDamage: func(ref catalog.TopicRef, id uint32, found []storage.Damage) {
			mu.Lock()
			calls = append(calls, hookCall{ref, id, found})
			mu.Unlock()
		},
	})
	tot, err := p.RunScrub(t.Context(), time.Hour)
	if err != nil || tot.Partitions != 2 || tot.Segments < 2 || tot.Records == 0 || tot.Bytes == 0 || tot.New != 0 {
		t.Fatalf("clean pass: %+v %v", tot, err)
	}
	if found, b, _ := counts.get(); found != 0 || b != tot.Bytes {
		t.Fatalf("observer after a clean pass: found %d, bytes %d (pass read %d)", found, b, tot.Bytes)
	}

	want := flipRecord(t, p.PartitionDir(ref, 1), 2)
	tot, err = p.RunScrub(t.Context(), time.Hour)
	if err != nil || tot.New != 1 {
		t.Fatalf("pass after the flip: %+v %v", tot, err)
	}
	mu.Lock()
	if len(calls) != 1 || calls[0].ref.Incarnation != ref.Incarnation || calls[0].id != 1 || len(calls[0].found) != 1 {
		t.Fatalf("repair hook calls %+v", calls)
	}
	got := calls[0].found[0]
	mu.Unlock()
	got.Reason = ""
	if got != want {
		t.Fatalf("hook got %+v, want %+v", got, want)
	}
	if n := strings.Count(logs.String(), "damaged records found"); n != 1 || !strings.Contains(logs.String(), "file="+want.Path) {
		t.Fatalf("%d log lines:\n%s", n, logs.String())
	}

	// The next pass finds nothing new: no log line, no hook call, no count.
	tot, err = p.RunScrub(t.Context(), time.Hour)
	if err != nil || tot.New != 0 {
		t.Fatalf("third pass: %+v %v", tot, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if found, _, _ := counts.get(); found != 1 || len(calls) != 1 || strings.Count(logs.String(), "damaged records found") != 1 {
		t.Fatalf("after a pass finding nothing new: found %d, hook calls %d, log:\n%s", found, len(calls), logs.String())
	}
	if d := p.lookup(ref.Incarnation, 1).log.Damaged(); len(d) != 1 {
		t.Fatalf("quarantine %+v", d)
	}
}

func TestScrubLoopRunsPassesAndStopsAtClose(t *testing.T) {
	var counts scrubCounts
	p, _ := scrubPlane(t, Options{
		Logger:        slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		ScrubObserver: &counts,
		ScrubInterval: 5 * time.Millisecond,
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, b, passes := counts.get(); passes >= 2 && b > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the scrubber ran fewer than two passes in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not stop the scrubber")
	}
}
