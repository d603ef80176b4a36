package rebalance

import (
	"slices"

	"github.com/iggo-dev/iggo/internal/metadata"
	"github.com/iggo-dev/iggo/internal/replication"
)

// Counts are the cluster-wide figures of a placement (metrics).
type Counts struct {
	// MovesInProgress is the number of partitions with a Target.
	MovesInProgress int
	// Replicas is, per node, the number of partitions it holds a replica
	// of: its replica lists and the targets of moves in progress (a
	// node that takes or gives a replica holds it during the move).
	Replicas map[uint8]int
	// Placed is the number of partitions with a replica list.
	Placed int
}

// Count computes the Counts of pls.
func Count(pls []metadata.PartitionPlacement) Counts {
	c := Counts{Replicas: map[uint8]int{}}
	for _, pp := range pls {
		if len(pp.Replicas) == 0 {
			continue
		}
		c.Placed++
		if len(pp.Target) > 0 {
			c.MovesInProgress++
		}
		for _, r := range holders(pp) {
			c.Replicas[r]++
		}
	}
	return c
}

// UnderReplicated reports whether fewer members of pp's replica list are
// live voters of its group (view v) than the list holds.
func UnderReplicated(pp metadata.PartitionPlacement, v replication.View, alive func(replication.NodeID) bool) bool {
	live := 0
	for _, r := range pp.Replicas {
		if n := replication.NodeID(r); slices.Contains(v.Voters, n) && alive(n) {
			live++
		}
	}
	return live < len(pp.Replicas)
}

// ids is a replica list as numbers, for log lines ([]uint8 would print
// as a string).
func ids(l []uint8) []int {
	out := make([]int, len(l))
	for i, r := range l {
		out[i] = int(r)
	}
	return out
}
