package bench

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMeasureDisk: the disk baseline writes and syncs in the directory
// for about its duration and leaves nothing behind.
func TestMeasureDisk(t *testing.T) {
	dir := t.TempDir()
	d, err := MeasureDisk(t.Context(), dir, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if d.Writes == 0 || d.Bytes != d.Writes*DiskBufferSize || d.MBps <= 0 || d.SyncMillis <= 0 || d.Dir != dir || d.Seconds < 0.1 {
		t.Fatalf("disk baseline %+v", d)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files behind", len(ents))
	}
	if _, err := MeasureDisk(t.Context(), dir+"/missing", time.Millisecond); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

// TestMeasureCache: the page-cache baseline writes without syncing in
// the directory, is bounded by its size limit, and leaves nothing
// behind.
func TestMeasureCache(t *testing.T) {
	dir := t.TempDir()
	c, err := MeasureCache(t.Context(), dir, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c.Writes == 0 || c.Bytes != c.Writes*DiskBufferSize || c.MBps <= 0 || c.SyncMillis != 0 || c.Sync != "none" || c.Dir != dir {
		t.Fatalf("cache baseline %+v", c)
	}
	if c.Bytes > maxCacheBaselineBytes {
		t.Fatalf("wrote %d bytes, more than the bound %d", c.Bytes, maxCacheBaselineBytes)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files behind", len(ents))
	}
	if _, err := MeasureCache(t.Context(), dir+"/missing", time.Millisecond); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

// TestProcessFigures reads this process's CPU, memory, threads and
// descriptors where /proc exists.
func TestProcessFigures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux only")
	}
	pid := os.Getpid()
	end := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(end) { // burn some CPU
	}
	cpu, ok := processCPU(pid)
	rss, threads, mok := processMemory(pid)
	fds, fok := openFiles(pid)
	if !ok || !mok || !fok || cpu <= 0 || rss < 1<<20 || threads < 1 || fds < 3 {
		t.Fatalf("cpu %v (%v), rss %d threads %d (%v), fds %d (%v)", cpu, ok, rss, threads, mok, fds, fok)
	}
	if _, ok := processCPU(-1); ok {
		t.Fatal("figures for a process that does not exist")
	}
}

// TestEmbeddedResources: with the embedded broker a run records the disk
// baseline, the process (embedded), its CPU and resource samples with
// heap and goroutines, charted on the page; retention by size is set on
// the topics and the check allows it.
func TestEmbeddedResources(t *testing.T) {
	cfg := small(PinnedProducerAndConsumer, "")
	cfg.Producers, cfg.Consumers = 1, 1
	cfg.DiskBaseline, cfg.CacheBaseline, cfg.ResourceSampling = 50*time.Millisecond, 20*time.Millisecond, 5*time.Millisecond
	cfg.SegmentSize, cfg.MaxTopicSize = 1<<20, 1<<30
	r := runAndRead(t, cfg)
	checkComplete(t, cfg, r)
	if r.Disk == nil || r.Disk.Writes == 0 {
		t.Fatalf("disk baseline %+v", r.Disk)
	}
	if r.Cache == nil || r.Cache.Writes == 0 || r.Cache.Sync != "none" {
		t.Fatalf("page-cache baseline %+v", r.Cache)
	}
	if r.Process == nil || !r.Process.Embedded || r.Process.PID != os.Getpid() {
		t.Fatalf("process %+v", r.Process)
	}
	if runtime.GOOS == "linux" {
		if r.CPU == nil || r.CPU.BenchSeconds < 0 || r.CPU.ServerSeconds != 0 {
			t.Fatalf("cpu %+v", r.CPU)
		}
		if len(r.Resources) < 2 || r.Resources[0].Goroutines == 0 || r.Resources[0].HeapBytes == 0 || r.Resources[0].RSS == 0 {
			t.Fatalf("resources %+v", r.Resources)
		}
	}
	if !r.Check.Retention || r.Params.SegmentSize != 1<<20 || r.Params.MaxTopicSize != 1<<30 {
		t.Fatalf("check %+v params %+v", r.Check, r.Params)
	}
	var report strings.Builder
	if err := WriteReport(&report, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disk baseline", "page-cache baseline", "× page cache", "CPU during the measured phase: benchmark with the embedded broker"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
}

// TestWriteMedians folds the _runN repetitions of a figure into one row
// of medians, ratios per run.
func TestWriteMedians(t *testing.T) {
	mk := func(name string, mbps, base float64) *Result {
		return &Result{Name: name, Baseline: &Baseline{MBps: base}, Cache: &DiskBaseline{MBps: base / 4},
			Groups: []Group{{Kind: KindProducer, Actors: 1, MBps: mbps, Latency: Summary{P50: 1, P90: 1.2}}}}
	}
	var b strings.Builder
	err := WriteMedians(&b, []*Result{mk("pp1_run1", 100, 1000), mk("pp1_run2", 300, 1000), mk("pp1_run3", 200, 400), mk("pc1_run1", 50, 100)})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	// pp1: MB/s median 200; ratios 0.1, 0.3, 0.5 -> 0.300; loopback 1000.
	f := strings.Fields(lines[1])
	// Page cache 250, 250, 100 -> 250; ratios 0.4, 1.2, 2.0 -> 1.20.
	if f[0] != "pp1" || f[3] != "3" || f[4] != "200.0" || f[10] != "1000" || f[11] != "0.300" || f[14] != "250" || f[15] != "1.20" {
		t.Fatalf("pp1 row %q", lines[1])
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[2]), "pc1") {
		t.Fatalf("pc1 row %q", lines[2])
	}
}
