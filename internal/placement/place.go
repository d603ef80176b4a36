package placement

import (
	"cmp"
	"fmt"
	"slices"
)

// Place chooses the replica lists of count new partitions, each of rf
// distinct nodes out of nodes, and adds them to load (nil: an empty load).
//
// The choice is greedy, one partition after the other, against the load
// as it grows, so one call for thousands of partitions stays balanced.
// Replicas come first: a list takes the nodes holding the fewest
// replicas (from an even load, counts never differ by more than one).
// Among the nodes that allows, the leader (element 0) is the
// one leading the fewest partitions; the followers are the least loaded
// others, preferring a rack the list does not use yet (racks count only
// when every node names one), then nodes already leading more (so those
// leading few stay free to lead the next lists), then the next node in a
// rotation that advances with every partition. Last, where that left
// preferred leaders uneven, the new lists are reordered (never the
// existing ones) until no node leads two more than another it can hand a
// leadership to. With racks of equal sizes every list spans min(rf,
// racks) racks; with unequal sizes a list spreads over racks only as far
// as equal replica counts allow.
//
// rf below 1 or above len(nodes) fails with an error wrapping
// ErrReplicationFactor that names both counts; duplicate node ids and
// racks on some nodes only fail too.
func Place(nodes []Node, load *Load, rf int, count int) ([][]uint8, error) {
	racks, err := checkNodes(nodes)
	if err != nil {
		return nil, err
	}
	if rf < 1 || rf > len(nodes) {
		return nil, fmt.Errorf("%w: %d replicas per partition with %d nodes (it must be at least 1 and at most the node count)",
			ErrReplicationFactor, rf, len(nodes))
	}
	if count < 0 {
		return nil, fmt.Errorf("placement: negative partition count %d", count)
	}
	if load == nil {
		load = &Load{}
	}
	p := newPlacer(nodes, racks, rf)
	out := make([][]uint8, count)
	backing := make([]uint8, count*rf)
	for i := range out {
		set := backing[i*rf : (i+1)*rf : (i+1)*rf]
		p.choose(load, set)
		load.Add(set)
		out[i] = set
	}
	// The greedy choice at times had to take the nodes leading the fewest
	// partitions as followers; reordering the new lists evens that out.
	sh := newShifter(p.nodes, out, &load.leaders)
	for sh.shift(func(int, uint8) {}) {
	}
	return out, nil
}

// placer holds the scratch state of Place.
type placer struct {
	nodes    []Node
	rackOf   []int
	rackUses []int  // per rack: members of the list being chosen
	taken    []bool // per node: already a member of that list
	picked   []int  // node indexes of the list, in the order chosen
	counts   []int  // scratch for threshold
	rackSize []int  // per rack: nodes
	rackLoad []int  // per rack: replicas on its nodes
}

func newPlacer(nodes []Node, racks bool, rf int) *placer {
	of, n := rackIndex(nodes, racks)
	p := &placer{
		nodes: nodes, rackOf: of, rackUses: make([]int, n),
		taken: make([]bool, len(nodes)), picked: make([]int, 0, rf),
		counts: make([]int, 0, len(nodes)), rackSize: make([]int, n), rackLoad: make([]int, n),
	}
	for _, r := range of {
		p.rackSize[r]++
	}
	return p
}

// choose fills set with distinct node ids (see Place).
//
// Replica balance allows any node whose replica count is at most the
// rf-th smallest count (the threshold): those below it must be members,
// those at it may be. The leader is the allowed node leading the fewest
// partitions; the followers are the least loaded other nodes, preferring
// unused racks and then nodes that already lead more, so the nodes that
// lead few partitions stay among the least loaded and get to lead next.
func (p *placer) choose(load *Load, set []uint8) {
	n := len(p.nodes)
	start := load.lists % n
	clear(p.taken)
	clear(p.rackUses)
	p.picked = p.picked[:0]
	threshold := p.threshold(load, len(set))
	clear(p.rackLoad)
	for i, nd := range p.nodes {
		p.rackLoad[p.rackOf[i]] += load.replicas[nd.ID]
	}
	lead := -1
	for i, nd := range p.nodes {
		if load.replicas[nd.ID] > threshold {
			continue
		}
		if lead < 0 || p.betterLeader(load, i, lead, start) {
			lead = i
		}
	}
	p.take(lead)
	for range set[1:] {
		best := -1
		for i := range n {
			if !p.taken[i] && (best < 0 || p.betterFollower(load, i, best, start)) {
				best = i
			}
		}
		p.take(best)
	}
	for k, i := range p.picked {
		set[k] = p.nodes[i].ID
	}
}

// take makes node index i the next member of the list being chosen.
func (p *placer) take(i int) {
	p.taken[i] = true
	p.rackUses[p.rackOf[i]]++
	p.picked = append(p.picked, i)
}

// threshold returns the rf-th smallest replica count of the nodes.
func (p *placer) threshold(load *Load, rf int) int {
	c := p.counts[:0]
	for _, nd := range p.nodes {
		c = append(c, load.replicas[nd.ID])
	}
	slices.Sort(c)
	return c[rf-1]
}

// betterLeader reports whether node index a should lead rather than b:
// fewer leaderships, then fewer replicas, then the rotation.
func (p *placer) betterLeader(load *Load, a, b, start int) bool {
	ia, ib := p.nodes[a].ID, p.nodes[b].ID
	if la, lb := load.leaders[ia], load.leaders[ib]; la != lb {
		return la < lb
	}
	if ra, rb := load.replicas[ia], load.replicas[ib]; ra != rb {
		return ra < rb
	}
	if c := p.compareRacks(a, b); c != 0 {
		return c < 0
	}
	return p.rot(a, start) < p.rot(b, start)
}

// betterFollower reports whether node index a is a better next follower
// than b: fewer replicas, then a less used rack, then more leaderships,
// then the rotation.
func (p *placer) betterFollower(load *Load, a, b, start int) bool {
	ia, ib := p.nodes[a].ID, p.nodes[b].ID
	if ra, rb := load.replicas[ia], load.replicas[ib]; ra != rb {
		return ra < rb
	}
	if ua, ub := p.rackUses[p.rackOf[a]], p.rackUses[p.rackOf[b]]; ua != ub {
		return ua < ub
	}
	if c := p.compareRacks(a, b); c != 0 {
		return c < 0
	}
	if la, lb := load.leaders[ia], load.leaders[ib]; la != lb {
		return la > lb
	}
	return p.rot(a, start) < p.rot(b, start)
}

// compareRacks compares the replicas per node of the racks of node
// indexes a and b. Taking from the less loaded rack keeps the racks'
// least loaded nodes spread over racks, so the lists that must take
// them still span as many racks as they can.
func (p *placer) compareRacks(a, b int) int {
	ra, rb := p.rackOf[a], p.rackOf[b]
	return cmp.Compare(p.rackLoad[ra]*p.rackSize[rb], p.rackLoad[rb]*p.rackSize[ra])
}

// rot is node index i's place in the rotation that starts at start.
func (p *placer) rot(i, start int) int {
	n := len(p.nodes)
	return (i - start + n) % n
}
