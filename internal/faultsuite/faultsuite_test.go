//go:build !windows

package faultsuite

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/testutil"
)

// Flags of TestFaultSuite (after -args).
var (
	flagProfile  = flag.String("faults.profile", "ci", "ci: 3 nodes, bounded for CI; long: 5 nodes, by hand")
	flagSeed     = flag.Uint64("faults.seed", 0, "seed of the fault schedule (0: from the clock, printed)")
	flagDuration = flag.Duration("faults.duration", 0, "length of the fault phase (0: the profile's)")
	flagKinds    = flag.String("faults.kinds", "all", "comma-separated fault kinds: kill,pause,partition,partition-one-way,membership,corrupt")
	flagSummary  = flag.String("faults.summary", "", "also write the summary to this file")
	flagHistory  = flag.String("faults.history", "", "write the history (JSON lines) to this file")
	flagNodes    = flag.Int("faults.nodes", 0, "node count (0: the profile's)")
	flagNoNetns  = flag.Bool("faults.no-netns", false, "run the nodes on loopback without network namespaces (no partitions)")
	flagRepair   = flag.Bool("faults.require-repair", true, "fail when a replica has not caught up (been repaired) or a node is not running after healing (=false only reports it)")
)

// profile returns the run configuration of a named profile.
func profile(name string) (Config, bool) {
	switch name {
	case "ci":
		return Config{Profile: "ci", Nodes: 3, Partitions: 3, Members: 3, Duration: 90 * time.Second, Steps: 40, RepairWait: 30 * time.Second,
			MinHold: 2 * time.Second, MaxHold: 6 * time.Second, MinGap: 1500 * time.Millisecond, MaxGap: 4 * time.Second}, true
	case "long":
		return Config{Profile: "long", Nodes: 5, Partitions: 6, Members: 4, Duration: 30 * time.Minute, RepairWait: 120 * time.Second,
			MinHold: 2 * time.Second, MaxHold: 15 * time.Second, MinGap: 2 * time.Second, MaxGap: 10 * time.Second}, true
	}
	return Config{}, false
}

// TestFaultSuite runs one seeded schedule of faults against a real
// cluster under a recorded workload and fails on any anomaly the checker
// finds. The seed is printed first and in the summary, which says how to
// replay the run.
func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs real clusters; skipped with -short")
	}
	cfg, ok := profile(*flagProfile)
	if !ok {
		t.Fatalf("unknown profile %q (ci, long)", *flagProfile)
	}
	cfg.Seed = *flagSeed
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano()) % 1_000_000_007
	}
	t.Logf("fault suite: profile %s seed %d (replay with -args -faults.profile=%s -faults.seed=%d)", cfg.Profile, cfg.Seed, cfg.Profile, cfg.Seed)
	if *flagDuration > 0 {
		cfg.Duration = *flagDuration
	}
	if cfg.Steps == 0 {
		// Enough steps for the fault phase even if every one is short.
		cfg.Steps = int(cfg.Duration/(cfg.MinHold+cfg.MinGap)) + 1
	}
	if *flagNodes > 0 {
		cfg.Nodes = *flagNodes
	}
	kinds, err := ParseFaultKinds(*flagKinds)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kinds = kinds
	cfg.NoNetns = *flagNoNetns
	cfg.Checker = CheckerConfig{GroupTolerance: int64(time.Millisecond)}
	dir := t.TempDir()
	built := time.Now()
	if cfg.Bin, err = testutil.BuildIggo(dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("iggo built in %v", time.Since(built).Round(time.Millisecond))
	cfg.Dir = filepath.Join(dir, "cluster")
	cfg.Logf = func(format string, args ...any) { t.Logf(format, args...) }

	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	summary := res.Summary(cfg)
	t.Log("\n" + summary)
	if *flagSummary != "" {
		if err := res.WriteSummary(*flagSummary, cfg); err != nil {
			t.Error(err)
		}
	}
	if *flagHistory != "" {
		if f, err := os.Create(*flagHistory); err != nil {
			t.Error(err)
		} else {
			if err := res.WriteHistory(f); err != nil {
				t.Error(err)
			}
			f.Close()
		}
	}
	if res.Unreplicated != "" && *flagRepair {
		t.Errorf("seed %d: replicas not caught up after healing: %s", cfg.Seed, res.Unreplicated)
	}
	if len(res.NodesDown) > 0 && *flagRepair {
		t.Errorf("seed %d: nodes not running after healing: %v", cfg.Seed, res.NodesDown)
	}
	if len(res.Anomalies) > 0 {
		for i := range cfg.Nodes {
			t.Logf("---- node %d log tail ----\n%s", i, res.LogTail(i, 40))
		}
		t.Errorf("seed %d: %d anomalies (replay: -args -faults.profile=%s -faults.seed=%d)", cfg.Seed, len(res.Anomalies), cfg.Profile, cfg.Seed)
	}
}
