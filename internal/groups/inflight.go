package groups

import (
	"math"
	"time"
)

// ownedBy returns the index of partition pid if member client owns it.
// It returns ErrMemberNotFound for a non-member and ErrPartitionNotOwned for a
// partition the member does not own (or that does not exist).
func (g *Group) ownedBy(client ClientID, pid PartitionID) (int, error) {
	id, ok := g.byClient[client]
	if !ok {
		return 0, ErrMemberNotFound
	}
	pi, ok := g.partIndex(pid)
	if !ok || !g.parts[pi].owned || g.parts[pi].owner != id {
		return 0, ErrPartitionNotOwned
	}
	return pi, nil
}

// CanPoll reports whether client may poll partition pid as a group member
// (§4.2): it must be a member (else ErrMemberNotFound), own the partition and
// the partition must not be pending revocation (else ErrPartitionNotOwned).
// Either error means the poll answers the empty reply with the RESYNC
// partition id so the SDK re-syncs.
func (g *Group) CanPoll(client ClientID, pid PartitionID) error {
	pi, err := g.ownedBy(client, pid)
	if err != nil {
		return err
	}
	if g.parts[pi].revoking {
		return ErrPartitionNotOwned
	}
	return nil
}

// CanCommit reports whether client may store the group offset of partition
// pid (§5): it must be a member (else ErrMemberNotFound) and own the
// partition, pending revocation or not (else ErrPartitionNotOwned).
func (g *Group) CanCommit(client ClientID, pid PartitionID) error {
	_, err := g.ownedBy(client, pid)
	return err
}

// RecordPoll records that client's poll of partition pid returned messages up
// to offset (the offset of the last returned message). It fails like CanPoll;
// a failed call changes nothing.
func (g *Group) RecordPoll(client ClientID, pid PartitionID, offset uint64) error {
	if err := g.CanPoll(client, pid); err != nil {
		return err
	}
	m := &g.parts[g.mustPartIndex(pid)].marks
	if !m.hasPolled || offset > m.polled {
		m.polled, m.hasPolled = offset, true
	}
	return nil
}

// RecordCommit records that client stored offset as the group offset of
// partition pid (explicitly or by auto-commit). If the partition is pending
// revocation and the owner has now committed up to what it polled, the
// revocation completes: the partition moves to its target and the generation
// grows by one (§6.3 step 4). It fails like CanCommit; a failed call changes
// nothing.
func (g *Group) RecordCommit(client ClientID, pid PartitionID, offset uint64) error {
	pi, err := g.ownedBy(client, pid)
	if err != nil {
		return err
	}
	p := &g.parts[pi]
	p.committed, p.hasCommitted = offset, true
	if p.revoking && !p.inFlight() {
		g.completeRevocation(g.revocationIndex(pid))
	}
	return nil
}

// ExpireRevocations completes, in creation order, every pending revocation
// whose start lies at least the rebalancing timeout before now (§6.3 step 4),
// and returns how many completed (the generation grew by as much).
func (g *Group) ExpireRevocations(now time.Time) int {
	t := now.UnixNano()
	done := 0
	for i := 0; i < len(g.revs); {
		if g.expired(g.revs[i].since, t) {
			g.completeRevocation(i)
			done++
			continue
		}
		i++
	}
	return done
}

// NextDeadline returns the earliest time at which ExpireRevocations would
// complete a pending revocation, and false if none is pending.
func (g *Group) NextDeadline() (time.Time, bool) {
	if len(g.revs) == 0 {
		return time.Time{}, false
	}
	first := g.revs[0].since
	for _, r := range g.revs[1:] {
		if r.since < first {
			first = r.since
		}
	}
	if first > math.MaxInt64-g.timeout {
		return time.Unix(0, math.MaxInt64), true
	}
	return time.Unix(0, first+g.timeout), true
}

// expired reports now - since >= timeout without overflowing (since comes
// from the log or a snapshot and may be any int64).
func (g *Group) expired(since, now int64) bool {
	return now >= since && uint64(now)-uint64(since) >= uint64(g.timeout)
}

// The methods below serve a caller that replicates the group through a log
// while the in-flight marks stay local to the node serving the partitions
// (the metadata plane, see the package doc): apply runs only JoinPending,
// Leave, RemoveClient, DropMembers, SetPartitions and CompleteRevocation,
// none of which reads a mark, and the live side decides with NoteCommit,
// Settled and Revocations when to log a completion.

// NoteCommit records, like RecordCommit, that client stored offset as the
// group offset of partition pid, but never completes a revocation itself:
// ready reports that pid is pending revocation and its owner has now
// committed everything it polled, so the caller should complete it
// (CompleteRevocation, through its log). It fails like CanCommit; a failed
// call changes nothing.
func (g *Group) NoteCommit(client ClientID, pid PartitionID, offset uint64) (ready bool, err error) {
	pi, err := g.ownedBy(client, pid)
	if err != nil {
		return false, err
	}
	p := &g.parts[pi]
	p.committed, p.hasCommitted = offset, true
	return p.revoking && !p.inFlight(), nil
}

// Settled returns the partitions pending revocation whose owner has no
// in-flight data (nothing polled, or everything polled committed), in
// revocation creation order: the ones a caller of JoinPending or NoteCommit
// completes at once.
func (g *Group) Settled() []PartitionID {
	var out []PartitionID
	for _, r := range g.revs {
		if !g.parts[g.mustPartIndex(r.partition)].inFlight() {
			out = append(out, r.partition)
		}
	}
	return out
}

// CompleteRevocation completes the pending revocation of partition pid,
// whatever its marks and start time: the partition moves to the
// revocation's target and the generation grows by one (§6.3 step 4). It
// reports false, changing nothing, when pid is not pending revocation (a
// log entry may name a revocation that a rebalance has since removed).
func (g *Group) CompleteRevocation(pid PartitionID) bool {
	pi, ok := g.partIndex(pid)
	if !ok || !g.parts[pi].revoking {
		return false
	}
	g.completeRevocation(g.revocationIndex(pid))
	return true
}
