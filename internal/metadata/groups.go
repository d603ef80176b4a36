package metadata

import (
	"context"
	"encoding/binary"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/groups"
	"github.com/iggo-dev/iggo/wire"
)

// Consumer groups at run time (semantics.md §6).
//
// Membership, ownership, pending revocations and the generation are
// replicated state: JOIN, LEAVE, Logout, DropMembers, partition changes and
// KindCompleteRevocations entries change them, and apply reads nothing
// else. The in-flight marks of the cooperative hand-off (what each owner
// polled and committed) are local to this node: polls are reads and never
// reach the journal, and an auto-commit or a group offset store is a
// partition-plane write. Apply never reads a mark:
//
//   - a JOIN is applied with groups.Group.JoinPending, which makes every
//     partition the cooperative rebalance moves a pending revocation;
//   - right after it, under the same writer lock and before the JOIN is
//     answered, the revocations whose owner has nothing in flight (per
//     the live marks) are completed by a KindCompleteRevocations entry,
//     so a partition without in-flight data still moves at once as §6.3
//     says, only one entry later;
//   - a commit that settles a revocation (GroupCommitted) and the
//     rebalancing timeout (RunRevocations) complete revocations the same
//     way, each with an entry that names the (group, partition) pairs.
//
// The journal therefore replays to the same assignments and generations,
// and a snapshot is consistent with the entries after it. The marks are
// written into snapshots with the group (the groups codec carries them)
// but only as a hint: apply ignores them, and start-up drops every
// membership (KindDropMembers), which clears them.
//
// Locks: the marks are written by recorders that hold Store.mu for
// reading plus Store.groupMu, and by apply under Store.mu for writing.
// Anything that reads them (Settled, the snapshot encoder) holds one of
// the two combinations. Ownership is written only by apply, so readers
// that look at ownership alone (SYNC, GET group, GroupPartition) need only
// Store.mu for reading.

// revItem names one pending revocation to complete.
type revItem struct {
	stream, topic, group, partition uint32
}

// revItemLen is the encoded size of a revItem.
const revItemLen = 16

// maxRevItems bounds the items of one completion entry (a body is at most
// one frame).
const maxRevItems = (wire.MaxFrameSize - 4) / revItemLen

// appendRevItems encodes a KindCompleteRevocations body: count u32, then
// (stream, topic, group, partition) u32 each.
func appendRevItems(dst []byte, items []revItem) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, uint32(len(items)))
	for _, it := range items {
		dst = le.AppendUint32(dst, it.stream)
		dst = le.AppendUint32(dst, it.topic)
		dst = le.AppendUint32(dst, it.group)
		dst = le.AppendUint32(dst, it.partition)
	}
	return dst
}

// decodeRevItems decodes a KindCompleteRevocations body; a malformed body
// yields nothing (the record checksum makes it unreachable).
func decodeRevItems(b []byte) []revItem {
	if len(b) < 4 {
		return nil
	}
	le := binary.LittleEndian
	n := le.Uint32(b)
	b = b[4:]
	if uint64(n)*revItemLen != uint64(len(b)) {
		return nil
	}
	out := make([]revItem, n)
	for i := range out {
		out[i] = revItem{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:])}
		b = b[revItemLen:]
	}
	return out
}

// applyCompleteRevocations completes the named revocations that are still
// pending; a group, topic or revocation that is gone is skipped.
func (s *state) applyCompleteRevocations(e *Entry) {
	for _, it := range decodeRevItems(e.Body) {
		st := s.streams[it.stream]
		if st == nil {
			continue
		}
		t := st.Topics[it.topic]
		if t == nil {
			continue
		}
		if g := t.Groups[it.group]; g != nil {
			g.G.CompleteRevocation(groups.PartitionID(it.partition))
		}
	}
}

// liveGroup returns the group of the topic incarnation t, nil when either
// is gone. Caller holds s.mu.
func (s *Store) liveGroup(t catalog.TopicRef, group uint32) *group {
	tp := s.liveTopic(t)
	if tp == nil {
		return nil
	}
	return tp.Groups[group]
}

// GroupPartition implements catalog.Topics.
func (s *Store) GroupPartition(t catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, access catalog.GroupAccess) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.liveGroup(t, group)
	if g == nil {
		return wire.ErrConsumerGroupIDNotFound
	}
	cid, pid := groups.ClientID(client), groups.PartitionID(partition)
	if access == catalog.GroupCommit {
		return g.G.CanCommit(cid, pid)
	}
	return g.G.CanPoll(cid, pid)
}

// GroupPolled implements catalog.Topics: it records the in-flight mark
// under the same read lock that keeps apply (and so every ownership
// change) out, so a poll is either recorded before a rebalance (which
// then sees it in flight) or refused after it.
func (s *Store) GroupPolled(t catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, last uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.liveGroup(t, group)
	if g == nil {
		return wire.ErrConsumerGroupIDNotFound
	}
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	return g.G.RecordPoll(groups.ClientID(client), groups.PartitionID(partition), last)
}

// GroupCommitted implements catalog.Topics: it records the commit mark
// and, when that settles a pending revocation, commits the completion
// before returning.
func (s *Store) GroupCommitted(t catalog.TopicRef, group uint32, client wire.Uint128, partition uint32, offset uint64) {
	s.mu.RLock()
	ready := false
	if g := s.liveGroup(t, group); g != nil {
		s.groupMu.Lock()
		ready, _ = g.G.NoteCommit(groups.ClientID(client), groups.PartitionID(partition), offset)
		s.groupMu.Unlock()
	}
	s.mu.RUnlock()
	if ready {
		s.CompleteRevocations()
	}
}

// CompleteRevocations commits the completion of every pending revocation
// that is due now (settled by its owner's commits, or older than the
// rebalancing timeout) and reports how many it completed. RunRevocations
// calls it at each deadline; tests call it directly.
func (s *Store) CompleteRevocations() int {
	n, err := s.completeRevocations()
	if err != nil {
		s.log.Warn("complete consumer-group revocations", "err", err)
	}
	return n
}

func (s *Store) completeRevocations() (int, error) {
	if s.replicated() {
		return s.completeDueReplicated()
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.completeDueLocked()
}

// completeDueLocked commits one KindCompleteRevocations entry naming every
// pending revocation that is due, in (stream, topic, group) order and
// revocation creation order within a group. Caller holds wmu.
func (s *Store) completeDueLocked() (int, error) {
	items := s.dueRevocations()
	if len(items) == 0 {
		return 0, nil
	}
	if _, err := s.submitLocked(Entry{Kind: KindCompleteRevocations, Body: appendRevItems(nil, items)}); err != nil {
		return 0, err
	}
	return len(items), nil
}

// dueRevocations lists the pending revocations that are due now, in
// (stream, topic, group) order and revocation creation order within a
// group.
func (s *Store) dueRevocations() []revItem {
	// Entry timestamps have microsecond resolution; deciding on the same
	// resolution keeps the decision and the entry consistent.
	now := time.UnixMicro(s.cfg.Now().UnixMicro())
	var items []revItem
	s.mu.RLock()
	s.groupMu.Lock()
	s.st.eachGroup(func(st *stream, t *topic, g *group) {
		revs := g.G.Revocations()
		if len(revs) == 0 {
			return
		}
		settled := g.G.Settled()
		for _, r := range revs {
			if len(items) < maxRevItems && (slices.Contains(settled, r.Partition) || !now.Before(r.Since.Add(s.cfg.RebalancingTimeout))) {
				items = append(items, revItem{st.ID, t.ID, g.ID, uint32(r.Partition)})
			}
		}
	})
	s.groupMu.Unlock()
	s.mu.RUnlock()
	return items
}

// nextRevocationDeadline returns when the oldest pending revocation times
// out, and false when none is pending.
func (s *Store) nextRevocationDeadline() (time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var first time.Time
	found := false
	s.st.eachGroup(func(_ *stream, _ *topic, g *group) {
		for _, r := range g.G.Revocations() {
			if !found || r.Since.Before(first) {
				first, found = r.Since, true
			}
		}
	})
	return first.Add(s.cfg.RebalancingTimeout), found
}

// wakeRevocations tells RunRevocations that a revocation may have been
// created (its next deadline may be earlier).
func (s *Store) wakeRevocations() {
	select {
	case s.revWake <- struct{}{}:
	default:
	}
}

// RunRevocations completes pending revocations once the rebalancing
// timeout has passed (semantics.md §6.3 step 4) until ctx ends. It waits
// on Config.After for the earliest deadline (Config.Now's clock) and is
// woken whenever a join leaves revocations pending. The broker owns it.
func (s *Store) RunRevocations(ctx context.Context) {
	for {
		var fire <-chan time.Time
		if d, ok := s.nextRevocationDeadline(); ok {
			fire = s.cfg.After(d.Sub(s.cfg.Now()))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.revWake:
		case <-fire:
			if _, err := s.completeRevocations(); err != nil {
				// Closed, or the journal failed (every later write
				// fails too): stop rather than spin on the deadline.
				if err != ErrClosed {
					s.log.Error("consumer-group revocation timer stopped", "err", err)
				}
				return
			}
		}
	}
}
