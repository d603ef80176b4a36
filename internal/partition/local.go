package partition

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// localCommitter commits a single node's writes: straight to the
// partition's storage, under its duplicate window. It is the owner of
// duplicate detection in single-node mode.
type localCommitter struct {
	p    *Plane
	part *partition
}

var _ commit.Committer = (*localCommitter)(nil)

// Commit implements commit.Committer. An Async write is applied at once
// (there is nothing to wait for); a windowed one goes through the
// duplicate window.
func (c *localCommitter) Commit(_ context.Context, w commit.Write) commit.Outcome {
	if w.Check != nil {
		if code := w.Check(); code != 0 {
			return commit.Outcome{Code: code}
		}
	}
	if w.Windowed && !c.part.window.Begin(w.Key) {
		return commit.Outcome{Dup: true}
	}
	var out commit.Outcome
	if w.Kind == commit.Send {
		out = c.send(&w)
	} else {
		code, err := commit.ApplyOffset(c.part.log.Offsets(), &w)
		c.p.offsetWritten(c.part, err)
		out.Code = code
	}
	if w.Windowed {
		c.part.window.End(w.Key, out.Code == 0)
	}
	if out.Code == 0 && w.Applied != nil {
		w.Applied()
	}
	return out
}

// send appends one sealed batch.
func (c *localCommitter) send(w *commit.Write) commit.Outcome {
	part := c.part
	res, err := part.log.Append(w.Rec, w.Count)
	part.traffic.in(err, w.Count, len(w.Rec))
	if err != nil {
		if !diskRefused(err) {
			c.p.log.Warn("append failed", "dir", part.dir, "err", err)
		}
		if errors.Is(err, storage.ErrRecordTooLarge) || errors.Is(err, storage.ErrEmptyRecord) {
			return commit.Outcome{Code: wire.ErrInvalidCommand.Code}
		}
		return commit.Outcome{Code: wire.ErrCannotAppendMessage.Code}
	}
	return commit.Outcome{Base: res.BaseOffset}
}

// Purge implements commit.Committer: at once.
func (c *localCommitter) Purge(uint64) error {
	if err := c.p.purgePartition(c.part, 0); err != nil {
		return fmt.Errorf("purge partition %d: %w", c.part.id, err)
	}
	return nil
}

// WantPurge implements commit.Committer: a local purge applied when it
// was asked for.
func (c *localCommitter) WantPurge(uint64) bool { return false }

// DeleteGroupOffsets implements commit.Committer: at once.
func (c *localCommitter) DeleteGroupOffsets(group uint32) error {
	_, err := c.part.log.Offsets().Delete(storage.KindGroup, group)
	return err
}

// Retain implements commit.Committer.
func (c *localCommitter) Retain(r storage.Retention) (storage.Removed, error) {
	return c.part.log.Retain(r)
}

// DeleteSegments implements commit.Committer.
func (c *localCommitter) DeleteSegments(k int) error {
	_, err := c.part.log.DeleteOldestSegments(k)
	return err
}

// purgePartition is the one purge of a partition's data, local or applied
// from its raft log: the encryption marker is reset first (resetCrypt),
// then every message and consumer offset goes.
//
// epoch is the remote tier's epoch after the purge: the purge entry's
// index in cluster mode, 0 (the next one) on a single node.
func (p *Plane) purgePartition(part *partition, epoch uint64) error {
	if err := p.resetCrypt(part); err != nil {
		return err
	}
	return part.purge(epoch)
}

// partLocal is what a replica needs of its partition's plane-side state
// (replicated.Local).
type partLocal struct {
	p    *Plane
	part *partition
}

// Sealing implements replicated.Local.
func (l partLocal) Sealing() (uint8, uint64) {
	if c := l.part.crypt; c != nil {
		return c.tag, c.plainBefore.Load()
	}
	return 0, ^uint64(0)
}

// VerifySealed implements replicated.Local.
func (l partLocal) VerifySealed(rec []byte) error {
	if c := l.part.crypt; c != nil {
		return c.cipher.VerifyBatch(rec)
	}
	return nil
}

// Purge implements replicated.Local.
func (l partLocal) Purge(index uint64) error { return l.p.purgePartition(l.part, index) }

// Counted implements replicated.Local.
func (l partLocal) Counted(err error, msgs uint32, bytes int) { l.part.traffic.in(err, msgs, bytes) }

// ApplyTier implements replicated.Local: a record of the remote tier
// (tiered.go); without a remote tier here it is ignored.
func (l partLocal) ApplyTier(record []byte) error {
	if t := l.part.tier; t != nil {
		return t.ApplyRecord(record)
	}
	return nil
}

// TierSnapshot implements replicated.Local.
func (l partLocal) TierSnapshot() []byte {
	if t := l.part.tier; t != nil {
		return t.Snapshot()
	}
	return nil
}

// RestoreTier implements replicated.Local.
func (l partLocal) RestoreTier(state []byte) error {
	if t := l.part.tier; t != nil {
		return t.Restore(state)
	}
	return nil
}
