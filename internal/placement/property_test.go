package placement

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// genNodes draws 1..16 nodes with distinct ids, with racks (1..4 of
// them, nodes assigned at random) or without.
func genNodes(t *rapid.T, min int) []Node {
	n := rapid.IntRange(min, 16).Draw(t, "nodes")
	ids := rapid.Permutation(seqIDs(32)).Draw(t, "ids")[:n]
	racks := rapid.IntRange(0, 4).Draw(t, "racks")
	out := make([]Node, n)
	for i := range out {
		out[i].ID = ids[i]
		if racks > 0 {
			out[i].Rack = fmt.Sprint("r", rapid.IntRange(0, racks-1).Draw(t, "rack"))
		}
	}
	return out
}

func seqIDs(n int) []uint8 {
	out := make([]uint8, n)
	for i := range out {
		out[i] = uint8(i)
	}
	return out
}

// TestPlaceProperties: lists of rf distinct nodes; replicas and preferred
// leaders per node within 10% of the mean (or 1), over one or several
// calls that share a load. A later call cannot reorder the lists of an
// earlier one, so over several calls leaders are held to 10% or 2.
func TestPlaceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t, 1)
		rf := rapid.IntRange(1, min(5, len(nodes))).Draw(t, "rf")
		calls := rapid.IntRange(1, 3).Draw(t, "calls")
		load := &Load{}
		var all [][]uint8
		for range calls {
			lists, err := Place(nodes, load, rf, rapid.IntRange(0, 1500).Draw(t, "count"))
			if err != nil {
				t.Fatalf("place: %v", err)
			}
			all = append(all, lists...)
		}
		checkLists(t, nodes, all, rf)
		replicas, leaders := counts(nodes, all)
		checkSpread(t, "replicas", replicas, 0.1, 1)
		checkSpread(t, "leaders", leaders, 0.1, float64(min(calls, 2)))
		for _, n := range nodes {
			if load.Replicas(n.ID) != replicas[slices.Index(nodes, n)] {
				t.Fatalf("load of node %d not updated", n.ID)
			}
		}
	})
}

// TestPlanProperties: after nodes join, one is drained or dies, Plan
// applied until it has no more moves leaves lists of rf distinct allowed
// nodes, replicas and preferred leaders per node within 10% of the mean
// (or 1), and a second Plan finds nothing to do.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t, 2)
		rf := rapid.IntRange(1, min(5, len(nodes)-1)).Draw(t, "rf")
		// Small move bounds take a Plan call per few moves: fewer
		// partitions keep those cases quick.
		maxMoves := rapid.SampledFrom([]int{0, 1, 3, 20, 100, 300}).Draw(t, "maxMoves")
		most := 1500
		if maxMoves > 0 && maxMoves < 20 {
			most = 200
		}
		lists, err := Place(nodes, nil, rf, rapid.IntRange(1, most).Draw(t, "count"))
		if err != nil {
			t.Fatalf("place: %v", err)
		}
		after := slices.Clone(nodes)
		switch rapid.IntRange(0, 2).Draw(t, "change") {
		case 0: // nodes join
			for k := range rapid.IntRange(1, 3).Draw(t, "joined") {
				n := Node{ID: uint8(200 + k)}
				if nodes[0].Rack != "" {
					n.Rack = fmt.Sprint("r", rapid.IntRange(0, 4).Draw(t, "rack"))
				}
				after = append(after, n)
			}
		case 1: // one node leaves (drained, or dead)
			after = slices.Delete(after, 0, 1)
		case 2: // a node leaves and another joins
			after[0] = Node{ID: 250, Rack: after[0].Rack}
		}
		converge(t, after, lists, maxMoves, 10000)
		checkLists(t, after, lists, rf)
		replicas, _ := counts(after, lists)
		checkSpread(t, "replicas", replicas, 0.1, 1)
		balanceLeaders(t, after, lists, maxMoves)
		_, leaders := counts(after, lists)
		checkSpread(t, "leaders", leaders, 0.1, 1)
		if moves, _ := Plan(after, lists, 0); len(moves) > 0 {
			t.Fatalf("plan after leader changes: %d moves", len(moves))
		}
	})
}

// balanceLeaders runs BalanceLeaders and applies its changes until it
// has none.
func balanceLeaders(t tb, nodes []Node, lists [][]uint8, max int) {
	t.Helper()
	for range 10000 {
		leads, err := BalanceLeaders(nodes, lists, max)
		if err != nil {
			t.Fatalf("balance leaders: %v", err)
		}
		if len(leads) == 0 {
			return
		}
		for _, m := range leads {
			if !m.Apply(lists[m.Index]) {
				t.Fatalf("lead %+v: not a member of %v", m, lists[m.Index])
			}
		}
	}
	t.Fatalf("leader balance did not converge")
}

// TestPlaceEqualRacks: with racks of equal sizes every list spans
// min(rf, racks) racks.
func TestPlaceEqualRacks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		racks := rapid.IntRange(2, 5).Draw(t, "racks")
		per := rapid.IntRange(1, 4).Draw(t, "per rack")
		nodes := makeNodes(racks*per, racks)
		rf := rapid.IntRange(1, min(5, len(nodes))).Draw(t, "rf")
		load := &Load{}
		for range rapid.IntRange(1, 3).Draw(t, "calls") {
			lists, err := Place(nodes, load, rf, rapid.IntRange(0, 500).Draw(t, "count"))
			if err != nil {
				t.Fatalf("place: %v", err)
			}
			for i, l := range lists {
				if n := racksOf(nodes, l); n != min(rf, racks) {
					t.Fatalf("list %d %v spans %d racks, want %d", i, l, n, min(rf, racks))
				}
			}
		}
	})
}
