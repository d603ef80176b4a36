// Package placement chooses which nodes of a cluster hold each partition:
// replica sets for new partitions, balanced over nodes and racks, with the
// first member of each set its preferred leader. It is pure and
// deterministic: the same inputs give the same lists on every node.
package placement

import (
	"errors"
	"fmt"
	"sort"
)

// ErrReplicationFactor is a replication factor below 1 or above the
// number of nodes that can hold a replica.
var ErrReplicationFactor = errors.New("placement: invalid replication factor")

// Node is one node that may hold replicas.
type Node struct {
	ID   uint8
	Rack string
}

// Load counts, per node, the replicas it holds and the partitions it is
// the preferred leader of.
type Load struct {
	Replicas map[uint8]int
	Leaders  map[uint8]int
}

// NewLoad counts the load of the given replica lists (element 0 of each
// is the preferred leader).
func NewLoad(lists [][]uint8) *Load {
	l := &Load{Replicas: map[uint8]int{}, Leaders: map[uint8]int{}}
	for _, r := range lists {
		l.Add(r)
	}
	return l
}

// Add counts one more replica list.
func (l *Load) Add(r []uint8) {
	for i, n := range r {
		l.Replicas[n]++
		if i == 0 {
			l.Leaders[n]++
		}
	}
}

// Place returns replica lists for count new partitions, rf distinct nodes
// each, and adds them to load.
func Place(nodes []Node, load *Load, rf, count int) ([][]uint8, error) {
	if rf < 1 || rf > len(nodes) {
		return nil, fmt.Errorf("%w: %d replicas asked, %d nodes", ErrReplicationFactor, rf, len(nodes))
	}
	out := make([][]uint8, count)
	for p := range out {
		cand := append([]Node(nil), nodes...)
		sort.SliceStable(cand, func(i, j int) bool {
			a, b := cand[i].ID, cand[j].ID
			if load.Leaders[a] != load.Leaders[b] {
				return load.Leaders[a] < load.Leaders[b]
			}
			if load.Replicas[a] != load.Replicas[b] {
				return load.Replicas[a] < load.Replicas[b]
			}
			return a < b
		})
		list := []uint8{cand[0].ID}
		rest := cand[1:]
		sort.SliceStable(rest, func(i, j int) bool {
			a, b := rest[i].ID, rest[j].ID
			if load.Replicas[a] != load.Replicas[b] {
				return load.Replicas[a] < load.Replicas[b]
			}
			return a < b
		})
		for _, n := range rest[:rf-1] {
			list = append(list, n.ID)
		}
		load.Add(list)
		out[p] = list
	}
	return out, nil
}
