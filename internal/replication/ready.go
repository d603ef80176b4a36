package replication

import (
	"fmt"
	"runtime"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// handleReady persists, sends and applies one Ready.
//
// The order is raft's synchronous storage contract (snapshot, entries and
// hard state durable before the messages leave), with one exception: a
// leader hands its messages to the network before it appends its own
// entries, so its disk write overlaps the send (raft's doc.go: "the leader
// can send messages in parallel with persisting entries", thesis
// §10.2.1). That is safe because
//
//   - a leader's own entries count towards commitment only through the
//     self-acknowledgement raft steps in Advance, which runs after Append
//     returned: an entry commits only once a quorum (with or without the
//     leader) holds it durably, and the leader never acknowledges entries
//     it lost, so a crash between send and write cannot trip ErrLogLost;
//   - a leader never receives a snapshot, so there is none to persist;
//   - the term and vote a leader's messages carry are already durable:
//     raft counts a candidate's own vote only once the Ready recording
//     that vote was persisted (the self-vote is stepped on Advance), so
//     the Ready in which a node becomes leader does not change its term
//     or vote. sendsEarly does not rely on that and takes the synchronous
//     order for any Ready whose hard state changes term or vote. A hard
//     state that only moves the commit index is written after the
//     entries, as raft requires; the commit index the messages carry is
//     backed by a quorum's durable acknowledgements, not by this write.
//
// A follower or candidate keeps the synchronous order: its
// acknowledgements and votes promise what it has persisted.
//
// Messages sent early go out with a flush of the whole outbox (everything
// in it belongs to Readys already handled), and the loop then yields, so
// the transport's writers write them before this goroutine appends and
// the followers receive while it does.
func (h *Host) handleReady(g *group) error {
	p, err := h.persistReady(g, nil)
	if err != nil {
		return err
	}
	return h.finishReady(g, p)
}

// persisting is a Ready whose entries were written: early says its
// messages already left; sync, when set, is the deferred fsync of its
// entries (DeferredSync), which must succeed before finishReady.
type persisting struct {
	g     *group
	rd    raft.Ready
	early bool
	sync  func() error
	err   error // sync's result
}

// persistReady takes g's Ready and stores its snapshot and entries,
// sending a leader's messages first (see handleReady). With d the
// entries' fsync is deferred (p.sync).
func (h *Host) persistReady(g *group, d DeferredSync) (persisting, error) {
	p := persisting{g: g, rd: g.rn.Ready()}
	rd := &p.rd
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := h.restoreSnapshot(g, rd.Snapshot); err != nil {
			return p, err
		}
	}
	p.early = g.sendsEarly(rd)
	if p.early {
		h.sendMessages(g, rd.Messages)
		h.flush()
		// Let the writers take their messages before this goroutine
		// writes the entries: the local append copies without giving the
		// processor up (internal/rawio), so with one processor the
		// writers would otherwise wait for it.
		runtime.Gosched()
	}
	if len(rd.Entries) > 0 {
		var err error
		if d != nil {
			p.sync, err = d.AppendDeferred(rd.Entries)
		} else {
			err = g.storage.Append(rd.Entries)
		}
		if err != nil {
			return p, appendError(p.early, err)
		}
	}
	return p, nil
}

// appendError wraps a failed append (or its sync): after an early send
// followers may already hold, and commit, the entries.
func appendError(early bool, err error) error {
	if early {
		return fmt.Errorf("%w: %w: append: %w", ErrOutcomeUnknown, ErrStorage, err)
	}
	return fmt.Errorf("%w: append: %w", ErrStorage, err)
}

// finishReady completes a persisted Ready: the hard state (after the
// entries, as raft requires), the remaining messages, the applies, and
// Advance.
func (h *Host) finishReady(g *group, p persisting) error {
	rd, early := p.rd, p.early
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := g.storage.SetHardState(rd.HardState); err != nil {
			return fmt.Errorf("%w: hard state: %w", ErrStorage, err)
		}
		g.hardTerm, g.hardVote = rd.HardState.GetTerm(), rd.HardState.GetVote()
	}
	h.bindProposals(g, rd.Entries)
	if !early {
		h.sendMessages(g, rd.Messages)
	}
	for _, e := range rd.CommittedEntries {
		h.apply(g, e)
	}
	if rd.SoftState != nil {
		h.dirDirty(g.id)
		g.lead = rd.SoftState.Lead
		g.state = rd.SoftState.RaftState
		if g.lead != raft.None {
			g.holdTicks = 0 // a leader is known: no election to hold back
		}
		if g.state == raft.StateLeader {
			h.leading[g.id] = g
		} else {
			delete(h.leading, g.id)
		}
	}
	g.rn.Advance(rd)
	return nil
}

// sendsEarly reports whether rd's messages may leave before its entries
// are persisted (see handleReady): this node leads the group as of rd,
// there are entries to write, no snapshot, and no change of term or vote.
func (g *group) sendsEarly(rd *raft.Ready) bool {
	state := g.state
	if rd.SoftState != nil {
		state = rd.SoftState.RaftState
	}
	if state != raft.StateLeader || len(rd.Entries) == 0 || len(rd.Messages) == 0 || !raft.IsEmptySnap(rd.Snapshot) {
		return false
	}
	hs := rd.HardState
	return raft.IsEmptyHardState(hs) || (hs.GetTerm() == g.hardTerm && hs.GetVote() == g.hardVote)
}

// restoreSnapshot persists a snapshot received from the leader and hands
// it to the group's machine.
func (h *Host) restoreSnapshot(g *group, snap *raftpb.Snapshot) error {
	if err := g.storage.ApplySnapshot(snap); err != nil {
		return fmt.Errorf("%w: apply snapshot: %w", ErrStorage, err)
	}
	md := snap.GetMetadata()
	if err := g.machine.Restore(md.GetIndex(), snap.GetData()); err != nil {
		return fmt.Errorf("restore snapshot at %d: %w", md.GetIndex(), err)
	}
	g.applied, g.lastIndex, g.appliedTerm = md.GetIndex(), md.GetIndex(), md.GetTerm()
	g.setConf(proto.CloneOf(md.GetConfState()))
	for idx, w := range g.pending {
		if idx <= g.applied {
			w.finish(result{err: fmt.Errorf("%w: replaced by a snapshot", ErrOutcomeUnknown)})
			delete(g.pending, idx)
		}
	}
	return nil
}

// sendMessages queues a Ready's messages for their peers; appends
// without entries are held back a little (notice.go).
func (h *Host) sendMessages(g *group, msgs []*raftpb.Message) {
	for _, m := range msgs {
		to := nodeID(m.GetTo())
		if h.holds(m) {
			h.hold(g, to, m) // a commit notice (notice.go)
			continue
		}
		if m.GetType() == raftpb.MsgApp {
			h.supersede(g, to)
		}
		h.stats.raftSent.Add(1)
		h.enqueue(to, transport.Envelope{Group: uint64(g.id), Kind: transport.KindRaft, Msg: m})
		if m.GetType() == raftpb.MsgSnap {
			// Optimistic: a drop reported by the transport turns into
			// SnapshotFailure, and raft resends when the follower rejects.
			g.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFinish)
		}
	}
}
