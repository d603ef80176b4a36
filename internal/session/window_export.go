package session

import (
	"slices"

	"github.com/iggo-dev/iggo/wire"
)

// CommittedRequest is one remembered request of a client's window.
type CommittedRequest struct {
	Request  uint64
	BodyHash uint64
}

// ClientWindow is one client's part of a PartitionWindow, as Export
// returns it and Restore reads it (a partition snapshot carries them).
type ClientWindow struct {
	Client    wire.Uint128
	Watermark uint64
	// Committed are the remembered requests, oldest first, at most
	// PartitionWindowSize of them.
	Committed []CommittedRequest
}

// Export returns the windows of the limit most recently committed
// clients (all of them when limit <= 0), least recently committed first.
// A window restored from it answers every Check as this one does for
// those clients, and evicts them in the same order.
func (w *PartitionWindow) Export(limit int) []ClientWindow {
	w.mu.Lock()
	defer w.mu.Unlock()
	type used struct {
		client wire.Uint128
		cw     *clientWindow
	}
	all := make([]used, 0, len(w.clients))
	for c, cw := range w.clients {
		all = append(all, used{c, cw})
	}
	slices.SortFunc(all, func(a, b used) int {
		switch {
		case a.cw.lastUse < b.cw.lastUse:
			return -1
		case a.cw.lastUse > b.cw.lastUse:
			return 1
		}
		return 0
	})
	if limit > 0 && len(all) > limit {
		all = all[len(all)-limit:]
	}
	out := make([]ClientWindow, len(all))
	for i, u := range all {
		cw := u.cw
		ids := make([]CommittedRequest, 0, cw.n)
		start := 0
		if cw.n == PartitionWindowSize {
			start = cw.next // the oldest is overwritten next
		}
		for k := range cw.n {
			c := cw.ring[(start+k)%PartitionWindowSize]
			ids = append(ids, CommittedRequest{Request: c.request, BodyHash: c.bodyHash})
		}
		out[i] = ClientWindow{Client: u.client, Watermark: cw.watermark, Committed: ids}
	}
	return out
}

// Restore replaces the window's content with cs, least recently
// committed client first (Export's order). Past the window's client
// bound the least recent clients of cs are left out, and of a client's
// requests only the last PartitionWindowSize are kept. A client listed
// twice keeps its last listing.
func (w *PartitionWindow) Restore(cs []ClientWindow) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(cs) > w.maxClients {
		cs = cs[len(cs)-w.maxClients:]
	}
	w.clients = make(map[wire.Uint128]*clientWindow, len(cs))
	w.clock = 0
	for _, c := range cs {
		ids := c.Committed
		if len(ids) > PartitionWindowSize {
			ids = ids[len(ids)-PartitionWindowSize:]
		}
		w.clock++
		cw := &clientWindow{watermark: c.Watermark, n: len(ids), next: len(ids) % PartitionWindowSize, lastUse: w.clock}
		for k, id := range ids {
			cw.ring[k] = committedID{request: id.Request, bodyHash: id.BodyHash}
		}
		w.clients[c.Client] = cw
	}
}
