package placement

import (
	"cmp"
	"slices"
)

// Lead makes node To, a member of partition Index's list, its preferred
// leader: To and the current element 0 swap places. It moves no replica.
type Lead struct {
	Index int
	To    uint8
}

// Apply swaps m.To to the front of list and reports whether it found it.
func (m Lead) Apply(list []uint8) bool {
	i := slices.Index(list, m.To)
	if i < 0 {
		return false
	}
	list[0], list[i] = list[i], list[0]
	return true
}

// BalanceLeaders returns up to maxChanges leader changes (no bound when
// maxChanges < 1; the changes of one chain, below, go together, so the
// first chain is returned whole even when longer) that even out the preferred leaders of current among
// nodes by reordering lists, moving no replica. Moves keep positions, so
// after Plan the preferred leaders can stay uneven where no move could
// help (every allowed node already in a list); this fixes that. While the
// node leading the most partitions leads two or more than some node it
// reaches, leadership shifts along a shortest chain: a list it leads is
// led by one of its followers instead, a list that follower leads by one
// of its own, and so on up to a node leading at least two fewer. Only
// members on nodes in nodes are counted and take the lead. Applied in
// order, the changes leave every count within 1 of the others in most
// placements; it returns nothing when they are already.
func BalanceLeaders(nodes []Node, current [][]uint8, maxChanges int) ([]Lead, error) {
	if _, err := checkNodes(nodes); err != nil {
		return nil, err
	}
	lists := make([][]uint8, len(current))
	for i, l := range current {
		lists[i] = slices.Clone(l)
	}
	var leaders [256]int
	var allowed [256]bool
	for _, n := range nodes {
		allowed[n.ID] = true
	}
	for _, l := range lists {
		if len(l) > 0 && allowed[l[0]] {
			leaders[l[0]]++
		}
	}
	sh := newShifter(nodes, lists, &leaders)
	var out []Lead
	for maxChanges < 1 || len(out) < maxChanges {
		var chain []Lead
		if !sh.shift(func(i int, to uint8) { chain = append(chain, Lead{Index: i, To: to}) }) {
			break
		}
		if maxChanges >= 1 && len(out) > 0 && len(out)+len(chain) > maxChanges {
			break
		}
		out = append(out, chain...)
	}
	return out, nil
}

// shifter evens out the preferred leaders of lists (which it reorders)
// among nodes, keeping leaders (the counts, which may include lists it
// does not see) up to date.
type shifter struct {
	lists   [][]uint8
	leaders *[256]int
	allowed [256]bool
	order   []uint8
	ledBy   map[uint8][]int // lists each node led at some point (stale entries are skipped)
}

func newShifter(nodes []Node, lists [][]uint8, leaders *[256]int) *shifter {
	s := &shifter{lists: lists, leaders: leaders, ledBy: map[uint8][]int{}}
	for _, n := range nodes {
		s.allowed[n.ID] = true
		s.order = append(s.order, n.ID)
	}
	for i, l := range lists {
		if len(l) > 0 && s.allowed[l[0]] {
			s.ledBy[l[0]] = append(s.ledBy[l[0]], i)
		}
	}
	return s
}

// shift moves one leadership from the node leading the most partitions
// that has a chain to a node leading two fewer, calling changed for every
// list whose leader changes, in chain order from the far end. It reports
// false when no such chain exists.
func (s *shifter) shift(changed func(index int, to uint8)) bool {
	if len(s.order) == 0 {
		return false
	}
	slices.SortFunc(s.order, func(a, b uint8) int {
		return cmp.Or(cmp.Compare(s.leaders[b], s.leaders[a]), cmp.Compare(a, b))
	})
	least := s.leaders[s.order[len(s.order)-1]]
	for _, a := range s.order {
		if s.leaders[a]-least < 2 {
			return false
		}
		if s.chain(a, changed) {
			return true
		}
	}
	return false
}

// chain finds, breadth first, a chain of lists from one led by a to a
// node leading at least two fewer partitions than a, and shifts
// leadership along it.
func (s *shifter) chain(a uint8, changed func(index int, to uint8)) bool {
	type edge struct {
		from      uint8
		list, pos int
	}
	var seen [256]bool
	via := map[uint8]edge{}
	seen[a] = true
	queue := []uint8{a}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, i := range s.ledBy[u] {
			l := s.lists[i]
			if l[0] != u {
				continue // led by another node since
			}
			for k, v := range l[1:] {
				if seen[v] || !s.allowed[v] {
					continue
				}
				seen[v] = true
				via[v] = edge{u, i, k + 1}
				if s.leaders[a]-s.leaders[v] < 2 {
					queue = append(queue, v)
					continue
				}
				for w := v; w != a; {
					e := via[w]
					l := s.lists[e.list]
					l[0], l[e.pos] = w, l[0]
					s.ledBy[w] = append(s.ledBy[w], e.list)
					changed(e.list, w)
					w = e.from
				}
				s.leaders[a]--
				s.leaders[v]++
				return true
			}
		}
	}
	return false
}
