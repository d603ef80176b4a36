package replication

import (
	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// takeData handles the envelopes of envs that carry data (calls, replies,
// leadership announcements) and returns the others, for the loop. It runs
// on a transport reader and does not block.
func (h *Host) takeData(from NodeID, envs []transport.Envelope) []transport.Envelope {
	return splitData(envs, func(e transport.Envelope) {
		switch e.Kind {
		case transport.KindCall:
			h.calls.serve(from, e)
		case transport.KindReply:
			h.calls.reply(from, e)
		case transport.KindDirectory:
			h.receiveAnnouncement(from, e.Data)
		}
	})
}

// dataUnreachable handles the envelopes of envs that carry data and were
// not sent (a call fails at once; a lost announcement makes the next one
// to that peer a full table) and returns the others.
func (h *Host) dataUnreachable(to NodeID, envs []transport.Envelope) []transport.Envelope {
	return splitData(envs, func(e transport.Envelope) {
		switch e.Kind {
		case transport.KindCall:
			h.calls.complete(e.Group, nil, callResult{err: errUnreachable(e, to)})
		case transport.KindDirectory:
			h.dir.markResync(to)
		}
	})
}

// splitData passes each envelope of envs that carries data to handle and
// returns the others (envs itself when none carries data).
func splitData(envs []transport.Envelope, handle func(transport.Envelope)) []transport.Envelope {
	n := 0
	for _, e := range envs {
		if e.Kind.CarriesData() {
			n++
		}
	}
	if n == 0 {
		return envs
	}
	rest := make([]transport.Envelope, 0, len(envs)-n)
	for _, e := range envs {
		if e.Kind.CarriesData() {
			handle(e)
		} else {
			rest = append(rest, e)
		}
	}
	return rest
}

// Disconnected implements transport.ConnHandler: the calls waiting for a
// reply from peer fail with ErrCallLost, and the peer gets the full
// leadership table with the next announcement.
func (h *Host) Disconnected(peer NodeID) {
	h.calls.failPeer(peer, ErrCallLost)
	h.dir.markResync(peer)
}
