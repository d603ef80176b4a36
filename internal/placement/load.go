package placement

// Load counts, per node, the replicas it holds and the partitions it is
// the preferred leader of (element 0 of their lists). Place reads it to
// balance new partitions against the existing ones and updates it with
// every list it chooses. The zero value is an empty load.
type Load struct {
	replicas [256]int
	leaders  [256]int
	lists    int
}

// NewLoad returns the load of an existing placement: one replica list per
// partition, element 0 the preferred leader. Empty lists are skipped.
func NewLoad(placement [][]uint8) *Load {
	l := &Load{}
	for _, r := range placement {
		l.Add(r)
	}
	return l
}

// Add counts one partition with replica list replicas.
func (l *Load) Add(replicas []uint8) {
	if len(replicas) == 0 {
		return
	}
	for _, r := range replicas {
		l.replicas[r]++
	}
	l.leaders[replicas[0]]++
	l.lists++
}

// Remove uncounts one partition with replica list replicas (a partition
// deleted, or about to be counted again with a new list).
func (l *Load) Remove(replicas []uint8) {
	if len(replicas) == 0 {
		return
	}
	for _, r := range replicas {
		l.replicas[r]--
	}
	l.leaders[replicas[0]]--
	l.lists--
}

// Replicas returns the number of replicas node n holds.
func (l *Load) Replicas(n uint8) int { return l.replicas[n] }

// Leaders returns the number of partitions node n is the preferred
// leader of.
func (l *Load) Leaders(n uint8) int { return l.leaders[n] }
