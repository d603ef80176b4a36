package session

import (
	"sync"

	"github.com/iggo-dev/iggo/wire"
)

// Partition-plane duplicate window (upstream-framing.md, "Request
// numbering"; protocol/README.md, "Where the upstream framing page wins",
// point 3).
const (
	// PartitionWindowSize is the number of committed request ids a
	// partition remembers per client.
	PartitionWindowSize = 128
	// DefaultPartitionWindowClients bounds the clients one partition
	// tracks; past it the least recently committed client loses its
	// window (capacity eviction loses coverage, as the spec allows).
	DefaultPartitionWindowClients = 1024
)

// PartitionVerdict is the duplicate window's answer for a partition-plane
// request.
type PartitionVerdict uint8

// Partition verdicts.
const (
	// PartitionNew: execute the request, then Commit it.
	PartitionNew PartitionVerdict = iota + 1
	// PartitionDuplicate: the same (client, request) with the same body was
	// committed; do not execute, answer an empty success (no offsets).
	PartitionDuplicate
	// PartitionBelowWindow: an unseen request 128 or more ids below the
	// client's watermark is treated as already committed; empty success.
	PartitionBelowWindow
)

type committedID struct {
	request  uint64
	bodyHash uint64
}

type clientWindow struct {
	watermark uint64
	ring      [PartitionWindowSize]committedID
	n         int    // valid entries
	next      int    // ring write position
	lastUse   uint64 // partition-local commit counter, for capacity eviction
}

// PartitionWindow is one partition's duplicate window: per client a request
// watermark and the last PartitionWindowSize committed (request, body hash)
// pairs. A request counts as a duplicate only when the same request number
// arrives with the same body hash as a committed one: older SDKs send
// partition operations with a counter they do not advance, so the same
// number with a different body is a new request and must execute.
//
// The caller supplies the body hash (for SendMessages, a hash of the batch
// content as received, before server stamping) and calls Check and Commit
// under the partition's append lock, so that a Check and the Commit that
// follows it are not interleaved with another request of the same client.
// Consumer-offset writes with ack = 0 bypass the window (caller's choice).
type PartitionWindow struct {
	mu         sync.Mutex
	maxClients int
	clock      uint64                         // guarded by mu
	clients    map[wire.Uint128]*clientWindow // guarded by mu
}

// NewPartitionWindow returns a window tracking at most maxClients clients
// (DefaultPartitionWindowClients when maxClients <= 0).
func NewPartitionWindow(maxClients int) *PartitionWindow {
	if maxClients <= 0 {
		maxClients = DefaultPartitionWindowClients
	}
	return &PartitionWindow{maxClients: maxClients, clients: map[wire.Uint128]*clientWindow{}}
}

// Check classifies a request without recording it.
func (w *PartitionWindow) Check(client wire.Uint128, request, bodyHash uint64) PartitionVerdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	cw, ok := w.clients[client]
	if !ok {
		return PartitionNew
	}
	for i := range cw.n {
		if c := cw.ring[i]; c.request == request && c.bodyHash == bodyHash {
			return PartitionDuplicate
		}
	}
	if cw.watermark >= PartitionWindowSize && request <= cw.watermark-PartitionWindowSize {
		return PartitionBelowWindow
	}
	return PartitionNew
}

// Commit records a committed request.
func (w *PartitionWindow) Commit(client wire.Uint128, request, bodyHash uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clock++
	cw, ok := w.clients[client]
	if !ok {
		if len(w.clients) >= w.maxClients {
			var victim wire.Uint128
			oldest := ^uint64(0)
			for c, v := range w.clients {
				if v.lastUse < oldest {
					victim, oldest = c, v.lastUse
				}
			}
			delete(w.clients, victim)
		}
		cw = &clientWindow{}
		w.clients[client] = cw
	}
	cw.lastUse = w.clock
	cw.ring[cw.next] = committedID{request: request, bodyHash: bodyHash}
	cw.next = (cw.next + 1) % PartitionWindowSize
	if cw.n < PartitionWindowSize {
		cw.n++
	}
	cw.watermark = max(cw.watermark, request)
}

// Forget drops a client's window (a new client identity loses coverage).
func (w *PartitionWindow) Forget(client wire.Uint128) {
	w.mu.Lock()
	delete(w.clients, client)
	w.mu.Unlock()
}

// Clients is the number of clients tracked.
func (w *PartitionWindow) Clients() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.clients)
}
