package rebalance

import (
	"slices"

	"github.com/iggo-dev/iggo/internal/placement"
)

// Move replaces replica From of partition Index (an index into the
// placement given to the plan function) by a replica on node To, at the
// same position of the list.
type Move struct {
	Index    int
	From, To uint8
}

// standInPlan is a minimal planner with the shape of placement.Plan:
// it moves every replica held by a node not in nodes to the allowed
// non-member with the fewest replicas, then moves replicas from the
// node with the most to the node with the fewest while they differ by
// two or more. Empty lists are left alone.
func standInPlan(nodes []placement.Node, current [][]uint8, maxMoves int) ([]Move, error) {
	if len(nodes) == 0 {
		return nil, nil
	}
	var allowed [256]bool
	var count [256]int
	for _, n := range nodes {
		allowed[n.ID] = true
	}
	lists := make([][]uint8, len(current))
	for i, l := range current {
		lists[i] = slices.Clone(l)
		for _, r := range l {
			if allowed[r] {
				count[r]++
			}
		}
	}
	var moves []Move
	full := func() bool { return maxMoves >= 1 && len(moves) >= maxMoves }
	move := func(i, pos int, to uint8) {
		from := lists[i][pos]
		if allowed[from] {
			count[from]--
		}
		count[to]++
		lists[i][pos] = to
		moves = append(moves, Move{Index: i, From: from, To: to})
	}
	for i, l := range lists {
		for pos, r := range l {
			if allowed[r] || full() {
				continue
			}
			best, ok := uint8(0), false
			for _, n := range nodes {
				if !slices.Contains(l, n.ID) && (!ok || count[n.ID] < count[best]) {
					best, ok = n.ID, true
				}
			}
			if ok {
				move(i, pos, best)
			}
		}
	}
	for !full() {
		hi, lo := nodes[0].ID, nodes[0].ID
		for _, n := range nodes {
			if count[n.ID] > count[hi] {
				hi = n.ID
			}
			if count[n.ID] < count[lo] {
				lo = n.ID
			}
		}
		if count[hi]-count[lo] < 2 {
			break
		}
		moved := false
		for i, l := range lists {
			if pos := slices.Index(l, hi); pos >= 0 && !slices.Contains(l, lo) {
				move(i, pos, lo)
				moved = true
				break
			}
		}
		if !moved {
			break
		}
	}
	return moves, nil
}
