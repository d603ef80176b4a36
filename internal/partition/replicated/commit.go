package replicated

import (
	"context"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// Partition writes in cluster mode (cluster-contract.md §3).
//
// SEND_MESSAGES, STORE_CONSUMER_OFFSET and DELETE_CONSUMER_OFFSET are
// accepted only by the leader of the partition's raft group; elsewhere
// they answer header status 58 (TransientNotAccepted), after waiting up to
// LeaderWait for a leader when none is known yet (a topic just created).
// The leader check comes before the duplicate window, so a follower never
// answers a write, not even a recognized duplicate. On the leader the
// write is checked (commit.Write.Check), checked against the duplicate
// window, proposed (bounded by proposeTimeout and the request's context)
// and answered from its apply on this node. Proposal errors are
// classified by replication.Transient: never admitted → 58; outcome
// unknown, or the same request still in flight in the log (an earlier
// copy not yet applied, e.g. uncommitted in a new leader's log) → 57; a
// copy that committed meanwhile → the duplicate window's answer.
// Polls and GET_CONSUMER_OFFSET are served from the leader's applied
// state, once the leader is Readable (the plane's routeRead waits for
// it). A poll's auto-commit is stored at once and proposed without
// waiting by the leader; on a follower it is stored locally and not
// replicated. An Async
// write (NoAck) answers once the leader's checks pass and is proposed in
// the background; those proposals are joined by Set.Close.

// LeaderWait bounds how long a write waits for its partition group's
// first leader before it is answered 58.
const LeaderWait = 3 * time.Second

// purgeRetry is the pause before a batch held back by a pending purge is
// proposed again.
const purgeRetry = 2 * time.Millisecond

var _ commit.Committer = (*Replica)(nil)

// Commit implements commit.Committer through the partition's raft group.
func (r *Replica) Commit(ctx context.Context, w commit.Write) commit.Outcome {
	s := r.set
	if r.halted.Load() {
		return commit.Outcome{Code: wire.ErrCannotAppendMessage.Code}
	}
	if w.Kind == commit.OffsetAdvance {
		return r.autoCommit(w)
	}
	if code := s.awaitLeader(ctx, r.group); code != 0 {
		return commit.Outcome{Code: code}
	}
	if !s.awaitQueued(ctx, r) {
		return commit.Outcome{Code: wire.ErrTransientNotAccepted.Code}
	}
	if w.Check != nil {
		if code := w.Check(); code != 0 {
			return commit.Outcome{Code: code}
		}
	}
	e := entryOf(&w)
	if w.Async {
		// A choice: NoAck answers at once (after the leader's checks) and
		// replicates in the background, so every replica still applies
		// the write at one log position.
		r.background(e, w.Applied)
		return commit.Outcome{}
	}
	if w.Windowed && !r.reqs.window.Begin(w.Key) {
		return commit.Outcome{Dup: true}
	}
	res := s.propose(ctx, r.group, &e)
	if w.Windowed {
		// Apply put a committed request into the window, here as on every
		// replica (a second Commit would take a second ring slot).
		r.reqs.window.End(w.Key, false)
	}
	if res.dup {
		return commit.Outcome{Dup: true}
	}
	if res.code == 0 && w.Applied != nil {
		w.Applied()
	}
	return commit.Outcome{Code: res.code, Base: res.base, Index: res.index, Term: res.term, Replica: uint8(s.r.Self())}
}

// autoCommit handles a poll's auto-commit: the leader stores it at once
// and proposes it without waiting; elsewhere it is stored locally (not
// replicated).
//
// The leader's own store comes first so that the poll's client reads its
// own commit: the next "next" poll or GET_CONSUMER_OFFSET, which every
// node serves on the leader, would otherwise race the background proposal
// and could deliver the same messages again. The reference's primary
// stores it locally too and replicates it without waiting. An advance
// never moves an offset back, so the replicated entry changes nothing more
// when it applies here; if the proposal is lost with the leadership, the
// new leader never had the commit (at-least-once, as before).
func (r *Replica) autoCommit(w commit.Write) commit.Outcome {
	s := r.set
	if !s.leads(r.group) {
		s.log.Debug("auto-commit on a partition this node does not lead: stored locally, not replicated", "dir", r.part.Dir)
		code, err := commit.ApplyOffset(r.part.Log.Offsets(), &w)
		if err != nil {
			s.log.Warn("auto-commit failed", "dir", r.part.Dir, "err", err)
		}
		if code == 0 && w.Applied != nil {
			w.Applied()
		}
		return commit.Outcome{Code: code}
	}
	if _, err := commit.ApplyOffset(r.part.Log.Offsets(), &w); err != nil {
		s.log.Warn("auto-commit failed", "dir", r.part.Dir, "err", err)
	}
	r.background(entryOf(&w), w.Applied)
	return commit.Outcome{}
}

// background proposes e on a goroutine Set.Close joins; applied runs after
// it applied here.
func (r *Replica) background(e entry, applied func()) {
	s := r.set
	s.mu.Lock()
	if s.ops.ctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bg.Done()
		res := s.propose(s.ops.ctx, r.group, &e)
		if res.code != 0 {
			s.log.Debug("replicated write without acknowledgement not applied", "dir", r.part.Dir, "code", res.code)
			return
		}
		if applied != nil {
			applied()
		}
	}()
}

// entryOf is the log entry of w (its record aliases w.Rec).
func entryOf(w *commit.Write) entry {
	e := entry{windowed: w.Windowed, key: w.Key}
	switch w.Kind {
	case commit.Send:
		e.kind, e.keyTag, e.count, e.rec = entrySend, w.KeyTag, w.Count, w.Rec
	case commit.OffsetStore:
		e.kind = entryOffsetStore
	case commit.OffsetAdvance:
		e.kind = entryOffsetAdvance
	case commit.OffsetDelete:
		e.kind = entryOffsetDelete
	}
	if w.Kind != commit.Send {
		e.consumer, e.id, e.offset = w.Consumer, w.ID, w.Offset
	}
	return e
}

// awaitLeader returns 0 if this node leads group g, else 58.
func (s *Set) awaitLeader(ctx context.Context, g replication.GroupID) uint32 {
	if l, ok := s.r.Leader(g); ok {
		if l == s.r.Self() {
			return 0
		}
		return wire.ErrTransientNotAccepted.Code
	}
	ctx, cancel := context.WithTimeout(ctx, LeaderWait)
	defer cancel()
	v, err := s.r.WaitFor(ctx, g, func(v replication.View) bool { return v.HasLeader })
	if err != nil || v.Leader != s.r.Self() {
		return wire.ErrTransientNotAccepted.Code
	}
	return 0
}

// propose proposes e to group g and waits for its apply on this node.
func (s *Set) propose(ctx context.Context, g replication.GroupID, e *entry) applyResult {
	nonce, ch := s.wait()
	e.origin, e.nonce = uint32(s.r.Self()), nonce
	buf := s.proposals.get(e.size())
	data := e.appendTo((*buf)[:0])
	ctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	_, err := s.r.Propose(ctx, g, data)
	for errors.Is(err, errPurgePending) && ctx.Err() == nil {
		// A purge ahead in the log has not applied yet (stampLog): the
		// batch is stamped once it has.
		time.Sleep(purgeRetry)
		_, err = s.r.Propose(ctx, g, data)
	}
	cancel()
	if proposalSettled(err) {
		*buf = data
		s.proposals.put(buf)
	}
	if err != nil {
		s.forget(nonce)
		if errors.Is(err, errDuplicate) {
			return applyResult{dup: true}
		}
		return applyResult{code: proposeCode(err)}
	}
	select {
	case r := <-ch:
		return r
	default:
		// Propose returns after the local apply, which delivers first;
		// an entry that applied without a result is not known to have
		// done anything.
		s.forget(nonce)
		return applyResult{code: wire.ErrTransientNotCommitted.Code}
	}
}

// proposalSettled reports whether a Propose that returned err is done
// with its data: raft copies a proposal when it appends it, and the
// host's loop has run the proposal unless the call gave up waiting after
// admission (replication.ErrOutcomeUnknown), in which case the loop may
// still read the data later. A stopping host and a caller's ended
// context are counted as unsettled too, which only costs a buffer.
func proposalSettled(err error) bool {
	return err == nil || !(errors.Is(err, replication.ErrOutcomeUnknown) || errors.Is(err, replication.ErrStopped) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// proposeCode maps a Propose error to the status answered: 57 or 58 as
// replication.Transient classifies it, CannotAppendMessage (4010) for
// anything else.
func proposeCode(err error) uint32 {
	if code, ok := replication.Transient(err); ok {
		return code
	}
	return wire.ErrCannotAppendMessage.Code
}

// Purge implements commit.Committer: the partition wants purge id, which
// the keeper of the group's leader proposes (purge.go).
func (r *Replica) Purge(id uint64) error {
	if id == 0 {
		r.set.log.Error("purge without an identity ignored", "stream", r.ref.StreamID, "topic", r.ref.TopicID)
		return nil
	}
	r.want(id)
	r.set.notify()
	r.set.kickKeeper()
	return nil
}

// WantPurge implements commit.Committer: the partition wants purge id
// (0: none); true when it has not applied here yet, as far as is known now
// (the group's start reads the purge record and kicks the keeper again).
func (r *Replica) WantPurge(id uint64) bool {
	if id == 0 {
		return false
	}
	r.want(id)
	if id <= r.purgeID.Load() {
		return false
	}
	r.set.kickKeeper()
	return true
}

// DeleteGroupOffsets implements commit.Committer: like a purge, the
// deletion applies at one log position on every replica, proposed by the
// keeper of the group's leader.
func (r *Replica) DeleteGroupOffsets(group uint32) error {
	r.set.wantDeletes(r, group)
	r.set.kickKeeper()
	return nil
}

// Retain implements commit.Committer: the segments retention removes go
// once the group's log is compacted past them (compact.go).
func (r *Replica) Retain(rt storage.Retention) (storage.Removed, error) {
	return r.set.removeOldest(r, r.part.Log.RetainCount(rt))
}

// DeleteSegments implements commit.Committer. The raft log is compacted
// first, a blocking call to the host, whose loop may be running this
// metadata effect: queued.
func (r *Replica) DeleteSegments(k int) error {
	r.set.ops.push(func(context.Context) {
		if _, err := r.set.removeOldest(r, k); err != nil {
			r.set.log.Warn("delete segments", "dir", r.part.Dir, "err", err)
		}
	})
	return nil
}
