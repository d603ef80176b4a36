package replicated

import (
	"context"
	"fmt"

	"github.com/iggo-dev/iggo/internal/catalog"
)

// Waiting for wanted purges and offset deletions to apply (cluster mode):
// the reply of PURGE_TOPIC and DELETE_CONSUMER_GROUP (catalog.Awaiter)
// and the writes that follow them on this node.

// pending reports whether rep still wants a purge or an offset deletion.
func (cl *Set) pending(rep *Replica) bool {
	return rep.wantPurge.Load() > rep.purgeID.Load() || rep.deletes.Load() > 0
}

// notify wakes the waiters of awaitSettled (a purge or an offset deletion
// applied, or something new is wanted).
func (cl *Set) notify() {
	cl.settleMu.Lock()
	close(cl.settled)
	cl.settled = make(chan struct{})
	cl.settleMu.Unlock()
}

// awaitSettled waits until done holds (checked after each notify) or ctx
// ends.
func (cl *Set) awaitSettled(ctx context.Context, done func() bool) error {
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

// Await returns once none of the given partitions of t replicated here
// wants a purge or an offset deletion (catalog.Awaiter, through the
// plane), or ctx ends.
func (s *Set) Await(ctx context.Context, t catalog.TopicRef, ids []uint32) error {
	var reps []*Replica
	for _, id := range ids {
		if rep := s.replicaOf(GroupID(t, id)); rep != nil {
			reps = append(reps, rep)
		}
	}
	err := s.awaitSettled(ctx, func() bool {
		for _, rep := range reps {
			if s.replicaOf(rep.group) == rep && s.pending(rep) {
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

// awaitQueued waits (up to proposeTimeout) until the purge and offset
// deletions wanted for rep (metadata commands applied here) have applied
// here; false when they have not. A send that follows a purge's reply
// therefore lands after the purge, never before it.
func (s *Set) awaitQueued(ctx context.Context, rep *Replica) bool {
	if !s.pending(rep) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	defer cancel()
	return s.awaitSettled(ctx, func() bool { return !s.pending(rep) }) == nil
}
