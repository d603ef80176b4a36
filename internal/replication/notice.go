package replication

import (
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// Commit notices.
//
// Each time a leader's commit index advances, raft broadcasts an append
// without entries to every follower so it learns the new commit index,
// and every follower answers it. Under a stream of proposals the next
// append, which carries entries and the commit index as well, follows
// within a round trip, so that notice and its answer are pure overhead:
// with one message per request they were 4 of the 10 messages a request
// cost a 3-node cluster (each one a process wake-up), competing for the
// CPU with the requests themselves.
//
// The host therefore holds an append without entries for up to
// Config.CommitNoticeHold (default 1 ms) per group and peer. A later
// append to the same peer in the same group supersedes it (the held one
// is dropped: raft's transport is lossy, and the later append carries a
// commit index at least as new and asks the same question of the
// follower's log); otherwise it leaves when its hold ends. A follower
// therefore learns a commit at most one hold late when no proposal
// follows; the leader's acknowledgements do not depend on it.

// DefaultCommitNoticeHold is the hold of an append without entries when
// Config.CommitNoticeHold is zero.
const DefaultCommitNoticeHold = time.Millisecond

type noticeKey struct {
	group GroupID
	to    NodeID
}

type heldNotice struct {
	g   *group
	msg *raftpb.Message
	at  time.Time
}

// holds reports whether m is an append without entries that the host
// holds back (see Commit notices above).
func (h *Host) holds(m *raftpb.Message) bool {
	return h.cfg.CommitNoticeHold > 0 && m.GetType() == raftpb.MsgApp && len(m.GetEntries()) == 0
}

// hold keeps m, replacing an older notice to the same peer, and arms the
// release timer.
func (h *Host) hold(g *group, to NodeID, m *raftpb.Message) {
	h.notices[noticeKey{g.id, to}] = heldNotice{g: g, msg: m, at: time.Now()}
	if !h.noticeArmed {
		h.noticeArmed = true
		h.noticeTimer.Reset(h.cfg.CommitNoticeHold)
	}
}

// supersede drops the notice held for g and to: m, an append to the same
// peer, carries what it would have.
func (h *Host) supersede(g *group, to NodeID) {
	if len(h.notices) == 0 {
		return
	}
	k := noticeKey{g.id, to}
	if _, ok := h.notices[k]; ok {
		delete(h.notices, k)
		h.stats.noticesMerged.Add(1)
	}
}

// releaseNotices queues the notices held for a whole hold (those of a
// group removed meanwhile are dropped) and re-arms the timer for the
// others.
func (h *Host) releaseNotices() {
	h.noticeArmed = false
	now := time.Now()
	var next time.Duration
	for k, n := range h.notices {
		left := h.cfg.CommitNoticeHold - now.Sub(n.at)
		if left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		delete(h.notices, k)
		if h.groups[k.group] != n.g {
			continue
		}
		h.stats.raftSent.Add(1)
		h.enqueue(k.to, transport.Envelope{Group: uint64(k.group), Kind: transport.KindRaft, Msg: n.msg})
	}
	if next > 0 {
		h.noticeArmed = true
		h.noticeTimer.Reset(next)
	}
}
