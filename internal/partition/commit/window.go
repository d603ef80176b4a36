package commit

import (
	"sync"

	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// Key identifies one request in a partition's duplicate window: the
// client, its request number and a hash of the request body.
type Key struct {
	Client  wire.Uint128
	Request uint64
	Hash    uint64
}

// Window is a partition's duplicate window (session.PartitionWindow) with
// the requests of this node in flight: Begin serialises a window check with
// the End that follows it for the same key, so a retry that arrives while
// the original is still committing waits for its outcome. It is safe for
// concurrent use.
type Window struct {
	mu       sync.Mutex
	cond     sync.Cond
	w        *session.PartitionWindow
	inflight map[Key]struct{}
	waiters  int
}

// NewWindow returns an empty window tracking at most clients clients
// (session.DefaultPartitionWindowClients if 0).
func NewWindow(clients int) *Window {
	w := &Window{w: session.NewPartitionWindow(clients), inflight: map[Key]struct{}{}}
	w.cond.L = &w.mu
	return w
}

// Begin consults the window for k. It returns false for a recognized
// duplicate (answer an empty success); true means commit and call End
// afterwards. A retry of a request still in flight waits for it.
func (w *Window) Begin(k Key) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if _, busy := w.inflight[k]; !busy {
			break
		}
		w.waiters++
		w.cond.Wait()
		w.waiters--
	}
	if w.w.Check(k.Client, k.Request, k.Hash) != session.PartitionNew {
		return false
	}
	w.inflight[k] = struct{}{}
	return true
}

// End records the outcome of a request begun with Begin: with committed
// the request enters the window.
func (w *Window) End(k Key, committed bool) {
	w.mu.Lock()
	if committed {
		w.w.Commit(k.Client, k.Request, k.Hash)
	}
	delete(w.inflight, k)
	if w.waiters > 0 {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

// Committed reports whether k is a committed request of the window.
func (w *Window) Committed(k Key) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Check(k.Client, k.Request, k.Hash) != session.PartitionNew
}

// Commit puts a committed request into the window.
func (w *Window) Commit(k Key) {
	w.mu.Lock()
	w.w.Commit(k.Client, k.Request, k.Hash)
	w.mu.Unlock()
}

// Restore makes the window cs (a snapshot's).
func (w *Window) Restore(cs []session.ClientWindow) {
	w.mu.Lock()
	w.w.Restore(cs)
	w.mu.Unlock()
}

// Export returns the window of at most clients clients, the most recently
// committed ones, for a snapshot.
func (w *Window) Export(clients int) []session.ClientWindow {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Export(clients)
}
