package replicated

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// Apply implements replication.GroupMachine: it applies one committed
// entry of the partition's group. It runs on the replication host's loop, on every node, in commit
// order, and is idempotent: a batch whose base offset is below the
// partition's next offset is already stored (a restart replays the log
// from its first index) and is skipped, but its request still enters the
// duplicate window; a batch beyond the next offset is a hole, logged as an
// error, and stops replicated writes to the partition (never stored out
// of order). The stamped bytes are stored unchanged (an encrypted
// partition's batches are sealed by the leader before it proposes them,
// so every replica stores the same ciphertext). e.Data is never modified.
func (rep *Replica) Apply(e replication.Entry) {
	s := rep.set
	g := rep.group
	if stamp := rep.stamp.Load(); stamp != nil {
		stamp.applied(e.Index, e.Data)
	}
	if seg := rep.seg.Load(); seg != nil {
		seg.applied(e.Index)
	}
	ent, err := decodeEntry(e.Data)
	if err != nil {
		if key, ok := windowKeyOf(e.Data); ok {
			rep.reqs.leave(e.Index, key)
		}
		s.log.Error("partition raft entry does not decode; skipped", "group", uint64(g), "index", e.Index, "err", err)
		return
	}
	if e.Index <= rep.purgedAt {
		// Before the last purge executed here: its effect is gone, but a
		// request it answered stays recognised as a duplicate.
		if ent.windowed {
			rep.reqs.applied(e.Index, ent.key, true)
		}
		return
	}
	part := rep.part
	var res applyResult
	switch {
	case part.Log == nil || rep.halted.Load():
		res.code = wire.ErrCannotAppendMessage.Code
	case ent.kind == entrySend:
		res = s.applySend(rep, &ent, e.Index)
	case ent.kind == entryPurged:
		// A batch a later purge removed: nothing to do.
	case ent.kind == entryPurge:
		res = s.applyPurge(rep, e.Index, ent.purgeID)
	case ent.kind == entryTier:
		if part.Local == nil {
			break
		}
		if err := part.Local.ApplyTier(ent.tier); err != nil {
			s.log.Warn("remote tier record not applied", "group", uint64(g), "index", e.Index, "err", err)
			res.code = wire.ErrCannotAppendMessage.Code
		}
	default:
		res = s.applyOffset(part, &ent)
		if ent.kind == entryOffsetDelete && ent.consumer == storage.KindGroup {
			s.deleted(rep, ent.id)
		}
	}
	if ent.windowed {
		rep.reqs.applied(e.Index, ent.key, res.code == 0)
	}
	res.index, res.term = e.Index, e.Term
	s.deliver(&ent, res)
}

// applySend makes one committed batch visible. Its record is normally in
// the segment already (segLog.Append stored it, unrevealed); a batch that
// segLog kept whole (no segLog: tests with a bare log) is appended now.
// A batch ending at or below the revealed end applied before (a restart
// replays the log).
func (s *Set) applySend(rep *Replica, e *entry, index uint64) applyResult {
	part := rep.part
	_, revealed := part.Log.Bounds()
	next, _ := part.Log.Tail()
	end := e.base + uint64(e.count)
	switch {
	case end <= revealed:
		return applyResult{base: e.base} // applied before a restart
	case e.base != revealed:
		rep.halted.Store(true)
		s.log.Error("partition stopped: a replicated batch does not continue its log",
			"dir", part.Dir, "group", uint64(rep.group), "index", index, "base_offset", e.base, "next_offset", revealed)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	case e.stored || end <= next:
		if next < end {
			rep.halted.Store(true)
			s.log.Error("partition stopped: a committed batch is missing from the segment",
				"dir", part.Dir, "group", uint64(rep.group), "index", index, "base_offset", e.base, "stored_to", next)
			return applyResult{code: wire.ErrCannotAppendMessage.Code}
		}
	default:
		if _, err := part.Log.AppendStamped(e.rec, e.count, e.base, e.ts); err != nil {
			part.Local.Counted(err, e.count, len(e.rec))
			s.log.Warn("replicated append failed", "dir", part.Dir, "index", index, "err", err)
			if errors.Is(err, storage.ErrRecordTooLarge) || errors.Is(err, storage.ErrEmptyRecord) {
				return applyResult{code: wire.ErrInvalidCommand.Code}
			}
			return applyResult{code: wire.ErrCannotAppendMessage.Code}
		}
	}
	part.Log.Reveal(end)
	part.Local.Counted(nil, e.count, int(e.recLen))
	return applyResult{base: e.base}
}

// applyOffset applies a consumer-offset store, advance (auto-commit) or
// delete with the partition's offset storage (commit.ApplyOffset, the
// rule the local path applies too).
func (s *Set) applyOffset(part *Partition, e *entry) applyResult {
	w := commit.Write{Consumer: e.consumer, ID: e.id, Offset: e.offset}
	switch e.kind {
	case entryOffsetStore:
		w.Kind = commit.OffsetStore
	case entryOffsetAdvance:
		w.Kind = commit.OffsetAdvance
	case entryOffsetDelete:
		w.Kind = commit.OffsetDelete
	}
	code, err := commit.ApplyOffset(part.Log.Offsets(), &w)
	if err != nil {
		s.log.Warn("replicated consumer offset write failed", "dir", part.Dir, "err", err)
	}
	return applyResult{code: code}
}
