package groups

import "slices"

// fullRebalance implements the full rebalance of §6.3: clear every member's
// partitions and the pending revocations, then give partition i (ascending
// id) to member i % M (ascending id). It increments the generation. Marks of
// a partition that changes owner are reset.
func (g *Group) fullRebalance() {
	g.generation++
	g.revs = g.revs[:0]
	for i := range g.members {
		g.members[i].partitions = g.members[i].partitions[:0]
	}
	n := len(g.members)
	for i := range g.parts {
		p := &g.parts[i]
		p.revoking = false
		if n == 0 {
			p.owned, p.owner, p.marks = false, 0, marks{}
			continue
		}
		m := &g.members[i%n]
		if !p.owned || p.owner != m.id {
			p.marks = marks{}
		}
		p.owned, p.owner = true, m.id
		m.partitions = append(m.partitions, p.id)
	}
}

// cooperativeRebalance implements steps 1–3 of the cooperative rebalance of
// §6.3 after a join (the new member is already in g.members). now stamps the
// revocations it creates; inFlight says whether a moving partition has
// in-flight data. The caller has incremented the generation.
func (g *Group) cooperativeRebalance(now int64, inFlight func(*partition) bool) {
	g.assignUnassigned()

	n := len(g.members)
	fair, rem := len(g.parts)/n, len(g.parts)%n
	eventual := g.eventualLists()

	// Idle members are taken before any excess is removed, so a member that
	// gives partitions away is never handed partitions by the same join
	// (UNKNOWN, see the package doc).
	var idle []MemberID
	for i := range g.members {
		if len(eventual[i]) == 0 {
			idle = append(idle, g.members[i].id)
		}
	}

	// Step 2: keep fair (+1 while rem lasts, consumed only by members holding
	// more than fair; UNKNOWN), collect the tail of each list as excess.
	var excess []PartitionID
	for i := range eventual {
		keep := fair
		if len(eventual[i]) > fair && rem > 0 {
			keep++
			rem--
		}
		if len(eventual[i]) > keep {
			excess = append(excess, eventual[i][keep:]...)
		}
	}
	if len(idle) == 0 {
		// Only reachable if the join added no idle member, which the
		// invariants exclude (the new member owns nothing and is no target
		// unless step 1 gave it partitions, in which case it is the only
		// member holding any). Excess then stays where it is.
		return
	}

	// Step 3: excess round-robin to idle members.
	for j, pid := range excess {
		target := idle[j%len(idle)]
		pi := g.mustPartIndex(pid)
		p := &g.parts[pi]
		switch {
		case p.revoking:
			// The partition was still pending towards the member whose
			// excess it is: re-target the revocation, keeping its start.
			ri := g.revocationIndex(pid)
			if target == p.owner || !inFlight(p) {
				// Handing it back to its owner cancels the revocation
				// (only a decoded snapshot can make a source idle: the
				// operations always leave a source at least fair >= 1
				// partitions). With Join a revocation is always in
				// flight (a catching-up commit completes it); one
				// that is not moves at once. JoinPending re-targets
				// it instead and its caller completes it.
				g.revs = slices.Delete(g.revs, ri, ri+1)
				p.revoking = false
				if target != p.owner {
					g.move(pi, target)
				}
				continue
			}
			g.revs[ri].target = target
		case inFlight(p):
			p.revoking = true
			g.revs = append(g.revs, revocation{partition: pid, source: p.owner, target: target, since: now})
		default:
			g.move(pi, target)
		}
	}
}

// assignUnassigned is step 1 of the cooperative rebalance: partitions nobody
// owns go round-robin (ascending partition id) to members that own nothing and
// are not a revocation target.
func (g *Group) assignUnassigned() {
	var idle []int
	for i := range g.members {
		if len(g.members[i].partitions) == 0 && !g.isTarget(g.members[i].id) {
			idle = append(idle, i)
		}
	}
	if len(idle) == 0 {
		return
	}
	j := 0
	for i := range g.parts {
		p := &g.parts[i]
		if p.owned {
			continue
		}
		m := &g.members[idle[j%len(idle)]]
		j++
		p.owned, p.owner, p.marks = true, m.id, marks{}
		m.partitions = append(m.partitions, p.id)
	}
}

// eventualLists returns, per member (same index as g.members), what it will
// hold once every pending revocation completed: its owned partitions that are
// not pending revocation (list order), then the partitions pending towards it
// (revocation creation order).
func (g *Group) eventualLists() [][]PartitionID {
	out := make([][]PartitionID, len(g.members))
	for i := range g.members {
		m := &g.members[i]
		l := make([]PartitionID, 0, len(m.partitions))
		for _, pid := range m.partitions {
			if !g.parts[g.mustPartIndex(pid)].revoking {
				l = append(l, pid)
			}
		}
		out[i] = l
	}
	for _, r := range g.revs {
		i := g.memberIndex(r.target)
		out[i] = append(out[i], r.partition)
	}
	return out
}

// isTarget reports whether a pending revocation targets member id.
func (g *Group) isTarget(id MemberID) bool {
	for _, r := range g.revs {
		if r.target == id {
			return true
		}
	}
	return false
}

// revocationIndex returns the position of the revocation of partition pid;
// it must exist.
func (g *Group) revocationIndex(pid PartitionID) int {
	for i, r := range g.revs {
		if r.partition == pid {
			return i
		}
	}
	panic("groups: revocation index out of sync")
}

// move hands partition g.parts[pi] from its owner to member target at once
// and resets its marks. The caller has removed any revocation of it.
func (g *Group) move(pi int, target MemberID) {
	p := &g.parts[pi]
	src := &g.members[g.memberIndex(p.owner)]
	k := slices.Index(src.partitions, p.id)
	if k < 0 {
		panic("groups: owner list out of sync")
	}
	src.partitions = slices.Delete(src.partitions, k, k+1)
	dst := &g.members[g.memberIndex(target)]
	dst.partitions = append(dst.partitions, p.id)
	p.owner, p.revoking, p.marks = target, false, marks{}
}

// completeRevocation completes the pending revocation at g.revs[ri]: the
// partition moves to its target and the generation grows by one (§6.3 step 4).
func (g *Group) completeRevocation(ri int) {
	r := g.revs[ri]
	g.revs = slices.Delete(g.revs, ri, ri+1)
	g.move(g.mustPartIndex(r.partition), r.target)
	g.generation++
}
