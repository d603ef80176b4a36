package placement

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func clone(lists [][]uint8) [][]uint8 {
	out := make([][]uint8, len(lists))
	for i, l := range lists {
		out[i] = slices.Clone(l)
	}
	return out
}

func TestPlanBalancedHasNoMoves(t *testing.T) {
	nodes := makeNodes(5, 0)
	lists, _ := Place(nodes, nil, 3, 100)
	moves, err := Plan(nodes, lists, 0)
	if err != nil || len(moves) != 0 {
		t.Fatalf("balanced placement: %v %v", moves, err)
	}
	// Within one replica of the mean but not perfectly even: still nothing.
	uneven := [][]uint8{{0, 1, 2}, {0, 1, 2}, {0, 3, 4}, {1, 3, 4}}
	// Replicas: 0:3 1:3 2:2 3:2 4:2, mean 2.4.
	if moves, _ := Plan(nodes, uneven, 0); len(moves) != 0 {
		t.Fatalf("within one of the mean: %v", moves)
	}
	if leads, _ := BalanceLeaders(nodes, lists, 0); len(leads) != 0 {
		t.Fatalf("balanced leaders: %v", leads)
	}
}

func TestPlanRejects(t *testing.T) {
	if _, err := Plan([]Node{{ID: 1}, {ID: 1}}, nil, 0); !errors.Is(err, ErrDuplicateNode) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := Plan([]Node{{ID: 1, Rack: "a"}, {ID: 2}}, nil, 0); !errors.Is(err, ErrPartialRacks) {
		t.Fatalf("partial racks: %v", err)
	}
	if _, err := BalanceLeaders([]Node{{ID: 1}, {ID: 1}}, nil, 0); !errors.Is(err, ErrDuplicateNode) {
		t.Fatalf("duplicate: %v", err)
	}
}

// TestPlanAddNode: a 13th node joins 12 holding 10,000 partitions; Plan
// applied in bounded rounds until it has nothing left moves replicas (and
// with them preferred leaderships) onto it until every node is within one
// replica of the mean; each move keeps the other members' positions.
func TestPlanAddNode(t *testing.T) {
	nodes := makeNodes(12, 0)
	lists, _ := Place(nodes, nil, 3, 10000)
	before := clone(lists)
	after := makeNodes(13, 0)
	start := time.Now()
	moves := converge(t, after, lists, 500, 100)
	took := time.Since(start)
	checkLists(t, after, lists, 3)
	replicas, leaders := counts(after, lists)
	checkSpread(t, "replicas", replicas, 0, 1)
	checkSpread(t, "leaders", leaders, 0, 1)
	// Only the moved replica changed in each list.
	changed := 0
	for i := range lists {
		diff := 0
		for k := range lists[i] {
			if lists[i][k] != before[i][k] {
				diff++
				if lists[i][k] != 12 {
					t.Fatalf("list %d: %v -> %v: a replica moved elsewhere than the new node", i, before[i], lists[i])
				}
			}
		}
		if diff > 1 {
			t.Fatalf("list %d moved twice: %v -> %v", i, before[i], lists[i])
		}
		changed += diff
	}
	if changed != moves || moves != replicas[12] {
		t.Fatalf("%d moves, %d changed replicas, %d on the new node", moves, changed, replicas[12])
	}
	t.Logf("%d moves, replicas %v, leaders %v, planned in %s", moves, replicas, leaders, took)
	if took > time.Second {
		t.Fatalf("planning took %s", took)
	}
}

// TestPlanAddRack: 9 nodes in 3 racks grow to 12, one new node per rack;
// every list keeps spanning the 3 racks and the nodes end balanced.
func TestPlanAddRack(t *testing.T) {
	nodes := makeNodes(9, 3)
	lists, _ := Place(nodes, nil, 3, 3000)
	after := makeNodes(12, 3)
	converge(t, after, lists, 200, 100)
	checkLists(t, after, lists, 3)
	replicas, _ := counts(after, lists)
	checkSpread(t, "replicas", replicas, 0, 1)
	for i, l := range lists {
		if racksOf(after, l) != 3 {
			t.Fatalf("list %d %v spans fewer than 3 racks", i, l)
		}
	}
	balanceLeaders(t, after, lists, 0)
	_, leaders := counts(after, lists)
	checkSpread(t, "leaders", leaders, 0, 1)
}

// TestPlanDrain: a node being removed (or dead) is not among the allowed
// nodes: every replica it holds moves, to a node not holding the
// partition, and the rest stays balanced.
func TestPlanDrain(t *testing.T) {
	for _, racks := range []int{0, 3} {
		nodes := makeNodes(12, racks)
		lists, _ := Place(nodes, nil, 3, 10000)
		held := NewLoad(lists).Replicas(5)
		after := slices.Delete(slices.Clone(nodes), 5, 6)
		moves, err := Plan(after, lists, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(moves) != held {
			t.Fatalf("%d moves for %d replicas on the drained node", len(moves), held)
		}
		for _, m := range moves {
			if m.From != 5 {
				t.Fatalf("move %+v: only the drained node's replicas should move", m)
			}
			m.Apply(lists[m.Index])
		}
		checkLists(t, after, lists, 3)
		replicas, _ := counts(after, lists)
		checkSpread(t, "replicas", replicas, 0, 1)
		balanceLeaders(t, after, lists, 0)
		_, leaders := counts(after, lists)
		checkSpread(t, "leaders", leaders, 0, 1)
		// The drained node's rack now has fewer nodes than the others:
		// balance comes first, so some lists span two racks, none one.
		if racks == 0 {
			continue
		}
		spread := 0
		for i, l := range lists {
			switch racksOf(after, l) {
			case 1:
				t.Fatalf("list %d %v spans a single rack", i, l)
			case 3:
				spread++
			}
		}
		t.Logf("%d of %d lists span 3 racks after the drain", spread, len(lists))
	}
}

// TestPlanDeadNodesFirst: partitions that lost two replicas move before
// those that lost one; a replica with nowhere to go stays.
func TestPlanDeadNodesFirst(t *testing.T) {
	nodes := makeNodes(4, 0)
	lists := [][]uint8{{0, 1, 2}, {1, 2, 3}, {3, 1, 0}, {2, 3, 0}}
	alive := nodes[:3] // node 3 is gone
	moves, _ := Plan(alive, lists, 1)
	if len(moves) != 1 || moves[0].From != 3 {
		t.Fatalf("moves %v", moves)
	}
	// Lists 1, 2 and 3 need node 3 replaced, but every allowed node holds
	// list 1 ({1,2,3} -> 0 only) ... all three can move to the one node
	// missing from them.
	moves, _ = Plan(alive, lists, 0)
	if len(moves) != 3 {
		t.Fatalf("moves %v", moves)
	}
	// Two nodes left for rf 3: nothing can move.
	lists = [][]uint8{{0, 1, 3}}
	if moves, _ := Plan(nodes[:2], lists, 0); len(moves) != 0 {
		t.Fatalf("no target, yet moves %v", moves)
	}
	// Two of three replicas lost: that partition moves first.
	lists = [][]uint8{{0, 1, 4}, {4, 5, 0}, {1, 2, 5}}
	six := makeNodes(6, 0)
	moves, _ = Plan(six[:4], lists, 1)
	if len(moves) != 1 || moves[0].Index != 1 {
		t.Fatalf("the partition with two lost replicas first: %v", moves)
	}
}

func TestPlanRespectsBound(t *testing.T) {
	nodes := makeNodes(6, 0)
	lists, _ := Place(nodes, nil, 3, 600)
	moves, _ := Plan(append(nodes, Node{ID: 6}), lists, 7)
	if len(moves) != 7 {
		t.Fatalf("%d moves, want the bound 7", len(moves))
	}
}

func TestBalanceLeadersByChain(t *testing.T) {
	nodes := makeNodes(3, 0)
	// Node 0 leads two, node 2 none, and no list led by 0 holds node 2:
	// leadership goes 0 -> 1 in list 0 and 1 -> 2 in list 2.
	lists := [][]uint8{{0, 1}, {0, 1}, {1, 2}}
	leads, err := BalanceLeaders(nodes, lists, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range leads {
		m.Apply(lists[m.Index])
	}
	_, leaders := counts(nodes, lists)
	if !slices.Equal(leaders, []int{1, 1, 1}) {
		t.Fatalf("leaders %v after %v: %v", leaders, leads, lists)
	}
}

// TestPlanUnequalRacks: racks of 8 and 4 nodes, 10,000 partitions; one
// node of the large rack leaves and two join it. Balance wins over racks:
// rack b's 4 of 13 nodes then hold fewer replicas than there are lists,
// so some lists must lie in rack a alone; Plan leaves (about) no more
// than those, and stays fast.
func TestPlanUnequalRacks(t *testing.T) {
	nodes := makeNodes(12, 0)
	for i := range nodes {
		nodes[i].Rack = []string{"a", "a", "b"}[i%3]
	}
	lists, _ := Place(nodes, nil, 3, 10000)
	after := append(slices.Clone(nodes[1:]), Node{ID: 200, Rack: "a"}, Node{ID: 201, Rack: "a"})
	start := time.Now()
	moves := converge(t, after, lists, 0, 100)
	took := time.Since(start)
	checkLists(t, after, lists, 3)
	replicas, _ := counts(after, lists)
	checkSpread(t, "replicas", replicas, 0, 1)
	one := 0
	for _, l := range lists {
		if racksOf(after, l) == 1 {
			one++
		}
	}
	inB := 0
	for i, n := range after {
		if n.Rack == "b" {
			inB += replicas[i]
		}
	}
	t.Logf("%d moves in %s; %d of %d lists on one rack (at least %d must be)", moves, took, one, len(lists), len(lists)-inB)
	if one > len(lists)-inB+10 {
		t.Fatalf("%d lists on one rack, %d would do", one, len(lists)-inB)
	}
	if took > time.Second {
		t.Fatalf("planning took %s", took)
	}
}
