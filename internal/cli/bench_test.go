package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/bench"
	"github.com/iggo-dev/iggo/internal/testutil"
)

func TestBenchFlags(t *testing.T) {
	f := &benchFlags{totalData: "2 GB", rateLimit: "50 MB/s", duration: "", warmup: "1 s", sampling: "10ms", baseline: "0"}
	cfg, err := parseBenchFlags(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TotalData != 2e9 || cfg.RateLimit != 50e6 || cfg.WarmupTime != time.Second || cfg.SamplingTime != 10*time.Millisecond || cfg.Baseline != 0 || cfg.Duration != 0 {
		t.Fatalf("%+v", cfg)
	}
	for _, tc := range []struct {
		name string
		f    benchFlags
		want string
	}{
		{"bad size", benchFlags{totalData: "lots"}, "--total-data"},
		{"bad rate", benchFlags{rateLimit: "fast"}, "--rate-limit"},
		{"bad duration", benchFlags{duration: "soon"}, "--duration"},
		{"bad warmup", benchFlags{warmup: "-1s"}, "--warmup-time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBenchFlags(&tc.f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestBenchRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"consumers on pinned-producer", []string{"bench", "pinned-producer", "--consumers", "2"}, "no separate consumers"},
		{"group by time", []string{"bench", "bcg", "--duration", "1s"}, "fixed fill"},
		{"unknown scenario", []string{"bench", "fastest"}, "unknown scenario"},
		{"bad size", []string{"bench", "pp", "--total-data", "much"}, "--total-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr testutil.SyncBuffer
			code := Execute(t.Context(), Env{Args: tc.args, Stdout: io.Discard, Stderr: &stderr})
			if code == 0 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want a failure mentioning %q", code, stderr.String(), tc.want)
			}
		})
	}
}

// TestBenchRunsEmbedded runs the command as a user would on a fresh
// machine: no address, so an embedded broker.
func TestBenchRunsEmbedded(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr testutil.SyncBuffer
	code := Execute(t.Context(), Env{
		Args: []string{"bench", "e2e", "--producers", "1", "--message-batches", "4", "--messages-per-batch", "10",
			"--message-size", "100", "--baseline", "10ms", "--output-dir", dir, "--name", "cli", "--progress"},
		Stdout: &stdout, Stderr: &stderr,
	})
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"end-to-end-producing-consumer", "loopback TCP baseline", "producing-consumer 1", "check: sent 40, stored 40, received 40: ok", "wrote cli.json and cli.html"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	r, err := bench.ReadResult(filepath.Join(dir, "cli.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Scenario != bench.EndToEndProducingConsumer || !r.Check.OK || len(r.Actors) != 1 {
		t.Fatalf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "cli.html")); err != nil {
		t.Fatal(err)
	}
	stdout = testutil.SyncBuffer{}
	if code := Execute(t.Context(), Env{Args: []string{"bench", "compare", filepath.Join(dir, "cli.json")}, Stdout: &stdout, Stderr: &stderr}); code != 0 {
		t.Fatalf("compare: exit %d; stderr:\n%s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "cli  end-to-end-producing-consumer  false  1 producing-consumers") || !strings.Contains(out, "ok") {
		t.Fatalf("compare output:\n%s", out)
	}
	if code := Execute(t.Context(), Env{Args: []string{"bench", "compare", filepath.Join(dir, "none.json")}, Stdout: io.Discard, Stderr: &stderr}); code == 0 {
		t.Fatal("compare of a missing file succeeded")
	}
}

// TestBenchBaselineZero: --baseline 0 turns off every baseline, unless
// --disk-baseline or --cache-baseline is given; by default all three run.
func TestBenchBaselineZero(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		f                     benchFlags
		loop, disk, pageCache time.Duration
	}{
		{"defaults", benchFlags{baseline: bench.DefaultBaseline.String()}, bench.DefaultBaseline, bench.DefaultDiskBaseline, bench.DefaultCacheBaseline},
		{"baseline 0", benchFlags{baseline: "0"}, 0, 0, 0},
		{"baseline 0, disk given", benchFlags{baseline: "0", disk: "1s"}, 0, time.Second, 0},
		{"baseline 0, cache given", benchFlags{baseline: "0", cache: "500ms"}, 0, 0, 500 * time.Millisecond},
		{"disk 0", benchFlags{baseline: "1s", disk: "0"}, time.Second, 0, bench.DefaultCacheBaseline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.sampling = "100ms"
			cfg, err := parseBenchFlags(&f)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Baseline != tc.loop || cfg.DiskBaseline != tc.disk || cfg.CacheBaseline != tc.pageCache {
				t.Fatalf("baselines %v %v %v, want %v %v %v", cfg.Baseline, cfg.DiskBaseline, cfg.CacheBaseline, tc.loop, tc.disk, tc.pageCache)
			}
		})
	}
}
