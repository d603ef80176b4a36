package placement

import (
	"errors"
	"fmt"
)

// Node is a node that may hold replicas.
type Node struct {
	// ID is the node's replica id.
	ID uint8
	// Rack is the node's failure domain; empty when none is configured.
	Rack string
}

// Errors wrapped by the functions of this package.
var (
	// ErrReplicationFactor: the replication factor is below 1 or above
	// the number of nodes.
	ErrReplicationFactor = errors.New("placement: replication factor out of range")
	// ErrPartialRacks: some nodes name a rack and others do not.
	ErrPartialRacks = errors.New("placement: a rack is set on some nodes only")
	// ErrDuplicateNode: a node id is listed twice.
	ErrDuplicateNode = errors.New("placement: node listed twice")
)

// CheckRacks reports whether racks are in use: either every node names a
// rack (true) or none does (false). A rack on some nodes only fails with
// an error wrapping ErrPartialRacks that names one node of each kind.
func CheckRacks(nodes []Node) (bool, error) {
	with, without := -1, -1
	for i, n := range nodes {
		if n.Rack != "" {
			with = i
		} else {
			without = i
		}
	}
	if with >= 0 && without >= 0 {
		return false, fmt.Errorf("%w: node %d has rack %q, node %d has none",
			ErrPartialRacks, nodes[with].ID, nodes[with].Rack, nodes[without].ID)
	}
	return with >= 0, nil
}

// checkNodes validates a node list: distinct ids and racks on all or
// none. It reports whether racks are in use.
func checkNodes(nodes []Node) (bool, error) {
	var seen [256]bool
	for _, n := range nodes {
		if seen[n.ID] {
			return false, fmt.Errorf("%w: %d", ErrDuplicateNode, n.ID)
		}
		seen[n.ID] = true
	}
	return CheckRacks(nodes)
}

// rackIndex numbers the racks of nodes 0..R-1 in order of first
// appearance and returns each node's rack number (all 0 without racks)
// and R (1 without racks).
func rackIndex(nodes []Node, racks bool) (of []int, count int) {
	of = make([]int, len(nodes))
	if !racks {
		return of, 1
	}
	ids := map[string]int{}
	for i, n := range nodes {
		r, ok := ids[n.Rack]
		if !ok {
			r = len(ids)
			ids[n.Rack] = r
		}
		of[i] = r
	}
	return of, len(ids)
}

// Preferred returns the preferred leader among replicas: the first member
// of the list that is alive. It reports false when none is (or the list
// is empty).
func Preferred(replicas []uint8, alive func(uint8) bool) (uint8, bool) {
	for _, r := range replicas {
		if alive(r) {
			return r, true
		}
	}
	return 0, false
}
