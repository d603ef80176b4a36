package client

import (
	"context"
	"sync"
)

// budget is a byte semaphore: the producer's bound on buffered memory.
// Waiters are served in arrival order so a large message is not starved
// by small ones.
type budget struct {
	mu      sync.Mutex
	limit   int
	used    int            // guarded by mu
	waiters []budgetWaiter // guarded by mu, FIFO
}

type budgetWaiter struct {
	n     int
	ready chan struct{}
}

func newBudget(limit int) *budget { return &budget{limit: limit} }

// tryAcquire takes n bytes when they are free and nobody waits.
func (b *budget) tryAcquire(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.used += n
		return true
	}
	return false
}

// acquire takes n bytes (n <= limit), waiting until they are free or ctx
// or stop ends.
func (b *budget) acquire(ctx context.Context, stop <-chan struct{}, n int) error {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.limit {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-stop:
		err = ErrProducerClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.waiters {
		if x.ready == w.ready {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			b.grantLocked()
			return err
		}
	}
	// Granted while giving up: hand the bytes back.
	b.used -= n
	b.grantLocked()
	return err
}

// release returns n bytes.
func (b *budget) release(n int) {
	b.mu.Lock()
	b.used -= n
	b.grantLocked()
	b.mu.Unlock()
}

// grantLocked wakes waiters in order while their bytes fit. Caller must
// hold b.mu.
func (b *budget) grantLocked() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.limit {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// inUse reports the bytes taken.
func (b *budget) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
