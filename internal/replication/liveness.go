package replication

import (
	"context"
	"fmt"
	"time"
)

// Peer is what this host knows of another node's liveness.
type Peer struct {
	// Alive is false once the peer was silent for an election timeout.
	Alive bool
	// Silent is how long ago the last envelope from the peer arrived
	// (rounded to ticks).
	Silent time.Duration
}

// Peers returns the liveness of every peer this host has heard of or was
// configured with, as the loop sees it now. It waits for the loop.
func (h *Host) Peers(ctx context.Context) (map[NodeID]Peer, error) {
	c := make(chan map[NodeID]Peer, 1)
	if err := h.do(ctx, func() {
		out := make(map[NodeID]Peer, len(h.peers))
		for id, ps := range h.peers {
			out[id] = Peer{Alive: ps.alive, Silent: time.Duration(h.ticks-ps.lastHeard) * h.cfg.Timing.Tick}
		}
		c <- out
	}); err != nil {
		return nil, fmt.Errorf("peer liveness: %w", err)
	}
	select {
	case out := <-c:
		return out, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("peer liveness: %w", ctx.Err())
	}
}
