package replicated

import (
	"context"
	"fmt"

	"github.com/iggo-dev/iggo/internal/storage"
)

// The remote tier of a replicated partition (internal/tier, Cluster):
// the leader uploads sealed segments and publishes each upload as an
// entryTier record, which every replica applies (Local.ApplyTier); local
// copies go through the same compaction as retention (compact.go).

// tierSnapshot is the remote tier's state for a snapshot (nil without
// one, or in tests of a bare partition).
func (rep *Replica) tierSnapshot() []byte {
	if rep.part.Local == nil {
		return nil
	}
	return rep.part.Local.TierSnapshot()
}

// Leads reports whether this node leads the partition's group now.
func (r *Replica) Leads() bool {
	l, ok := r.set.r.Leader(r.group)
	return ok && l == r.set.r.Self()
}

// PublishTier proposes a remote tier record and waits for its apply here.
func (r *Replica) PublishTier(ctx context.Context, record []byte) error {
	if len(record) == 0 || len(record) > maxTierRecord {
		return fmt.Errorf("tier record of %d bytes", len(record))
	}
	e := entry{kind: entryTier, tier: record}
	if res := r.set.propose(ctx, r.group, &e); res.code != 0 {
		return fmt.Errorf("group %d: tier record not committed (status %d)", uint64(r.group), res.code)
	}
	return nil
}

// DropOldest removes the k oldest sealed segments, the first offset kept
// being keep, once the group's log is compacted past them; nothing when
// the local log changed since the caller looked. It blocks on the
// replication host: never call it from the host's loop.
func (r *Replica) DropOldest(k int, keep uint64) (storage.Removed, error) {
	if got, at := r.part.Log.OldestSegmentsEnd(k); got != k || at != keep {
		return storage.Removed{}, nil
	}
	return r.set.removeOldest(r, k)
}
