package groups

import (
	"fmt"
	"slices"
	"time"
)

// t0 is the base time of the scenarios.
var t0 = time.Unix(1_700_000_000, 0)

// cid is a client id for tests.
func cid(n uint64) ClientID { return ClientID{Lo: n, Hi: n << 32} }

// ids returns the partition ids lo..hi-1.
func ids(lo, hi PartitionID) []PartitionID {
	var out []PartitionID
	for p := lo; p < hi; p++ {
		out = append(out, p)
	}
	return out
}

// fullModel is an independent statement of the full rebalance (§6.3):
// partition i (ascending) to member i % M (ascending id).
func fullModel(memberIDs []MemberID, partitions []PartitionID) map[MemberID][]PartitionID {
	out := make(map[MemberID][]PartitionID, len(memberIDs))
	m := slices.Clone(memberIDs)
	slices.Sort(m)
	p := slices.Clone(partitions)
	slices.Sort(p)
	for _, id := range m {
		out[id] = []PartitionID{}
	}
	if len(m) == 0 {
		return out
	}
	for i, pid := range p {
		out[m[i%len(m)]] = append(out[m[i%len(m)]], pid)
	}
	return out
}

// layout returns member id -> owned partitions (list order).
func layout(g *Group) map[MemberID][]PartitionID {
	out := make(map[MemberID][]PartitionID)
	for _, m := range g.Members() {
		out[m.ID] = m.Partitions
	}
	return out
}

// eventualCounts returns member id -> partitions it will hold once every
// pending revocation completes.
func eventualCounts(g *Group) map[MemberID]int {
	out := make(map[MemberID]int)
	for _, m := range g.Members() {
		out[m.ID] = len(m.Partitions)
	}
	for _, r := range g.Revocations() {
		out[r.Source]--
		out[r.Target]++
	}
	return out
}

// balanced reports whether counts form the multiset a full rebalance of p
// partitions over len(counts) members gives: rem members with fair+1, the
// rest fair.
func balanced(counts map[MemberID]int, p int) error {
	n := len(counts)
	if n == 0 {
		return nil
	}
	fair, rem := p/n, p%n
	high := 0
	for id, c := range counts {
		switch c {
		case fair:
		case fair + 1:
			high++
		default:
			return fmt.Errorf("member %d holds %d, fair share %d (+1 for %d members)", id, c, fair, rem)
		}
	}
	if high != rem {
		return fmt.Errorf("%d members hold fair+1, want %d", high, rem)
	}
	return nil
}

// checkInvariants verifies the structural invariants of g, that the eventual
// assignment is balanced, and the snapshot round trip.
func checkInvariants(g *Group) error {
	if err := checkStructure(g); err != nil {
		return err
	}
	if err := balanced(eventualCounts(g), len(g.Partitions())); err != nil {
		return fmt.Errorf("eventual assignment unbalanced: %w", err)
	}
	return nil
}

// checkStructure verifies the structural invariants of g through its
// exported API (and the snapshot round trip). Balance is not structural: a
// decoded snapshot may hold any assignment.
func checkStructure(g *Group) error {
	parts := g.Partitions()
	if !slices.IsSorted(parts) {
		return fmt.Errorf("partitions not sorted: %v", parts)
	}
	known := make(map[PartitionID]bool, len(parts))
	for _, p := range parts {
		known[p] = true
	}
	owner := make(map[PartitionID]MemberID)
	clients := make(map[ClientID]bool)
	members := g.Members()
	if len(members) != g.Len() {
		return fmt.Errorf("Members() has %d entries, Len() %d", len(members), g.Len())
	}
	for i, m := range members {
		if i > 0 && members[i-1].ID >= m.ID {
			return fmt.Errorf("member ids not ascending: %d then %d", members[i-1].ID, m.ID)
		}
		if clients[m.Client] {
			return fmt.Errorf("client of member %d appears twice", m.ID)
		}
		clients[m.Client] = true
		if id, ok := g.MemberOf(m.Client); !ok || id != m.ID {
			return fmt.Errorf("MemberOf(member %d) = %d, %v", m.ID, id, ok)
		}
		for _, p := range m.Partitions {
			if !known[p] {
				return fmt.Errorf("member %d owns unknown partition %d", m.ID, p)
			}
			if o, dup := owner[p]; dup {
				return fmt.Errorf("partition %d owned by members %d and %d", p, o, m.ID)
			}
			owner[p] = m.ID
		}
	}
	if len(members) > 0 && len(owner) != len(parts) {
		return fmt.Errorf("%d of %d partitions owned with %d members", len(owner), len(parts), len(members))
	}
	revoking := make(map[PartitionID]bool)
	memberIDs := make(map[MemberID]bool)
	for _, m := range members {
		memberIDs[m.ID] = true
	}
	for _, r := range g.Revocations() {
		if revoking[r.Partition] {
			return fmt.Errorf("partition %d revoked twice", r.Partition)
		}
		revoking[r.Partition] = true
		if o, ok := owner[r.Partition]; !ok || o != r.Source {
			return fmt.Errorf("revocation of %d: source %d does not own it", r.Partition, r.Source)
		}
		if !memberIDs[r.Target] || r.Target == r.Source {
			return fmt.Errorf("revocation of %d: bad target %d", r.Partition, r.Target)
		}
	}
	pollers := make(map[PartitionID]MemberID)
	for _, m := range members {
		gen, pollable, err := g.Assignment(m.Client)
		if err != nil || gen != g.Generation() {
			return fmt.Errorf("Assignment(member %d) = %d, %v", m.ID, gen, err)
		}
		want := slices.DeleteFunc(slices.Clone(m.Partitions), func(p PartitionID) bool { return revoking[p] })
		if !slices.Equal(pollable, want) {
			return fmt.Errorf("member %d pollable %v, want %v", m.ID, pollable, want)
		}
		for _, p := range pollable {
			if o, dup := pollers[p]; dup {
				return fmt.Errorf("partition %d pollable by %d and %d", p, o, m.ID)
			}
			pollers[p] = m.ID
			if err := g.CanPoll(m.Client, p); err != nil {
				return fmt.Errorf("CanPoll(member %d, %d) = %v", m.ID, p, err)
			}
		}
		for _, p := range m.Partitions {
			if err := g.CanCommit(m.Client, p); err != nil {
				return fmt.Errorf("CanCommit(member %d, %d) = %v", m.ID, p, err)
			}
			if revoking[p] && g.CanPoll(m.Client, p) == nil {
				return fmt.Errorf("member %d may poll partition %d pending revocation", m.ID, p)
			}
		}
	}
	snap := g.AppendTo(nil)
	back, err := New(Config{RebalancingTimeout: time.Duration(g.timeout)}, nil)
	if err != nil {
		return err
	}
	if err := back.Decode(snap); err != nil {
		return fmt.Errorf("decode own snapshot: %w", err)
	}
	if again := back.AppendTo(nil); !slices.Equal(again, snap) {
		return fmt.Errorf("snapshot does not round-trip")
	}
	return nil
}
