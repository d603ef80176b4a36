package replication

import (
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Messages for a group this host has not created yet.
//
// The nodes of a cluster create a group when they apply the metadata
// entry that creates it (a topic's partitions), each at its own moment;
// the first campaign of a fresh group (replica 0 campaigns at once) often
// reaches peers that have not applied that entry yet. Dropped, it would
// cost one election timeout, during which the new partition has no leader
// and its first writes wait. So a host keeps the raft messages for an
// unknown group for a short while (earlyTTL) and steps them, in arrival
// order, when the group is added. The buffer is bounded in groups,
// messages per group and bytes; what does not fit, or expires, is dropped
// as before (raft retries).
const (
	earlyTTLTicks       = 20 // ticks a message waits for its group
	earlyMaxGroups      = 1024
	earlyMaxPerGroup    = 64
	earlyMaxBytes       = 8 << 20
	earlyMaxMessageSize = 1 << 20
)

// earlyMsg is one held message (a copy: the decoded batch it came in is
// not kept alive by it).
type earlyMsg struct {
	from NodeID
	env  transport.Envelope
	size int
	at   uint64 // tick it arrived
}

// earlyBox holds the messages of one unknown group.
type earlyBox struct {
	msgs []earlyMsg
}

// holdEarly keeps env (for a group not created here) if the bounds allow.
func (h *Host) holdEarly(from NodeID, env transport.Envelope) {
	if env.Kind != transport.KindRaft || env.Msg.GetType() == raftpb.MsgProp {
		return
	}
	size := proto.Size(env.Msg)
	if size > earlyMaxMessageSize || h.earlyBytes+size > earlyMaxBytes {
		return
	}
	id := GroupID(env.Group)
	box := h.early[id]
	if box == nil {
		if len(h.early) >= earlyMaxGroups {
			return
		}
		if h.early == nil {
			h.early = map[GroupID]*earlyBox{}
		}
		box = &earlyBox{}
		h.early[id] = box
	}
	if len(box.msgs) >= earlyMaxPerGroup {
		return
	}
	env.Msg = proto.CloneOf(env.Msg)
	box.msgs = append(box.msgs, earlyMsg{from: from, env: env, size: size, at: h.ticks})
	h.earlyBytes += size
}

// releaseEarly steps the messages held for a group just added.
func (h *Host) releaseEarly(g *group) {
	box := h.early[g.id]
	if box == nil {
		return
	}
	delete(h.early, g.id)
	for _, m := range box.msgs {
		h.earlyBytes -= m.size
		h.stepEnvelope(g, m.from, m.env)
	}
	h.markDirty(g)
}

// expireEarly drops held messages older than earlyTTLTicks (on tick).
func (h *Host) expireEarly() {
	for id, box := range h.early {
		keep := box.msgs[:0]
		for _, m := range box.msgs {
			if h.ticks-m.at >= earlyTTLTicks {
				h.earlyBytes -= m.size
				continue
			}
			keep = append(keep, m)
		}
		clear(box.msgs[len(keep):])
		box.msgs = keep
		if len(keep) == 0 {
			delete(h.early, id)
		}
	}
}
