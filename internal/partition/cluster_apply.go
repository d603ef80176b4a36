package partition

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// ApplyReplicated applies one committed entry of a partition group (the
// broker's StateMachine routes every group but replication.MetadataGroup
// here). It runs on the replication host's loop, on every node, in commit
// order, and is idempotent: a batch whose base offset is below the
// partition's next offset is already stored (a restart replays the log
// from its first index) and is skipped, but its request still enters the
// duplicate window; a batch beyond the next offset is a hole, logged as an
// error, and stops replicated writes to the partition (never stored out
// of order). The stamped bytes are stored unchanged (an encrypted
// partition's batches are sealed by the leader before it proposes them,
// so every replica stores the same ciphertext). e.Data is never modified.
func (p *Plane) ApplyReplicated(g replication.GroupID, e replication.Entry) {
	cl := p.cl
	if cl == nil {
		return
	}
	rep := cl.replicaOf(g)
	if rep == nil {
		p.log.Debug("entry for a partition group that is not open here", "group", uint64(g), "index", e.Index)
		return
	}
	if rep.stamp != nil {
		rep.stamp.applied(e.Index, e.Data)
	}
	if rep.seg != nil {
		rep.seg.applied(e.Index)
	}
	ent, err := decodeEntry(e.Data)
	if err != nil {
		p.log.Error("partition raft entry does not decode; skipped", "group", uint64(g), "index", e.Index, "err", err)
		return
	}
	if e.Index <= rep.purgedAt {
		// Before the last purge executed here: its effect is gone, but a
		// request it answered stays recognised as a duplicate.
		if ent.windowed {
			rep.part.commitWindow(ent.key)
		}
		return
	}
	part := rep.part
	var res applyResult
	switch {
	case part.log == nil || rep.halted.Load():
		res.code = wire.ErrCannotAppendMessage.Code
	case ent.kind == entrySend:
		res = p.applySend(rep, &ent, e.Index)
	case ent.kind == entryPurged:
		// A batch a later purge removed: nothing to do.
	case ent.kind == entryPurge:
		res = p.applyPurge(rep, e.Index, ent.purgeID)
	default:
		res = p.applyOffset(part, &ent)
		if ent.kind == entryOffsetDelete && ent.consumer == storage.KindGroup {
			p.deleted(rep, ent.id)
		}
	}
	if ent.windowed {
		if res.code == 0 {
			part.commitWindow(ent.key)
		} else {
			rep.missed.add(e.Index)
		}
	}
	res.index, res.term = e.Index, e.Term
	cl.deliver(&ent, res)
}

// applySend makes one committed batch visible. Its record is normally in
// the segment already (segLog.Append stored it, unrevealed); a batch that
// segLog kept whole (no segLog: tests with a bare log) is appended now.
// A batch ending at or below the revealed end applied before (a restart
// replays the log).
func (p *Plane) applySend(rep *replica, e *entry, index uint64) applyResult {
	part := rep.part
	_, revealed := part.log.Bounds()
	next, _ := part.log.Tail()
	end := e.base + uint64(e.count)
	switch {
	case end <= revealed:
		return applyResult{base: e.base} // applied before a restart
	case e.base != revealed:
		rep.halted.Store(true)
		p.log.Error("partition stopped: a replicated batch does not continue its log",
			"dir", part.dir, "group", uint64(rep.group), "index", index, "base_offset", e.base, "next_offset", revealed)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	case e.stored || end <= next:
		if next < end {
			rep.halted.Store(true)
			p.log.Error("partition stopped: a committed batch is missing from the segment",
				"dir", part.dir, "group", uint64(rep.group), "index", index, "base_offset", e.base, "stored_to", next)
			return applyResult{code: wire.ErrCannotAppendMessage.Code}
		}
	default:
		if _, err := part.log.AppendStamped(e.rec, e.count, e.base, e.ts); err != nil {
			part.traffic.in(err, e.count, len(e.rec))
			p.log.Warn("replicated append failed", "dir", part.dir, "index", index, "err", err)
			if errors.Is(err, storage.ErrRecordTooLarge) || errors.Is(err, storage.ErrEmptyRecord) {
				return applyResult{code: wire.ErrInvalidCommand.Code}
			}
			return applyResult{code: wire.ErrCannotAppendMessage.Code}
		}
	}
	part.log.Reveal(end)
	part.traffic.in(nil, e.count, int(e.recLen))
	return applyResult{base: e.base}
}

// applyOffset applies a consumer-offset store, advance (auto-commit) or
// delete with the partition's offset storage.
func (p *Plane) applyOffset(part *partition, e *entry) applyResult {
	offs := part.log.Offsets()
	var err error
	switch e.kind {
	case entryOffsetStore:
		err = offs.Store(e.consumer, e.id, e.offset)
	case entryOffsetAdvance:
		_, err = offs.Advance(e.consumer, e.id, e.offset)
	case entryOffsetDelete:
		var ok bool
		ok, err = offs.Delete(e.consumer, e.id)
		if err == nil && !ok {
			return applyResult{code: wire.ErrConsumerOffsetNotFound.Code}
		}
	}
	if err != nil {
		p.log.Warn("replicated consumer offset write failed", "dir", part.dir, "err", err)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	}
	return applyResult{}
}
