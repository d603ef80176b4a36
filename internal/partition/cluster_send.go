package partition

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// Partition writes in cluster mode (cluster-contract.md §3).
//
// SEND_MESSAGES, STORE_CONSUMER_OFFSET and DELETE_CONSUMER_OFFSET are
// accepted only by the leader of the partition's raft group; elsewhere
// they answer header status 58 (TransientNotAccepted), after waiting up to
// leaderWait for a leader when none is known yet (a topic just created).
// The leader check comes before the duplicate window, so a follower never
// answers a write, not even a recognized duplicate. On the leader the
// request is validated as in single-node mode, checked against the
// duplicate window, proposed (bounded by proposeTimeout) and answered
// from its apply on this node, exactly as the single-node path answers.
// Proposal errors: never admitted (not the leader, dropped, lost to a
// leader change, host stopped, timed out before admission, the group's
// log still replaying after a restart) → 58; outcome unknown (timed out
// after admission) or the same request still in flight in the log (an
// earlier copy not yet applied, e.g. uncommitted in a new leader's log) →
// 57 (TransientNotCommitted); a copy that committed meanwhile → the
// duplicate window's answer.
// Polls and GET_CONSUMER_OFFSET are served from the local applied state on
// every node. A poll's auto-commit is proposed fire-and-forget by the
// leader (the poll does not wait); on a follower it is stored locally and
// not replicated.

// leaderWait bounds the wait for a partition group's first leader.
const leaderWait = 3 * time.Second

// purgeRetry is the pause before a batch held back by a pending purge is
// proposed again.
const purgeRetry = 2 * time.Millisecond

// awaitLeader returns 0 if this node leads group g, else 58.
func (cl *cluster) awaitLeader(g replication.GroupID) uint32 {
	if l, ok := cl.r.Leader(g); ok {
		if l == cl.r.Self() {
			return 0
		}
		return wire.ErrTransientNotAccepted.Code
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaderWait)
	defer cancel()
	v, err := cl.r.WaitFor(ctx, g, func(v replication.View) bool { return v.HasLeader })
	if err != nil || v.Leader != cl.r.Self() {
		return wire.ErrTransientNotAccepted.Code
	}
	return 0
}

// propose proposes e to group g and waits for its apply on this node.
func (cl *cluster) propose(g replication.GroupID, e *entry) applyResult {
	nonce, ch := cl.wait()
	e.origin, e.nonce = uint32(cl.r.Self()), nonce
	buf := cl.proposals.get(e.size())
	data := e.appendTo((*buf)[:0])
	ctx, cancel := context.WithTimeout(context.Background(), proposeTimeout)
	_, err := cl.r.Propose(ctx, g, data)
	for errors.Is(err, errPurgePending) && ctx.Err() == nil {
		// A purge ahead in the log has not applied yet (stampLog): the
		// batch is stamped once it has.
		time.Sleep(purgeRetry)
		_, err = cl.r.Propose(ctx, g, data)
	}
	cancel()
	if proposalSettled(err) {
		*buf = data
		cl.proposals.put(buf)
	}
	if err != nil {
		cl.forget(nonce)
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
		cl.forget(nonce)
		return applyResult{code: wire.ErrTransientNotCommitted.Code}
	}
}

// proposalSettled reports whether a Propose that returned err is done
// with its data: raft copies a proposal when it appends it, and the
// host's loop has run the proposal unless the call gave up waiting
// (outcome unknown, the caller's deadline, the host stopping), in which
// case the loop may still read the data later.
func proposalSettled(err error) bool {
	return err == nil || !(errors.Is(err, replication.ErrOutcomeUnknown) || errors.Is(err, replication.ErrStopped) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// proposeCode maps a Propose error to the status answered.
func proposeCode(err error) uint32 {
	switch {
	case errors.Is(err, replication.ErrOutcomeUnknown), errors.Is(err, errInFlight):
		return wire.ErrTransientNotCommitted.Code
	case errors.Is(err, errReplaying), errors.Is(err, errPurgePending):
		return wire.ErrTransientNotAccepted.Code
	case errors.Is(err, replication.ErrNotLeader), errors.Is(err, replication.ErrProposalDropped),
		errors.Is(err, replication.ErrProposalLost), errors.Is(err, replication.ErrUnknownGroup),
		errors.Is(err, replication.ErrGroupRemoved), errors.Is(err, replication.ErrStopped),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return wire.ErrTransientNotAccepted.Code
	}
	return wire.ErrCannotAppendMessage.Code
}

// fitsRecord reports whether a batch of len n with count messages can be
// stored once sealed (if encrypted): every replica would refuse it alike,
// after the leader already advanced the stamping tail past it.
func (p *Plane) fitsRecord(part *partition, n int, count uint32) bool {
	size := int64(n)
	if part.crypt != nil {
		size += 2 * int64(count) * encryption.Overhead
	}
	return size <= p.opts.MaxFrameBytes
}

// sendCluster replicates an admitted SEND_MESSAGES (send has validated
// it; key is its duplicate-window key).
func (p *Plane) sendCluster(x *dispatch.Exchange, streamID, topicID, pid uint32, g replication.GroupID, part *partition, rec []byte, count uint32, key windowKey) {
	cl := p.cl
	rep := cl.replicaOf(g)
	switch {
	case rep == nil:
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	case rep.halted.Load():
		x.Deny(wire.ErrCannotAppendMessage.Code)
		return
	}
	if code := cl.awaitLeader(g); code != 0 {
		x.Deny(code)
		return
	}
	if !p.awaitQueued(rep) {
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	if !p.fitsRecord(part, len(rec), count) {
		x.Deny(wire.ErrInvalidCommand.Code)
		return
	}
	if !part.begin(key) {
		x.Reply(binary.LittleEndian.AppendUint32(x.Scratch(), 0))
		return
	}
	if c := part.crypt; c != nil {
		// Sealed before proposing: every replica stores the leader's
		// ciphertext (the cluster's nodes share the key).
		buf := c.cipher.GetBuffer()
		defer c.cipher.PutBuffer(buf)
		sealed, err := c.cipher.EncryptBatch((*buf)[:0], rec)
		*buf = sealed
		if err != nil {
			part.end(key, false)
			if errors.Is(err, encryption.ErrLayout) {
				x.Deny(wire.ErrInvalidCommand.Code)
			} else {
				p.log.Warn("encrypt batch", "dir", part.dir, "err", err)
				x.Deny(wire.ErrCannotAppendMessage.Code)
			}
			return
		}
		rec = sealed
	}
	var tag uint8
	if part.crypt != nil {
		tag = part.crypt.tag
	}
	res := cl.propose(g, &entry{kind: entrySend, windowed: true, key: key, keyTag: tag, count: count, rec: rec})
	// Apply put a committed request into the window, here as on every
	// replica (a second Commit would take a second ring slot).
	part.end(key, false)
	switch {
	case res.code != 0:
		x.Deny(res.code)
		return
	case res.dup:
		x.Reply(binary.LittleEndian.AppendUint32(x.Scratch(), 0))
		return
	}
	out := x.Scratch()
	out = binary.LittleEndian.AppendUint32(out, 1)
	out = binary.LittleEndian.AppendUint32(out, streamID)
	out = binary.LittleEndian.AppendUint32(out, topicID)
	out = binary.LittleEndian.AppendUint32(out, pid)
	out = binary.LittleEndian.AppendUint64(out, res.base)
	x.Reply(out)
	p.markCommitted(x, res)
}

// markCommitted puts the committed entry's cluster id, view (raft term),
// replica and op (raft index) into the reply header.
func (p *Plane) markCommitted(x *dispatch.Exchange, res applyResult) {
	x.MarkCommitted(p.opts.ClusterID, uint32(res.term), uint8(p.cl.r.Self()), res.index)
}

// offsetCluster replicates a STORE/DELETE_CONSUMER_OFFSET (e carries the
// kind, consumer and offset). check, when set, runs the leader's local
// validation first (its status is answered). With ack = NoAck the write
// bypasses the duplicate window, as in single-node mode.
func (p *Plane) offsetCluster(x *dispatch.Exchange, t target, ack wire.OffsetAck, e entry, check func() uint32) {
	cl := p.cl
	part := t.part
	g := GroupID(t.ref, part.id)
	rep := cl.replicaOf(g)
	if rep == nil {
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	if code := cl.awaitLeader(g); code != 0 {
		x.Deny(code)
		return
	}
	if !p.awaitQueued(rep) {
		x.Deny(wire.ErrTransientNotAccepted.Code)
		return
	}
	if check != nil {
		if code := check(); code != 0 {
			p.answerWrite(x, code)
			return
		}
	}
	if ack == wire.AckNone {
		// A choice: NoAck answers at once (after the leader's local
		// checks) and replicates in the background, so every replica
		// still applies the write at one log position.
		go func() {
			if res := cl.propose(g, &e); res.code == 0 && e.kind == entryOffsetStore && t.kind == storage.KindGroup {
				p.catalog().GroupCommitted(t.ref, t.id, t.client, part.id, e.offset)
			}
		}()
		p.answerWrite(x, 0)
		return
	}
	_, client, _ := userOf(x)
	e.windowed = true
	e.key = windowKey{client: client, request: x.Header.Request, hash: xxh3.Hash(x.Body)}
	if !part.begin(e.key) {
		x.Reply(wire.AppendResultOK(x.Scratch()))
		return
	}
	res := cl.propose(g, &e)
	part.end(e.key, false) // apply committed it (see sendCluster)
	if res.dup {
		x.Reply(wire.AppendResultOK(x.Scratch()))
		return
	}
	if res.code == 0 && e.kind == entryOffsetStore && t.kind == storage.KindGroup {
		p.catalog().GroupCommitted(t.ref, t.id, t.client, part.id, e.offset)
	}
	p.answerWrite(x, res.code)
	if res.code == 0 {
		p.markCommitted(x, res)
	}
}

// autoCommitCluster handles a poll's auto-commit in cluster mode: the
// leader proposes it without waiting (true); elsewhere it returns false
// and the caller stores it locally (not replicated).
func (p *Plane) autoCommitCluster(t target, last uint64) bool {
	cl := p.cl
	part := t.part
	g := GroupID(t.ref, part.id)
	if !cl.leads(g) {
		p.log.Debug("auto-commit on a partition this node does not lead: stored locally, not replicated", "dir", part.dir)
		return false
	}
	go func() {
		res := cl.propose(g, &entry{kind: entryOffsetAdvance, consumer: t.kind, id: t.id, offset: last})
		if res.code != 0 {
			p.log.Debug("replicated auto-commit not applied", "dir", part.dir, "code", res.code)
			return
		}
		if t.kind == storage.KindGroup && part.log != nil {
			stored, _ := part.log.Offsets().Get(t.kind, t.id)
			p.catalog().GroupCommitted(t.ref, t.id, t.client, part.id, stored)
		}
	}()
	return true
}
