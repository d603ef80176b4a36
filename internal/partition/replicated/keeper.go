package replicated

import (
	"context"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
)

// The keeper proposes what the metadata wants of the partition groups and
// has not applied yet: a purge (replica.wantPurge above purgeID) and the
// deletion of deleted groups' offsets (replica.wantDelete). Every node
// records what is wanted when the metadata entry applies there; the
// keeper of the node that leads a partition group proposes it, so the
// entry is proposed whichever node leads, now or after a leadership
// change or a restart. A proposal that fails is retried; the keeper
// re-checks every wanted group at least every keeperMaxRetry (this is how
// it notices that this node became the leader), and sooner when kicked.
//
// One goroutine per plane, and only while something is wanted: it exits
// when nothing is, so an idle node runs nothing for it.

const (
	// keeperMinRetry and keeperMaxRetry bound the pause between two
	// rounds of the keeper (doubling from the first to the second while
	// nothing new is wanted).
	keeperMinRetry = 50 * time.Millisecond
	keeperMaxRetry = 2 * time.Second
	// keeperWarnEvery: a failing proposal is logged at WARN on its first
	// failure and then once per this many rounds.
	keeperWarnEvery = 10
)

// kickKeeper starts the keeper, or wakes it when it runs.
func (s *Set) kickKeeper() {
	k := &s.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	if k.running {
		select {
		case k.wake <- struct{}{}:
		default:
		}
		return
	}
	k.running = true
	k.wg.Add(1)
	go s.runKeeper()
}

// stopKeeper stops kicks and waits for the keeper to exit (the plane's
// context, which ends its proposals, is cancelled first).
func (s *Set) stopKeeper() {
	k := &s.keep
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	k.wg.Wait()
}

// keep is the keeper goroutine.
func (s *Set) runKeeper() {
	k := &s.keep
	defer k.wg.Done()
	ctx := s.ops.ctx
	pause := keeperMinRetry
	for round := 0; ; round++ {
		wanted := s.wantedReplicas()
		k.mu.Lock()
		if len(wanted) == 0 || ctx.Err() != nil {
			select {
			case <-k.wake:
				k.mu.Unlock()
				continue // kicked after the scan: look again
			default:
			}
			k.running = false
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
		for _, rep := range wanted {
			s.proposeWanted(ctx, rep, round)
		}
		select {
		case <-ctx.Done():
		case <-k.wake:
			pause = keeperMinRetry
		case <-time.After(pause):
			pause = min(2*pause, keeperMaxRetry)
		}
	}
}

// wantedReplicas returns the replicas that still want something.
func (s *Set) wantedReplicas() []*Replica {
	cl := s
	cl.mu.Lock()
	reps := make([]*Replica, 0, len(cl.groups))
	for _, rep := range cl.groups {
		reps = append(reps, rep)
	}
	cl.mu.Unlock()
	out := reps[:0]
	for _, rep := range reps {
		if cl.pending(rep) {
			out = append(out, rep)
		}
	}
	return out
}

// proposeWanted proposes what rep wants when this node leads its group.
func (s *Set) proposeWanted(ctx context.Context, rep *Replica, round int) {
	cl := s
	if !cl.leads(rep.group) {
		return // the leader's keeper proposes it
	}
	self := uint32(cl.r.Self())
	if want := rep.wantPurge.Load(); want > rep.purgeID.Load() {
		e := entry{kind: entryPurge, origin: self, purgeID: want}
		s.proposeKept(ctx, rep, "purge", &e, round)
	}
	cl.mu.Lock()
	groups := make([]uint32, 0, len(rep.wantDelete))
	for g := range rep.wantDelete {
		groups = append(groups, g)
	}
	cl.mu.Unlock()
	for _, g := range groups {
		e := entry{kind: entryOffsetDelete, origin: self, consumer: storage.KindGroup, id: g}
		s.proposeKept(ctx, rep, "delete group offsets", &e, round)
	}
}

// proposeKept proposes e to rep's group, logging a failure (it is retried
// in a later round).
func (s *Set) proposeKept(ctx context.Context, rep *Replica, what string, e *entry, round int) {
	pctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	defer cancel()
	_, err := s.r.Propose(pctx, rep.group, e.encode())
	switch {
	case err == nil, errors.Is(err, ErrPurgeKnown), ctx.Err() != nil:
		return
	case errors.Is(err, errReplaying), errors.Is(err, replication.ErrUnknownGroup):
		s.log.Debug(what+": partition group not ready; retried", "group", uint64(rep.group), "err", err)
		return
	}
	if round%keeperWarnEvery == 0 {
		s.log.Warn(what+": proposal to the partition group failed; retried while this node leads it",
			"dir", rep.part.Dir, "group", uint64(rep.group), "round", round, "err", err)
	}
}
