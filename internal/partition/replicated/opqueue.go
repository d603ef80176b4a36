package replicated

import (
	"context"
	"sync"
)

// opQueue runs group lifecycle operations (AddGroup, RemoveGroup,
// compactions, segment removals) one at a time, in the order they were
// queued, on a goroutine of its own: they block on the replication
// host's loop, and the catalog.Data calls that queue them may run on that
// loop. The worker exists only while there is work.
type opQueue struct {
	mu      sync.Mutex
	pending []func(context.Context) // guarded by mu
	running bool                    // a worker goroutine runs; guarded by mu
	closed  bool                    // guarded by mu
	idle    *sync.Cond              // signalled when the worker exits

	ctx    context.Context
	cancel context.CancelFunc
}

func (q *opQueue) init() {
	q.idle = sync.NewCond(&q.mu)
	q.ctx, q.cancel = context.WithCancel(context.Background())
}

// push queues fn; it never blocks. After close it is dropped.
func (q *opQueue) push(fn func(context.Context)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.pending = append(q.pending, fn)
	if !q.running {
		q.running = true
		go q.work()
	}
}

func (q *opQueue) work() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 || q.closed {
			q.pending = nil
			q.running = false
			q.idle.Broadcast()
			q.mu.Unlock()
			return
		}
		fn := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		q.mu.Unlock()
		fn(q.ctx)
	}
}

// drain waits until everything queued so far has run (tests, shutdown).
func (q *opQueue) drain() {
	q.mu.Lock()
	for q.running {
		q.idle.Wait()
	}
	q.mu.Unlock()
}

// close cancels the running operation, drops the rest and waits for the
// worker to exit.
func (q *opQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cancel()
	q.drain()
}
