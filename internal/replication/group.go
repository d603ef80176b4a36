package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// GroupOptions describe a group when it is added to a host.
type GroupOptions struct {
	// Machine is the group's state machine; it is required (AddGroup
	// fails without one).
	Machine GroupMachine
	// Voters is the initial membership of a new group. A group whose
	// storage is empty is bootstrapped with it; leave it empty on a node
	// that joins an existing group (it waits for the leader to contact it).
	Voters []NodeID
	// Storage is the group's log; nil means NewMemoryLog().
	Storage LogStorage
	// Applied is the last index the state machine has already applied
	// (restart from durable storage); 0 for a new group. raft rebuilds
	// the membership from the storage's snapshot plus the configuration
	// entries it applies, so without Conf, Applied must not pass a
	// configuration entry after the snapshot: use the snapshot's index
	// and let the state machine skip what it already holds.
	Applied uint64
	// Conf, when set, is the membership the caller followed through the
	// log's configuration entries up to Applied (it replayed them with
	// ConfReplay, from the storage's InitialState): raft starts from it
	// instead of the snapshot's, so Applied may pass those entries.
	Conf *ConfReplay
	// Prepare, when set, sees every data proposal to the group on the
	// host's loop right before raft does, in log order: it may rewrite
	// data in place (a partition leader stamps offsets and a timestamp
	// into a batch). If it fails the proposal is refused with its error;
	// otherwise accepted runs once raft has admitted the entry (not when
	// raft drops it), so state it advances stays in step with the log.
	// A refusal wraps ErrRefused (the request is in no log) or ErrPending
	// (an earlier copy still waits in the log) so Transient classifies it.
	Prepare func(data []byte) (accepted func(), err error)
	// Rebuilt marks an empty group created on a node that was removed
	// from it to wipe a damaged replica (internal/partition rebuild.go).
	// While this node is no voter of it, a heartbeat whose commit index
	// is beyond the log is dropped instead of tripping ErrLogLost: it was
	// sent before the removal, to the member this node no longer is (the
	// leader sends a learner added since no commit above what it
	// acknowledged).
	Rebuilt bool
}

// group is one raft group on this host. All fields are loop-owned.
type group struct {
	id        GroupID
	rn        *raft.RawNode
	storage   LogStorage
	machine   GroupMachine
	confState *raftpb.ConfState
	members   map[NodeID]bool // voters, learners and outgoing voters
	applied   uint64
	// appliedTerm is the term of the entry at applied (0 before the
	// first apply of this process, or after a restore of an unknown term).
	appliedTerm uint64
	lead        uint64 // raft id of the leader (0: none), from SoftState
	state       raft.StateType

	dirty        bool
	quiesced     bool
	quietTicks   int
	checkQuiesce bool
	campaign     bool // campaign once the bootstrap entries are applied
	holdTicks    int  // ticks to skip before the first election timer runs
	campaignAt   uint64
	quiesceReq   *raftpb.Message // a leader's pending quiesce request

	// rebuilt is GroupOptions.Rebuilt.
	rebuilt bool

	prepare  func([]byte) (func(), error)
	proposed []*waiter          // accepted since the last Ready, in log order (nil: nobody waits)
	pending  map[uint64]*waiter // by log index
	view     View               // last published
	hasView  bool

	confVersion int // bumped by setConf
	viewConf    int // confVersion the published view was built from

	// hardTerm and hardVote are the term and vote of the last hard state
	// written to storage (handleReady).
	hardTerm, hardVote uint64
	// transfer is the last leadership transfer the balancer started
	// (balance.go).
	transfer transferAttempt
	// confIndex is the index of the last configuration change applied
	// since the group was added (0: none); CompactTo refuses to record
	// the current ConfState at an index before it.
	confIndex uint64
	// lastIndex is raft's last log index as of the last Ready handled
	// (its last entry, or its snapshot); admitted counts a leader's
	// proposals on from it. That is exact because the loop handles Readys
	// until none is left (drainReady) before it admits anything, so the
	// entries raft appends on its own (a new leader's empty entry, the
	// automatic leave of a joint configuration in Advance) are counted,
	// and between Readys only admitted proposals extend a leader's log.
	lastIndex uint64
}

// waiter is a caller waiting for its entry to apply. index and term
// identify the entry: raft's log position and term when the proposal was
// admitted (group.admitted), checked when the entry is bound
// (bindProposals) and again when its index applies (apply).
type waiter struct {
	index, term uint64
	done        chan result
}

type result struct {
	index uint64
	err   error
	conf  *raftpb.ConfState
}

func (w *waiter) finish(r result) {
	select {
	case w.done <- r:
	default:
	}
}

// failAll resolves every waiting proposal with err. Each was admitted,
// so its entry may still commit (on the other replicas, or here from the
// log after a restart): err is wrapped in ErrOutcomeUnknown unless it
// already says so.
func (g *group) failAll(err error) {
	if !errors.Is(err, ErrOutcomeUnknown) {
		err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	for _, w := range g.proposed {
		if w != nil {
			w.finish(result{err: err})
		}
	}
	for _, w := range g.pending {
		w.finish(result{err: err})
	}
	g.proposed, g.pending = nil, map[uint64]*waiter{}
}

func (g *group) setConf(cs *raftpb.ConfState) {
	g.confState = cs
	g.confVersion++
	g.members = map[NodeID]bool{}
	for _, ids := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		for _, id := range ids {
			g.members[nodeID(id)] = true
		}
	}
}

func (g *group) isVoter(n NodeID) bool {
	return slices.Contains(g.confState.GetVoters(), raftID(n)) || slices.Contains(g.confState.GetVotersOutgoing(), raftID(n))
}

// errNoMachine: GroupOptions.Machine was nil. A group without a state
// machine would commit entries nobody applies, so AddGroup refuses it
// rather than discarding them.
var errNoMachine = errors.New("GroupOptions.Machine is required")

// AddGroup creates group id on this host; opts.Machine is required. A
// fresh group with voters is bootstrapped; if this node is its
// lowest-numbered voter (replica 0 in a fresh cluster) it campaigns at
// once, so replica 0 becomes the first leader, as the reference's view 0
// makes it primary. With Config.Preference, the first voter of the
// group's preferred order campaigns instead.
func (h *Host) AddGroup(ctx context.Context, id GroupID, opts GroupOptions) error {
	errc := make(chan error, 1)
	if err := h.do(ctx, func() { errc <- h.addGroup(id, opts) }); err != nil {
		return fmt.Errorf("add group %d: %w", id, err)
	}
	return <-errc
}

func (h *Host) addGroup(id GroupID, opts GroupOptions) error {
	if opts.Machine == nil {
		return fmt.Errorf("add group %d: %w", id, errNoMachine)
	}
	if _, ok := h.groups[id]; ok {
		return fmt.Errorf("add group %d: %w", id, ErrGroupExists)
	}
	st := opts.Storage
	if st == nil {
		st = NewMemoryLog()
	}
	fresh, err := isEmpty(st)
	if err != nil {
		return fmt.Errorf("add group %d: %w: %w", id, ErrStorage, err)
	}
	hs, cs, err := st.InitialState()
	if err != nil {
		return fmt.Errorf("add group %d: %w: %w", id, ErrStorage, err)
	}
	var rs raft.Storage = st
	if opts.Conf != nil {
		cs = opts.Conf.State()
		rs = replayedConf{LogStorage: st, cs: cs}
	}
	rc := &raft.Config{
		ID:                        raftID(h.cfg.Self),
		ElectionTick:              h.cfg.Timing.ElectionTicks,
		HeartbeatTick:             h.cfg.Timing.HeartbeatTicks,
		Storage:                   rs,
		Applied:                   opts.Applied,
		MaxSizePerMsg:             h.cfg.MaxSizePerMsg,
		MaxInflightMsgs:           h.cfg.MaxInflightMsgs,
		MaxInflightBytes:          h.cfg.MaxInflightBytes,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    raftLogger{h.log.With("group", uint64(id))},
	}
	rn, err := newRawNode(rc)
	if err != nil {
		return fmt.Errorf("add group %d: %w", id, err)
	}
	if fresh && len(opts.Voters) > 0 {
		// The initial membership goes into the log as configuration
		// entries 1..n (identical on every node), so a node added later
		// learns it by replaying the log like any other entry.
		peers := make([]raft.Peer, 0, len(opts.Voters))
		for _, v := range opts.Voters {
			peers = append(peers, raft.Peer{ID: raftID(v)})
		}
		if err := rn.Bootstrap(peers); err != nil {
			return fmt.Errorf("bootstrap group %d: %w", id, err)
		}
	}
	g := &group{
		id: id, rn: rn, storage: st, machine: opts.Machine, applied: opts.Applied, prepare: opts.Prepare, pending: map[uint64]*waiter{}, rebuilt: opts.Rebuilt,
		hardTerm: hs.GetTerm(), hardVote: hs.GetVote(),
	}
	g.setConf(proto.CloneOf(cs))
	if opts.Conf != nil {
		g.confIndex = opts.Conf.Index()
	}
	h.groups[id] = g
	h.active[id] = g
	h.stats.groups.Add(1)
	h.stats.active.Add(1)
	for n := range g.members {
		h.knowPeer(n)
	}
	// raft refuses to campaign before the bootstrap entries are applied,
	// so the first campaign happens after the first Ready.
	// The other voters of a fresh group hold their election timer back
	// for two election timeouts, so replica 0 gets more than one try even
	// when its first campaign reached peers that had not created the
	// group yet.
	if fresh && len(opts.Voters) > 0 {
		if first, _ := h.firstCandidate(id, opts.Voters, nil); first == h.cfg.Self {
			g.campaign = true
		} else {
			g.holdTicks = 2 * h.cfg.Timing.ElectionTicks
		}
	}
	h.markDirty(g)
	h.releaseEarly(g)
	return nil
}

// RemoveGroup drops group id from this host (its storage is left as is);
// waiting proposals fail with ErrGroupRemoved wrapped in
// ErrOutcomeUnknown.
func (h *Host) RemoveGroup(ctx context.Context, id GroupID) error {
	errc := make(chan error, 1)
	if err := h.do(ctx, func() {
		g := h.groups[id]
		if g == nil {
			errc <- fmt.Errorf("remove group %d: %w", id, ErrUnknownGroup)
			return
		}
		h.dropGroup(g, ErrGroupRemoved)
		errc <- nil
	}); err != nil {
		return fmt.Errorf("remove group %d: %w", id, err)
	}
	return <-errc
}

func (h *Host) dropGroup(g *group, err error) {
	g.failAll(err)
	h.dirDirty(g.id)
	delete(h.groups, g.id)
	if _, ok := h.active[g.id]; ok {
		delete(h.active, g.id)
		h.stats.active.Add(-1)
	}
	delete(h.leading, g.id)
	h.stats.groups.Add(-1)
	h.viewMu.Lock()
	delete(h.views, g.id)
	h.notifyLocked(g.id)
	h.viewMu.Unlock()
}

// processReady handles the Ready of every group touched in this pass.
//
// The first Ready of a group whose storage defers its fsync
// (DeferredSync) is written but not synced at first; the syncs of all
// such groups then run at once (syncAll), and only after that are their
// Readys finished (hard state, a follower's acknowledgements, applies).
// With enforce_fsync and many partitions, one pass costs about one disk
// sync instead of one per group.
func (h *Host) processReady() {
	dirty := h.dirty
	h.dirty = h.dirty[:0:0]
	var waiting []persisting
	for _, g := range dirty {
		g.dirty = false
		if h.groups[g.id] != g {
			continue // removed in this pass
		}
		if d, ok := g.storage.(DeferredSync); ok && !g.campaign && g.rn.HasReady() {
			var p persisting
			if err := h.guard(g, func() (err error) { p, err = h.persistReady(g, d); return err }); err != nil {
				h.fail(g, err)
				continue
			}
			if p.sync != nil {
				waiting = append(waiting, p)
				continue
			}
			if err := h.guard(g, func() error { return h.finishReady(g, p) }); err != nil {
				h.fail(g, err)
				continue
			}
		}
		h.settle(g)
	}
	if len(waiting) == 0 {
		return
	}
	syncAll(waiting)
	for _, p := range waiting {
		g := p.g
		if p.err != nil {
			h.fail(g, appendError(p.early, p.err))
			continue
		}
		if err := h.guard(g, func() error { return h.finishReady(g, p) }); err != nil {
			h.fail(g, err)
			continue
		}
		h.settle(g)
	}
}

// maxParallelSyncs bounds the fsyncs syncAll runs at once (each blocks an
// OS thread).
const maxParallelSyncs = 32

// syncAll runs the deferred syncs of ps, up to maxParallelSyncs at a time,
// and records each result in its err.
func syncAll(ps []persisting) {
	if len(ps) == 1 {
		ps[0].err = ps[0].sync()
		return
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxParallelSyncs)
	for i := range ps {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			ps[i].err = ps[i].sync()
		})
	}
	wg.Wait()
}

// settle handles g's remaining Readys (and its first campaign), then
// re-evaluates quiescence and publishes its view.
func (h *Host) settle(g *group) {
	if !h.drainReady(g) {
		return
	}
	if g.campaign {
		g.campaign = false
		if err := g.rn.Campaign(); err != nil {
			h.log.Warn("first campaign", "group", uint64(g.id), "err", err)
		}
		if !h.drainReady(g) {
			return
		}
	}
	h.evaluateQuiesce(g)
	h.publish(g)
}

// drainReady handles Readys until none is left; false means the group
// failed and was dropped.
func (h *Host) drainReady(g *group) bool {
	for g.rn.HasReady() {
		if err := h.guard(g, func() error { return h.handleReady(g) }); err != nil {
			h.fail(g, err)
			return false
		}
	}
	return true
}

// guard runs f, turning a raft panic into ErrLogLost: raft panics when a
// leader proves this node acknowledged entries its log no longer holds
// (a lost or replaced data directory). The group is then unusable here,
// but the rest of the node and of the cluster are not.
func (h *Host) guard(g *group, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("group %d: %w: %v", g.id, ErrLogLost, r)
		}
	}()
	return f()
}

// newRawNode is raft.NewRawNode with its panic on a log that lost entries
// (a stored commit index beyond the last entry: a truncated log file)
// turned into ErrLogLost, so the group fails to start and the host goes
// on.
func newRawNode(rc *raft.Config) (rn *raft.RawNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			rn, err = nil, fmt.Errorf("%w: %v", ErrLogLost, r)
		}
	}()
	return raft.NewRawNode(rc)
}

// fail drops group g after err and reports it on Failures.
func (h *Host) fail(g *group, err error) {
	h.log.Error("raft group stopped", "group", uint64(g.id), "err", err)
	h.dropGroup(g, err)
	select {
	case h.failures <- GroupFailure{Group: g.id, Err: err}:
	default:
	}
}

// admitted records w, whose proposal raft has just appended (w nil: a
// proposal nobody waits for), with the index and term its entry got: a
// leader appends each admitted proposal as one entry at the end of its
// log, at its current term. Runs on the loop, right after raft admitted
// the proposal.
func (g *group) admitted(w *waiter) {
	if w != nil {
		w.index = g.lastIndex + uint64(len(g.proposed)) + 1
		w.term = g.rn.BasicStatus().GetTerm()
	}
	g.proposed = append(g.proposed, w)
}

// bindProposals hands the waiters of the proposals admitted since the last
// Ready to their entries, which are the tail of this Ready's ents while
// raft still leads, and advances lastIndex. It is the one place that
// decides whether a waiter's entry made it into this node's log:
//
//   - A waiter is bound (it waits in pending until its index applies)
//     only if the entry at its place in the tail has the index and term
//     recorded on admission (admitted). An index and a term identify one
//     entry (raft's log matching), so no other entry passes the check.
//   - Otherwise raft dropped the entry before it was stored: it was
//     admitted while raft still led, then raft stepped a higher term's
//     message in the same loop pass, stepped down and replaced its
//     unstored entries with the new leader's (or with a snapshot). The
//     waiter is answered ErrOutcomeUnknown, not ErrProposalLost: the entry
//     is in no log here, but raft still sends the appends it queued while
//     it led, a follower that has not moved to the new term accepts them,
//     and a later leader holding the entry may commit it. Only apply
//     answers ErrProposalLost, once another entry committed at the index.
//   - A waiter still pending at the index a new waiter is bound to (this
//     node's log lost its entry, and this node, leading again, reused the
//     index) is answered ErrOutcomeUnknown for the same reason: its entry
//     is no longer here, but nothing is committed at its index yet.
func (h *Host) bindProposals(g *group, ents []*raftpb.Entry) {
	n := len(g.proposed)
	for i, w := range g.proposed {
		if w == nil {
			continue // a forwarded proposal: its origin waits for the apply
		}
		at := len(ents) - n + i
		if at < 0 || ents[at].GetIndex() != w.index || ents[at].GetTerm() != w.term {
			w.finish(result{err: fmt.Errorf("%w: entry %d of term %d was replaced before it was stored (leadership changed)", ErrOutcomeUnknown, w.index, w.term)})
			continue
		}
		if old := g.pending[w.index]; old != nil {
			old.finish(result{err: fmt.Errorf("%w: entry %d of term %d was replaced in this node's log", ErrOutcomeUnknown, old.index, old.term)})
		}
		g.pending[w.index] = w
	}
	g.proposed = g.proposed[:0]
	if len(ents) > 0 {
		g.lastIndex = ents[len(ents)-1].GetIndex()
	}
}

// apply hands one committed entry to the group's machine (or applies a
// configuration change) and resolves its waiter.
func (h *Host) apply(g *group, e *raftpb.Entry) {
	var conf *raftpb.ConfState
	switch e.GetType() {
	case raftpb.EntryNormal:
		if len(e.GetData()) > 0 {
			g.machine.Apply(Entry{Index: e.GetIndex(), Term: e.GetTerm(), Data: e.GetData()})
		}
	case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
		var cc raftpb.ConfChangeI
		if e.GetType() == raftpb.EntryConfChange {
			v1 := &raftpb.ConfChange{}
			if err := proto.Unmarshal(e.GetData(), v1); err != nil {
				panic(fmt.Sprintf("group %d: committed conf change at %d does not decode: %v", g.id, e.GetIndex(), err))
			}
			cc = v1
		} else {
			v2 := &raftpb.ConfChangeV2{}
			if err := proto.Unmarshal(e.GetData(), v2); err != nil {
				panic(fmt.Sprintf("group %d: committed conf change at %d does not decode: %v", g.id, e.GetIndex(), err))
			}
			cc = v2
		}
		conf = g.rn.ApplyConfChange(cc)
		g.setConf(conf)
		g.confIndex = e.GetIndex()
		for n := range g.members {
			h.knowPeer(n)
		}
		// Publish at once: a state machine applying the next entry of
		// the same Ready (a topic created right after a membership
		// change) reads the new voters through Status.
		h.publish(g)
	}
	g.applied, g.appliedTerm = e.GetIndex(), e.GetTerm()
	if w := g.pending[e.GetIndex()]; w != nil {
		delete(g.pending, e.GetIndex())
		if w.term == e.GetTerm() {
			w.finish(result{index: e.GetIndex(), conf: conf})
		} else {
			w.finish(result{err: ErrProposalLost})
		}
	}
}

// receive steps a batch from a peer.
func (h *Host) receive(in inbound) {
	h.heard(in.from)
	h.stats.received.Add(uint64(len(in.envs)))
	for _, e := range in.envs {
		if e.Kind == transport.KindPing || e.Msg == nil {
			continue
		}
		g := h.groups[GroupID(e.Group)]
		if g == nil {
			h.holdEarly(in.from, e) // not created here yet (early.go)
			continue
		}
		h.stepEnvelope(g, in.from, e)
		h.markDirty(g)
	}
}

// stepEnvelope hands one envelope from a peer to group g.
func (h *Host) stepEnvelope(g *group, from NodeID, e transport.Envelope) {
	switch e.Kind {
	case transport.KindRaft:
		if e.Msg.GetType() == raftpb.MsgProp {
			h.proposeForwarded(g, from, e.Msg)
			return
		}
		if g.rebuilt && h.staleForRebuilt(g, e.Msg) {
			h.log.Debug("dropped a heartbeat sent before this replica was removed to be rebuilt", "group", e.Group, "from", uint64(from), "commit", e.Msg.GetCommit())
			return
		}
		if g.quiesced {
			h.wake(g)
		}
		m := admitSnapshot(h.cfg.Self, e.Msg)
		if err := h.guard(g, func() error { return g.rn.Step(m) }); err != nil {
			if errors.Is(err, ErrLogLost) {
				h.fail(g, err)
				return
			}
			h.log.Debug("step", "group", e.Group, "from", uint64(from), "err", err)
		}
	case transport.KindQuiesce:
		g.quiesceReq = e.Msg
	}
}

// staleForRebuilt reports whether m, to a rebuilt group g
// (GroupOptions.Rebuilt), is a heartbeat from before this node's removal:
// its commit index is beyond g's log while this node is no voter.
func (h *Host) staleForRebuilt(g *group, m *raftpb.Message) bool {
	if m.GetType() != raftpb.MsgHeartbeat || slices.Contains(g.confState.GetVoters(), raftID(h.cfg.Self)) {
		return false
	}
	last, err := g.storage.LastIndex()
	return err == nil && m.GetCommit() > last
}

// unreachable reports dropped envelopes to their groups.
func (h *Host) unreachable(in inbound) {
	seen := map[GroupID]bool{}
	for _, e := range in.envs {
		if e.Kind != transport.KindRaft || e.Msg == nil {
			continue
		}
		g := h.groups[GroupID(e.Group)]
		if g == nil {
			continue
		}
		if e.Msg.GetType() == raftpb.MsgSnap {
			g.rn.ReportSnapshot(raftID(in.from), raft.SnapshotFailure)
		}
		if !seen[g.id] {
			seen[g.id] = true
			g.rn.ReportUnreachable(raftID(in.from))
			h.markDirty(g)
		}
	}
}
