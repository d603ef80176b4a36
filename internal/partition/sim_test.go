package partition

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"testing/synctest"

	"github.com/iggo-dev/iggo/internal/replication"
)

// The deterministic simulation (docs/RELIABILITY.md, "Deterministic
// simulation"), file by file:
//
//   - sim_test.go: TestSim, its flags, reports and totals.
//   - sim_schedule_test.go: what a seed decides (simSchedule, drawn from
//     one PCG source) and the event trace.
//   - sim_net_test.go: the in-memory network (per-link seeded fates).
//   - sim_cluster_test.go: the nodes (plane, storage, raft log, host),
//     their starts and stops, and replica moves.
//   - sim_run_test.go: one run: clients, the driver, observations.
//   - sim_faults_test.go: moves, storage damage, transfers, deletions.
//   - sim_check_test.go: convergence and the checker;
//     sim_checker_test.go: the checker's own test.

// Flags of the simulation.
var (
	simSeedFlag    = flag.Int64("sim.seed", -1, "run only this simulation seed (replays a failure)")
	simSeedsFlag   = flag.Int("sim.seeds", 0, "number of simulation seeds to run (default 20; 10 with -race, 5 with -short)")
	simFirstFlag   = flag.Uint64("sim.first", 1, "first simulation seed")
	simRepeatFlag  = flag.Int("sim.repeat", 1, "run every seed this many times and compare the runs (determinism)")
	simStorageFlag = flag.Bool("sim.storage", false, "also inject storage faults (bit flips, truncations) into stopped nodes' files")
	simLeaderFlag  = flag.Bool("sim.crashleader", false, "make every other scheduled crash stop the leader of the moment (changes what a seed does)")
	simStrictFlag  = flag.Bool("sim.strict", false, "fail a run that ends with a member replica not healthy (not repaired)")
	simTraceFlag   = flag.Bool("sim.trace", false, "print every run's trace, not only a failing one's")
	simLiveFlag    = flag.Bool("sim.live", false, "log trace lines as they happen (with -v: a run that panics still shows its trace)")
	simLogFlag     = flag.String("sim.log", "", "log every node's server log at this level (debug, info, warn, error) to the test log")
)

// TestSim runs the seeded simulation of a replicated partition: four
// nodes (real partition planes over real storage and durable raft logs
// in temp dirs) holding three replicas, on an in-memory network, inside
// a synctest bubble (virtual time). A seed fixes the schedule: client
// sends, drops, duplicates, delays, one- and two-way partitions, crashes
// and restarts, replica moves and, with -sim.storage, bit flips and
// truncations of a stopped node's files. A failing run prints its seed,
// the command that replays it and its event trace.
func TestSim(t *testing.T) {
	seeds := *simSeedsFlag
	if seeds <= 0 {
		seeds = 20
		if simRace {
			seeds = 10
		}
		if testing.Short() {
			seeds = 5
		}
	}
	first := *simFirstFlag
	if *simSeedFlag >= 0 {
		first, seeds = uint64(*simSeedFlag), 1
	}
	prof := simProfile{storage: *simStorageFlag, moves: true, crashLeader: *simLeaderFlag}
	var tot simTotals
	for seed := first; seed < first+uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			var runs []simResult
			for range max(*simRepeatFlag, 1) {
				var res simResult
				synctest.Test(t, func(t *testing.T) { res = runSim(t, seed, prof) })
				runs = append(runs, res)
				tot.add(res)
				report(t, seed, prof, res)
			}
			if len(runs) > 1 {
				tot.compare(t, seed, runs)
			}
		})
	}
	t.Log(tot.String())
}

// runSim runs one seed in the current bubble.
func runSim(t *testing.T, seed uint64, prof simProfile) simResult {
	// raft draws its randomized election timeouts from crypto/rand, as
	// the hosts draw proposal nonces: seeded too.
	cryptotest.SetGlobalRandom(t, seed)
	sched := newSchedule(seed, prof)
	r := &simRun{t: t, seed: seed, sched: sched, leaders: map[uint64]replication.NodeID{}, applied: map[string]int{},
		seen: map[string]uint64{}, observed: map[uint64]observedMsg{}, crashLeader: prof.crashLeader}
	r.tr = newSimTrace()
	if *simLiveFlag {
		r.tr.live = func(line string) { t.Log(line) }
	}
	r.c = newSimCluster(t, simNodes, seed, r.tr)
	r.c.elected = r.elected
	defer r.c.stopAll()
	return r.run()
}

// replayCommand is the command that runs seed again.
func replayCommand(seed uint64, prof simProfile) string {
	cmd := fmt.Sprintf("go test ./internal/partition -run 'TestSim$' -sim.seed=%d -v", seed)
	if prof.storage {
		cmd += " -sim.storage"
	}
	if prof.crashLeader {
		cmd += " -sim.crashleader"
	}
	return cmd
}

// report logs a run's figures and fails it on an anomaly (or, with
// -sim.strict, on a replica left unhealthy).
func report(t *testing.T, seed uint64, prof simProfile, res simResult) {
	t.Helper()
	t.Logf("seed %d: schedule %016x outcome %016x state %016x trace %016x; %d acked, %d not acked, %d messages; events %v; net %+v; unhealthy %v",
		seed, res.schedHash, res.outcomeHash, res.stateHash, res.traceHash, res.acked, res.unacked, res.messages, res.applied, res.net, res.unhealthy)
	failed := len(res.anomalies) > 0 || (*simStrictFlag && len(res.unhealthy) > 0)
	if failed || *simTraceFlag {
		t.Logf("trace of seed %d:\n%s", seed, res.trace)
	}
	if failed {
		t.Errorf("seed %d: %d anomalies:\n  %s\nunhealthy replicas: %v\nreplay: %s",
			seed, len(res.anomalies), strings.Join(res.anomalies, "\n  "), res.unhealthy, replayCommand(seed, prof))
	}
}

// simTotals sums the runs of a TestSim.
type simTotals struct {
	mu                                      sync.Mutex
	runs, acked, messages, anomalies, sick  int
	events                                  map[string]int
	net                                     netStats
	repeats, sameOutcome, sameState, sameTr int
}

func (s *simTotals) add(r simResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.events == nil {
		s.events = map[string]int{}
	}
	s.runs++
	s.acked += r.acked
	s.messages += r.messages
	s.anomalies += len(r.anomalies)
	if len(r.unhealthy) > 0 {
		s.sick++
	}
	for k, n := range r.applied {
		s.events[k] += n
	}
	s.net.Sent += r.net.Sent
	s.net.Dropped += r.net.Dropped
	s.net.Duplicated += r.net.Duplicated
	s.net.Cut += r.net.Cut
	s.net.Delivered += r.net.Delivered
}

// compare reports how far the repeated runs of one seed agree: the
// schedule must be identical; outcome, final state and trace are
// compared and counted (goroutine scheduling inside a bubble is not
// deterministic, so they may differ).
func (s *simTotals) compare(t *testing.T, seed uint64, runs []simResult) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range runs[1:] {
		s.repeats++
		if r.schedHash != runs[0].schedHash {
			t.Errorf("seed %d: the schedule differs between runs (%016x, %016x)", seed, runs[0].schedHash, r.schedHash)
		}
		if r.outcomeHash == runs[0].outcomeHash {
			s.sameOutcome++
		}
		if r.stateHash == runs[0].stateHash {
			s.sameState++
		}
		if r.traceHash == runs[0].traceHash {
			s.sameTr++
		}
	}
}

func (s *simTotals) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ev []string
	for _, k := range sortedKinds(s.events) {
		ev = append(ev, fmt.Sprintf("%s=%d", k, s.events[k]))
	}
	out := fmt.Sprintf("simulation: %d runs, %d acknowledged sends, %d messages checked, %d anomalies, %d runs with an unhealthy replica; events %s; envelopes sent %d, dropped %d, duplicated %d, cut %d",
		s.runs, s.acked, s.messages, s.anomalies, s.sick, strings.Join(ev, " "), s.net.Sent, s.net.Dropped, s.net.Duplicated, s.net.Cut)
	if s.repeats > 0 {
		out += fmt.Sprintf("; repeats %d: same outcome %d, same final state %d, same trace %d", s.repeats, s.sameOutcome, s.sameState, s.sameTr)
	}
	return out
}
