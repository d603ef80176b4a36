package partition

import (
	"context"
	"fmt"

	"github.com/iggo-dev/iggo/internal/catalog"
)

// Waiting for wanted purges and offset deletions to apply (cluster mode):
// the reply of PURGE_TOPIC and DELETE_CONSUMER_GROUP (catalog.Awaiter)
// and the writes that follow them on this node.

// The plane answers the metadata plane's wait for its effects.
var _ catalog.Awaiter = (*Plane)(nil)

// pending reports whether rep still wants a purge or an offset deletion.
func (cl *cluster) pending(rep *replica) bool {
	return rep.wantPurge.Load() > rep.purgeID.Load() || rep.deletes.Load() > 0
}

// notify wakes the waiters of awaitSettled (a purge or an offset deletion
// applied, or something new is wanted).
func (cl *cluster) notify() {
	cl.settleMu.Lock()
	close(cl.settled)
	cl.settled = make(chan struct{})
	cl.settleMu.Unlock()
}

// awaitSettled waits until done holds (checked after each notify) or ctx
// ends.
func (cl *cluster) awaitSettled(ctx context.Context, done func() bool) error {
	for {
		cl.settleMu.Lock()
		ch := cl.settled
		cl.settleMu.Unlock()
		if done() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// AwaitPartitions implements catalog.Awaiter: it returns once no
// partition of t replicated here wants a purge or an offset deletion (at
// once in single-node mode, where they apply before PurgeTopic and
// DeleteGroupOffsets return).
func (p *Plane) AwaitPartitions(ctx context.Context, t catalog.TopicRef) error {
	cl := p.cl
	if cl == nil {
		return nil
	}
	var reps []*replica
	for _, part := range p.topicParts(t) {
		if rep := cl.replicaOf(GroupID(t, part.id)); rep != nil {
			reps = append(reps, rep)
		}
	}
	err := cl.awaitSettled(ctx, func() bool {
		for _, rep := range reps {
			if cl.replicaOf(rep.group) == rep && cl.pending(rep) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("partitions of topic %d/%d: %w", t.StreamID, t.TopicID, err)
	}
	return nil
}
