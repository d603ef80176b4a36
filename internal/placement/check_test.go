package placement

import (
	"fmt"
	"math"
	"slices"
)

// tb is what the checks need of testing.TB and rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// makeNodes returns n nodes with ids 0..n-1; with racks > 0 node i is in
// rack i % racks.
func makeNodes(n, racks int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i].ID = uint8(i)
		if racks > 0 {
			out[i].Rack = fmt.Sprint("r", i%racks)
		}
	}
	return out
}

// checkLists fails unless every list has rf distinct members, all in nodes.
func checkLists(t tb, nodes []Node, lists [][]uint8, rf int) {
	t.Helper()
	var ok [256]bool
	for _, n := range nodes {
		ok[n.ID] = true
	}
	for i, l := range lists {
		if len(l) != rf {
			t.Fatalf("partition %d: %d replicas %v, want %d", i, len(l), l, rf)
		}
		for k, r := range l {
			if !ok[r] {
				t.Fatalf("partition %d: replica on node %d, not an allowed node (%v)", i, r, l)
			}
			if slices.Contains(l[k+1:], r) {
				t.Fatalf("partition %d: node %d twice in %v", i, r, l)
			}
		}
	}
}

// counts returns replicas and preferred leaders per node of nodes.
func counts(nodes []Node, lists [][]uint8) (replicas, leaders []int) {
	l := NewLoad(lists)
	for _, n := range nodes {
		replicas = append(replicas, l.Replicas(n.ID))
		leaders = append(leaders, l.Leaders(n.ID))
	}
	return replicas, leaders
}

// deviation returns the mean of c and the largest distance of an element
// from it.
func deviation(c []int) (mean, dev float64) {
	sum := 0
	for _, v := range c {
		sum += v
	}
	mean = float64(sum) / float64(len(c))
	for _, v := range c {
		dev = max(dev, math.Abs(float64(v)-mean))
	}
	return mean, dev
}

// checkSpread fails unless every element of c is within frac of the mean,
// or within slack of it when that is wider.
func checkSpread(t tb, what string, c []int, frac, slack float64) {
	t.Helper()
	mean, dev := deviation(c)
	if dev > max(frac*mean, slack) {
		t.Fatalf("%s per node %v: mean %.2f, deviation %.2f above %.0f%% (or %.0f)", what, c, mean, dev, frac*100, slack)
	}
}

// converge runs Plan and applies its moves until it has none, at most
// rounds times, and returns the number of moves.
func converge(t tb, nodes []Node, lists [][]uint8, maxMoves, rounds int) int {
	t.Helper()
	total := 0
	for range rounds {
		moves, err := Plan(nodes, lists, maxMoves)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if len(moves) == 0 {
			return total
		}
		for _, m := range moves {
			if !m.Apply(lists[m.Index]) {
				t.Fatalf("move %+v: node %d is not in %v", m, m.From, lists[m.Index])
			}
		}
		total += len(moves)
	}
	t.Fatalf("plan did not converge within %d rounds", rounds)
	return total
}
