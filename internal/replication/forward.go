package replication

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Forward hands data to group g's leader as a proposal and returns once it
// is on its way: on the leader it is proposed at once, on a follower it
// travels to the known leader as a raft proposal message. Nothing reports
// whether it commits; the caller learns that from its own apply (the
// metadata plane tags the entry and waits for it), bounded by its own
// deadline. A follower that knows no leader fails at once with a
// *NotLeaderError, so the caller can answer "not accepted" (58). Every
// error Forward returns means the data was not handed on, a context error
// included (see Transient).
//
// raft's own proposal forwarding stays off (it would interleave foreign
// entries with this host's waiting proposals): forwarded proposals are
// admitted by the leader's loop like local ones, with nobody waiting.
func (h *Host) Forward(ctx context.Context, g GroupID, data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("forward to group %d: empty entries are reserved for raft", g)
	}
	errc := make(chan error, 1)
	if err := h.do(ctx, func() { errc <- h.forward(g, data) }); err != nil {
		return fmt.Errorf("forward to group %d: %w", g, err)
	}
	if err := <-errc; err != nil {
		return fmt.Errorf("forward to group %d: %w", g, err)
	}
	return nil
}

// forward runs on the loop.
func (h *Host) forward(id GroupID, data []byte) error {
	g := h.groups[id]
	switch {
	case g == nil:
		return ErrUnknownGroup
	case g.state == raft.StateLeader:
		return h.proposeUnwatched(g, data)
	case g.lead == raft.None:
		return h.notLeader(g)
	}
	h.wake(g)
	h.enqueue(nodeID(g.lead), transport.Envelope{Group: uint64(id), Kind: transport.KindRaft, Msg: &raftpb.Message{
		Type: raftpb.MsgProp.Enum(), From: new(raftID(h.cfg.Self)), To: new(g.lead),
		Entries: []*raftpb.Entry{{Data: data}},
	}})
	return nil
}

// proposeUnwatched proposes data on the leader with nobody waiting for
// it; a nil placeholder keeps the waiting proposals bound to their own
// entries (bindProposals). Runs on the loop.
func (h *Host) proposeUnwatched(g *group, data []byte) error {
	h.wake(g)
	if err := h.proposeData(g, data); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			return ErrProposalDropped
		}
		return err
	}
	g.proposed = append(g.proposed, nil)
	h.markDirty(g)
	return nil
}

// proposeForwarded admits the entries of a proposal message a follower
// forwarded. A node that no longer leads drops them: the follower's caller
// times out (its outcome stays unknown, as for any lost message). Runs on
// the loop.
func (h *Host) proposeForwarded(g *group, from NodeID, m *raftpb.Message) {
	if g.state != raft.StateLeader {
		h.log.Debug("forwarded proposal dropped: not the leader", "group", uint64(g.id), "from", uint64(from))
		return
	}
	for _, e := range m.GetEntries() {
		if len(e.GetData()) == 0 || e.GetType() != raftpb.EntryNormal {
			continue
		}
		if err := h.proposeUnwatched(g, e.GetData()); err != nil {
			h.log.Debug("forwarded proposal refused", "group", uint64(g.id), "from", uint64(from), "err", err)
		}
	}
}
