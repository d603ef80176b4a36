package placement

import (
	"cmp"
	"slices"
)

// Move replaces replica From of partition Index (an index into the
// placement given to Plan) by a replica on node To, at the same position
// of the list, so the order of succession of the other members stays.
type Move struct {
	Index    int
	From, To uint8
}

// Apply replaces m.From by m.To in list and reports whether it found
// m.From there.
func (m Move) Apply(list []uint8) bool {
	for i, r := range list {
		if r == m.From {
			list[i] = m.To
			return true
		}
	}
	return false
}

// Plan returns up to maxMoves replica moves (no bound when maxMoves < 1)
// for placement current, with nodes the live nodes allowed to hold
// replicas. Applied in order, the moves:
//
//  1. move every replica held by a node not in nodes (a node being
//     drained for removal, or a dead one whose replicas are re-created),
//     partitions with the most such replicas first, each to a node
//     still below the mean (rounded up) the evacuation heads for,
//     preferring a rack the rest of the list does not use, then the
//     least loaded node; a replica with no possible target (every
//     allowed node already holds the partition) stays where it is;
//  2. then move replicas from the node holding the most to the node
//     holding the fewest, as long as one holds more than one replica above
//     the mean or one more than one below it and they differ by two or
//     more. Among the moves between such nodes it prefers one whose list
//     then spans more racks (fewer at the very least), then one whose
//     preferred leadership helps balance leaders.
//
// Replica balance comes first: when racks differ in size a list spans
// fewer racks rather than a node holding more than its share. Moves keep
// positions, so preferred leaders may stay uneven where no move can help;
// BalanceLeaders reorders lists for that.
//
// A target never already holds the partition. Plan is stable: on a
// placement where every replica is on an allowed node and every node
// holds the mean ±1 replicas it returns nothing; when maxMoves cut it
// short, calling it again on the placement with its moves applied goes
// on, and repeating that ends with no moves. Empty lists (partitions without a
// placement) are left alone. Duplicate node ids and racks on some nodes
// only are errors.
func Plan(nodes []Node, current [][]uint8, maxMoves int) ([]Move, error) {
	racks, err := checkNodes(nodes)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	p := newPlanner(nodes, racks, current, maxMoves)
	p.evacuate()
	p.rebalance()
	return p.moves, nil
}

// planner is the working state of Plan: a copy of the lists with the
// moves so far applied, and the counts of the allowed nodes.
type planner struct {
	nodes    []Node
	allowed  [256]bool
	rack     [256]int // rack number of an allowed node
	racks    bool
	nracks   int
	lists    [][]uint8
	replicas [256]int
	leaders  [256]int
	total    int        // replicas on allowed nodes
	cap      int        // replicas per node the evacuation heads for (the mean, rounded up)
	byNode   [256][]int // partitions each node held at some point (stale entries are skipped)
	index    [256]int   // position of an allowed node in nodes
	// noRackKeeping[pair(h, l)]: no list of h can move to l without
	// spanning fewer racks (known from a scan, kept up to date as lists
	// change), so nextMove need not look again.
	noRackKeeping []bool
	moves         []Move
	limit         int
}

func newPlanner(nodes []Node, racks bool, current [][]uint8, maxMoves int) *planner {
	p := &planner{nodes: nodes, racks: racks, lists: make([][]uint8, len(current)), limit: maxMoves}
	of, n := rackIndex(nodes, racks)
	p.nracks = n
	for i, nd := range nodes {
		p.allowed[nd.ID] = true
		p.rack[nd.ID] = of[i]
		p.index[nd.ID] = i
	}
	if racks {
		p.noRackKeeping = make([]bool, len(nodes)*len(nodes))
	}
	backing := 0
	for _, l := range current {
		backing += len(l)
	}
	buf := make([]uint8, 0, backing)
	for i, l := range current {
		buf = append(buf, l...)
		p.lists[i] = buf[len(buf)-len(l) : len(buf) : len(buf)]
		for k, r := range l {
			p.byNode[r] = append(p.byNode[r], i)
			if p.allowed[r] {
				p.replicas[r]++
				p.total++
				if k == 0 {
					p.leaders[r]++
				}
			}
		}
	}
	return p
}

// full reports whether the move budget is spent.
func (p *planner) full() bool { return p.limit >= 1 && len(p.moves) >= p.limit }

// apply records move m and updates the working state.
func (p *planner) apply(m Move) {
	list := p.lists[m.Index]
	pos := slices.Index(list, m.From)
	list[pos] = m.To
	if p.allowed[m.From] {
		p.replicas[m.From]--
		p.total--
		if pos == 0 {
			p.leaders[m.From]--
		}
	}
	p.replicas[m.To]++
	p.total++
	if pos == 0 {
		p.leaders[m.To]++
	}
	p.byNode[m.To] = append(p.byNode[m.To], m.Index)
	p.moves = append(p.moves, m)
	p.noteChanged(m.Index)
}

// evacuate moves the replicas held by nodes that are not allowed.
func (p *planner) evacuate() {
	type slot struct{ index, pos, bad int }
	var slots []slot
	for i, l := range p.lists {
		bad := 0
		for _, r := range l {
			if !p.allowed[r] {
				bad++
			}
		}
		for pos, r := range l {
			if !p.allowed[r] {
				slots = append(slots, slot{i, pos, bad})
			}
		}
	}
	all := p.total + len(slots)
	p.cap = (all + len(p.nodes) - 1) / len(p.nodes)
	// The partitions that lost the most replicas first; stable otherwise.
	slices.SortStableFunc(slots, func(a, b slot) int { return cmp.Compare(b.bad, a.bad) })
	for _, s := range slots {
		if p.full() {
			return
		}
		list := p.lists[s.index]
		if to, ok := p.target(s.index, s.pos); ok {
			p.apply(Move{Index: s.index, From: list[s.pos], To: to})
		}
	}
}

// target picks the allowed node to take position pos of list index: not a
// member already; preferably one still below the mean the evacuation
// heads for (rounded up), so that a rack the rest of the list does not
// use can win over a slightly lower count; then the rack the rest of the
// list uses least; then fewest replicas; then (for the leader position)
// fewest leaders; then a rotation by partition.
func (p *planner) target(index, pos int) (uint8, bool) {
	list := p.lists[index]
	n := len(p.nodes)
	best, bestKey := -1, [5]int{}
	for i, nd := range p.nodes {
		if slices.Contains(list, nd.ID) {
			continue
		}
		full := 0
		if p.replicas[nd.ID] >= p.cap {
			full = 1
		}
		key := [5]int{full, p.rackUses(list, pos, nd.ID), p.replicas[nd.ID], 0, (i - index%n + n) % n}
		if pos == 0 {
			key[3] = p.leaders[nd.ID]
		}
		if best < 0 || slices.Compare(key[:], bestKey[:]) < 0 {
			best, bestKey = i, key
		}
	}
	if best < 0 {
		return 0, false
	}
	return p.nodes[best].ID, true
}

// rackUses counts the allowed members of list other than position skip
// that share node id's rack (0 without racks).
func (p *planner) rackUses(list []uint8, skip int, id uint8) int {
	if !p.racks {
		return 0
	}
	n := 0
	for k, r := range list {
		if k != skip && p.allowed[r] && p.rack[r] == p.rack[id] {
			n++
		}
	}
	return n
}

// rackGain is the change in racks spanned by list when position pos
// (node h) is taken by node l: +1 if l brings a rack no other allowed
// member has, -1 if h took away the only member of its rack, both or
// neither 0.
func (p *planner) rackGain(list []uint8, pos int, h, l uint8) int {
	gain := 0
	if p.rackUses(list, pos, l) == 0 {
		gain++
	}
	if p.allowed[h] && p.rackUses(list, pos, h) == 0 {
		gain--
	}
	return gain
}

// rebalance moves replicas from the most to the least loaded nodes.
func (p *planner) rebalance() {
	src := make([]uint8, len(p.nodes))
	for i, nd := range p.nodes {
		src[i] = nd.ID
	}
	dst := slices.Clone(src)
	for !p.full() {
		mean := float64(p.total) / float64(len(p.nodes))
		slices.SortFunc(src, func(a, b uint8) int {
			return cmp.Or(cmp.Compare(p.replicas[b], p.replicas[a]), cmp.Compare(a, b))
		})
		slices.SortFunc(dst, func(a, b uint8) int {
			return cmp.Or(cmp.Compare(p.replicas[a], p.replicas[b]), cmp.Compare(a, b))
		})
		m, ok := p.nextMove(src, dst, mean)
		if !ok {
			return
		}
		p.apply(m)
	}
}

// unbalanced reports whether moving a replica from h to l is worth it.
func (p *planner) unbalanced(h, l uint8, mean float64) bool {
	rh, rl := p.replicas[h], p.replicas[l]
	return rh-rl >= 2 && (float64(rh) > mean+1 || float64(rl) < mean-1)
}

// nextMove finds a move between a pair of unbalanced nodes, the most
// unbalanced pair first, preferring a move that does not make the list
// span fewer racks; failing that, the first move found.
func (p *planner) nextMove(src, dst []uint8, mean float64) (Move, bool) {
	for _, h := range src {
		if !p.unbalanced(h, dst[0], mean) {
			break
		}
		for _, l := range dst {
			if !p.unbalanced(h, l, mean) {
				break
			}
			if p.racks && p.noRackKeeping[p.pair(h, l)] {
				continue
			}
			m, rack, ok := p.candidate(h, l)
			if ok && rack >= 0 {
				return m, true
			}
			if p.racks {
				p.noRackKeeping[p.pair(h, l)] = true
			}
		}
	}
	if !p.racks {
		return Move{}, false
	}
	// Every move loses a rack: take the first pair that has one.
	for _, h := range src {
		if !p.unbalanced(h, dst[0], mean) {
			break
		}
		for _, l := range dst {
			if !p.unbalanced(h, l, mean) {
				break
			}
			if m, _, ok := p.candidate(h, l); ok {
				return m, true
			}
		}
	}
	return Move{}, false
}

// pair is the index of (h, l) in noRackKeeping.
func (p *planner) pair(h, l uint8) int { return p.index[h]*len(p.nodes) + p.index[l] }

// noteChanged updates noRackKeeping after list index changed: the list
// may now be a move from one of its members to another node that loses
// no rack.
func (p *planner) noteChanged(index int) {
	if !p.racks {
		return
	}
	list := p.lists[index]
	for pos, h := range list {
		if !p.allowed[h] {
			continue
		}
		for _, nd := range p.nodes {
			k := p.pair(h, nd.ID)
			if p.noRackKeeping[k] && !slices.Contains(list, nd.ID) && p.rackGain(list, pos, h, nd.ID) >= 0 {
				p.noRackKeeping[k] = false
			}
		}
	}
}

// rackSearch is how many movable lists candidate looks at for one that
// gains a rack once it has one that loses none.
const rackSearch = 64

// candidate picks the partition of h to move to l: l not a member; the
// largest gain in racks spanned (a gain looked for among the first
// rackSearch movable lists only); then one whose leadership moving helps
// (or at least does not hurt) the leader balance; then the lowest index.
// It returns the change in racks spanned too.
func (p *planner) candidate(h, l uint8) (Move, int, bool) {
	found, best, bestRack, bestLead, seen := false, 0, 0, 0, 0
	wantLead := p.leaders[h]-p.leaders[l] >= 2
	for _, i := range p.byNode[h] {
		list := p.lists[i]
		pos := slices.Index(list, h)
		if pos < 0 || slices.Contains(list, l) {
			continue
		}
		rack := 0
		if p.racks {
			rack = p.rackGain(list, pos, h, l)
		}
		lead := 0
		if pos == 0 {
			switch d := p.leaders[h] - p.leaders[l]; {
			case d >= 2:
				lead = 1
			case d <= 0:
				lead = -1
			}
		}
		seen++
		if !found || rack > bestRack || rack == bestRack && lead > bestLead {
			found, best, bestRack, bestLead = true, i, rack, lead
		}
		if bestLead == 1 || !wantLead && bestLead == 0 {
			// Nothing beats it, or nothing is likely to: a list that
			// gains a rack is looked for among the first few only.
			if !p.racks || bestRack > 0 || bestRack == 0 && seen >= rackSearch {
				break
			}
		}
	}
	if !found {
		return Move{}, 0, false
	}
	return Move{Index: best, From: h, To: l}, bestRack, true
}
