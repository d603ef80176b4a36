//go:build !windows

package faultsuite

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// FaultKind is a kind of fault the nemesis injects.
type FaultKind string

// Fault kinds.
const (
	// FaultKill: SIGKILL a node, restart it after the hold.
	FaultKill FaultKind = "kill"
	// FaultPause: SIGSTOP a node, SIGCONT after the hold.
	FaultPause FaultKind = "pause"
	// FaultPartition: cut a node off the other nodes, both directions
	// (with 5 nodes or more: split the nodes into a minority and a
	// majority side).
	FaultPartition FaultKind = "partition"
	// FaultOneWay: drop the packets from one node to another (or to every
	// other node): a one-way partition.
	FaultOneWay FaultKind = "partition-one-way"
	// FaultMembership: remove a node from the cluster while it is down
	// (killed), wipe it and add it back under its id (start with --join,
	// CLUSTER_ADD_NODE) under load; with 5 nodes another node is paused
	// while it is added back.
	FaultMembership FaultKind = "membership"
	// FaultCorrupt: stop a node, flip a bit in or truncate one of its
	// segment, index, raft log or snapshot files, restart it. Only the
	// run's corruption victims (a minority, fixed by the seed) are hit.
	FaultCorrupt FaultKind = "corrupt"
)

// AllFaultKinds lists every kind in a fixed order.
func AllFaultKinds() []FaultKind {
	return []FaultKind{FaultKill, FaultPause, FaultPartition, FaultOneWay, FaultMembership, FaultCorrupt}
}

// ParseFaultKinds parses a comma-separated list of kinds ("" or "all":
// every kind).
func ParseFaultKinds(s string) ([]FaultKind, error) {
	if s == "" || s == "all" {
		return AllFaultKinds(), nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(f))
		if !slices.Contains(AllFaultKinds(), k) {
			return nil, fmt.Errorf("unknown fault kind %q (want %v)", k, AllFaultKinds())
		}
		out = append(out, k)
	}
	return out, nil
}

// Step is one fault of a schedule: applied, held, healed, then a quiet
// gap.
type Step struct {
	Kind FaultKind
	// Nodes are the targets: the node killed, paused, removed or damaged,
	// the minority side of a partition, the sender side of a one-way cut;
	// for a membership change the second node (5 nodes) is paused while
	// the first is added back.
	Nodes []int
	// Peers are the receiving side of a one-way cut.
	Peers []int
	// File and Truncate describe a corruption.
	File     FileKind
	Truncate bool
	// Hold is how long the fault lasts; Gap the quiet time after healing.
	Hold, Gap time.Duration
	// Seed drives the corruption's choice of file and position.
	Seed uint64
}

// String describes the step in one line.
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s nodes %v", s.Kind, s.Nodes)
	switch s.Kind {
	case FaultOneWay:
		fmt.Fprintf(&b, " -/-> %v", s.Peers)
	case FaultCorrupt:
		mode := "bit flip"
		if s.Truncate {
			mode = "truncation"
		}
		fmt.Fprintf(&b, " %s of a %s file (seed %d)", mode, s.File, s.Seed)
	}
	fmt.Fprintf(&b, " hold %v gap %v", s.Hold, s.Gap)
	return b.String()
}

// Schedule is the seeded plan of a run.
type Schedule struct {
	Seed uint64
	// Victims are the nodes corruption may hit: a minority.
	Victims []int
	Steps   []Step
}

// scheduleParams shape a schedule.
type scheduleParams struct {
	nodes    int
	kinds    []FaultKind
	steps    int
	minHold  time.Duration
	maxHold  time.Duration
	minGap   time.Duration
	maxGap   time.Duration
	netFault bool // partitions possible
}

// NewSchedule derives a schedule from seed alone.
func newSchedule(seed uint64, p scheduleParams) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x6661756c7473))
	kinds := slices.Clone(p.kinds)
	if !p.netFault {
		kinds = slices.DeleteFunc(kinds, func(k FaultKind) bool { return k == FaultPartition || k == FaultOneWay })
	}
	s := Schedule{Seed: seed}
	perm := rng.Perm(p.nodes)
	s.Victims = perm[:(p.nodes-1)/2]
	slices.Sort(s.Victims)
	if len(kinds) == 0 {
		return s
	}
	dur := func(lo, hi time.Duration) time.Duration {
		if hi <= lo {
			return lo
		}
		return (lo + time.Duration(rng.Int64N(int64(hi-lo)))).Round(100 * time.Millisecond)
	}
	for range p.steps {
		st := Step{Kind: kinds[rng.IntN(len(kinds))], Hold: dur(p.minHold, p.maxHold), Gap: dur(p.minGap, p.maxGap), Seed: rng.Uint64()}
		minority := (p.nodes - 1) / 2
		switch st.Kind {
		case FaultKill, FaultPause:
			// With 5 nodes or more, sometimes a whole minority at once.
			n := 1
			if minority > 1 && rng.IntN(3) == 0 {
				n = minority
			}
			st.Nodes = sortedPrefix(rng.Perm(p.nodes), n)
		case FaultPartition:
			n := 1
			if minority > 1 {
				n = 1 + rng.IntN(minority)
			}
			st.Nodes = sortedPrefix(rng.Perm(p.nodes), n)
		case FaultOneWay:
			perm := rng.Perm(p.nodes)
			st.Nodes = perm[:1]
			if rng.IntN(2) == 0 {
				st.Peers = sortedPrefix(perm[1:], 1) // to one peer
			} else {
				st.Peers = sortedPrefix(perm[1:], p.nodes-1) // to every other node
			}
		case FaultMembership:
			perm := rng.Perm(p.nodes)
			st.Nodes = perm[:1]
			if p.nodes >= 5 {
				st.Nodes = perm[:2]
			}
			st.Hold = max(st.Hold, 2*time.Second)
		case FaultCorrupt:
			st.Nodes = []int{s.Victims[rng.IntN(len(s.Victims))]}
			st.File = allFileKinds()[rng.IntN(len(allFileKinds()))]
			st.Truncate = rng.IntN(3) == 0
		}
		s.Steps = append(s.Steps, st)
	}
	return s
}

// sortedPrefix returns the first n of perm, sorted.
func sortedPrefix(perm []int, n int) []int {
	out := slices.Clone(perm[:n])
	slices.Sort(out)
	return out
}

// String prints the schedule, one step a line.
func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule of seed %d: %d steps, corruption victims %v\n", s.Seed, len(s.Steps), s.Victims)
	for i, st := range s.Steps {
		fmt.Fprintf(&b, "  %3d  %s\n", i, st)
	}
	return b.String()
}
