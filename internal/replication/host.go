package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/replication/transport"
)

// GroupID names a raft group (the metadata group or one partition).
type GroupID uint64

// MetadataGroup is the group id of the metadata group; partition groups
// use other ids.
const MetadataGroup GroupID = 0

// NodeID is a replica id from the roster.
type NodeID = transport.NodeID

// Network carries envelopes to other hosts. Send must not block; what it
// cannot deliver it reports to Host.Unreachable (the transport does).
type Network interface {
	Send(to NodeID, envs []transport.Envelope)
}

// Resetter is implemented by a Network that can abort its connection to
// a peer, discarding whatever it still buffers for it. The host resets
// the connection to a peer it declares dead (quiesce.go, peerDown), so
// nothing written to the silent peer (a forwarded request whose caller
// was told the call was lost) is delivered long after, when the network
// heals and TCP retransmits it.
type Resetter interface {
	Reset(to NodeID)
}

// Entry is one committed log entry handed to a group's GroupMachine.
type Entry struct {
	Index, Term uint64
	Data        []byte
}

// Timing is the raft clock (see config.ClusterConfig.RaftTiming).
type Timing struct {
	Tick           time.Duration
	HeartbeatTicks int
	ElectionTicks  int
}

// Config configures a Host.
type Config struct {
	// Self is this node's replica id.
	Self NodeID
	// Peers are the other hosts; each gets one liveness ping per
	// heartbeat interval. Nodes added to a group later join automatically.
	Peers   []NodeID
	Timing  Timing
	Network Network
	Logger  *slog.Logger
	// FollowLeader makes every group this host leads hand leadership to
	// the leader of FollowGroup (the metadata group), so clients that talk
	// to the metadata leader find every partition leader there.
	FollowLeader bool
	FollowGroup  GroupID
	// Preference, when set, spreads leadership instead ("spread"; it
	// cannot be combined with FollowLeader): it returns a group's
	// preferred replica order (nil: no preference), and every heartbeat
	// interval each leader hands the group to the first member of it that
	// is alive, a voter and caught up (balance.go); the first campaign of
	// a group, and the one after its leader dies, goes to the first
	// member too. It runs on the host's loop: it must be quick, must not
	// block and must not call into the host.
	Preference func(GroupID) []NodeID
	// DisableQuiescence keeps every group ticking (for comparison).
	DisableQuiescence bool
	// InboxBatches bounds received batches waiting for the loop; beyond
	// it batches are dropped (raft retransmits).
	InboxBatches int
	// MaxSizePerMsg and MaxInflightMsgs are raft's flow-control knobs.
	MaxSizePerMsg   uint64
	MaxInflightMsgs int
	// CommitNoticeHold is how long a leader holds an append without
	// entries (the notice of a new commit index) so that the next append
	// to the same peer can carry it instead (notice.go). Zero means
	// DefaultCommitNoticeHold; a negative value sends every notice at once.
	CommitNoticeHold time.Duration
	// MaxInflightBytes bounds the bytes of appends a leader has sent to
	// one peer and not yet seen acknowledged (raft.Config.MaxInflightBytes).
	// MaxInflightMsgs alone lets a follower that catches up (a new node
	// reading a long log) have MaxInflightMsgs x MaxSizePerMsg in flight,
	// 256 MiB with the defaults, all of it queued in the leader's
	// transport and the follower's inbox at once; this caps it at a few
	// round trips' worth. It must be at least MaxSizePerMsg.
	MaxInflightBytes uint64
	// MaxCallBytes bounds the request and the reply of one call (Call);
	// it must leave the transport's frame limit room for the envelope.
	// Zero means DefaultMaxCallBytes.
	MaxCallBytes int
	// CallHandlersPerPeer bounds the call handlers running at once for
	// one calling replica, CallBacklogPerPeer the requests waiting for
	// one of them; beyond both, requests are refused. Zero means
	// DefaultCallHandlersPerPeer and DefaultCallBacklogPerPeer.
	CallHandlersPerPeer, CallBacklogPerPeer int
}

// Defaults for zero Config fields.
const (
	DefaultInboxBatches    = 4096
	DefaultMaxSizePerMsg   = 1 << 20
	DefaultMaxInflightMsgs = 256
	// DefaultMaxInflightBytes is used when MaxInflightBytes is zero (or
	// MaxSizePerMsg, when that is larger).
	DefaultMaxInflightBytes = 32 << 20
	// maxDrainPerWake bounds the inputs handled before a Ready pass.
	maxDrainPerWake = 256
	// maxTransfersPerRound bounds leadership transfers started per
	// heartbeat interval when following the metadata leader.
	maxTransfersPerRound = 1024
)

// Stats are cumulative counters and current gauges of a host.
type Stats struct {
	// Ticks counts RawNode.Tick calls (one per active group per tick).
	Ticks uint64
	// RaftMessagesSent counts raft messages handed to the network.
	RaftMessagesSent uint64
	// EnvelopesSent counts all envelopes (raft, quiesce, ping).
	EnvelopesSent uint64
	// Batches counts Network.Send calls.
	Batches uint64
	// MessagesReceived counts envelopes delivered to the host.
	MessagesReceived uint64
	// InboxDropped counts batches dropped because the inbox was full.
	InboxDropped uint64
	// NoticesMerged counts appends without entries (commit notices) that
	// were not sent because a later append to the same peer carried them.
	NoticesMerged uint64
	// Groups and ActiveGroups: all groups, and those still ticking.
	Groups, ActiveGroups int64
	// CallsSent counts calls made (Call), CallsFailed those that ended
	// in an error; CallsServed counts handlers run for other replicas,
	// CallsRefused requests refused because too many waited.
	CallsSent, CallsFailed, CallsServed, CallsRefused uint64
	// Announcements counts leadership announcement envelopes sent.
	Announcements uint64
}

type counters struct {
	ticks, raftSent, envSent, batches, received, inboxDropped, noticesMerged atomic.Uint64
	callsSent, callsFailed, callsServed, callsRefused, announcements         atomic.Uint64
	groups, active                                                           atomic.Int64
}

type inbound struct {
	from NodeID
	envs []transport.Envelope
}

type peerState struct {
	lastHeard uint64 // tick of the last envelope from the peer
	alive     bool
}

// Host runs raft groups. All raft state is owned by one goroutine (run);
// other goroutines talk to it through channels and read the published
// views under viewMu.
type Host struct {
	cfg   Config
	log   *slog.Logger
	stats counters

	inbox    chan inbound
	unreach  chan inbound
	failures chan GroupFailure
	reqs     chan func()
	done     chan struct{}
	stopped  chan struct{}
	once     sync.Once

	viewMu sync.RWMutex // guards views and viewWaits
	views  map[GroupID]View
	// viewWaits holds, per group somebody waits for (WaitFor), the
	// channel closed at the group's next view change.
	viewWaits map[GroupID]chan struct{}

	// Loop-owned state: touched only by run and the closures it executes.
	groups  map[GroupID]*group
	active  map[GroupID]*group
	leading map[GroupID]*group
	dirty   []*group
	outbox  map[NodeID][]transport.Envelope
	peers   map[NodeID]*peerState
	ticks   uint64
	// early holds raft messages for groups not created yet (early.go);
	// earlyBytes is their total size.
	early      map[GroupID]*earlyBox
	earlyBytes int
	// notices are the held commit notices (notice.go); noticeTimer
	// fires when the oldest one's hold ends, noticeArmed says it is set.
	notices     map[noticeKey]heldNotice
	noticeTimer *time.Timer
	noticeArmed bool

	// calls are the calls between hosts (call.go); safe for any
	// goroutine.
	calls *calls
	// dir is the leader directory (directory.go), safe for any
	// goroutine; ann is the loop's side of the announcements
	// (announce.go).
	dir *directory
	ann announcer
}

// New starts a host. Close stops it.
func New(cfg Config) (*Host, error) {
	if cfg.Network == nil {
		return nil, errors.New("replication: Network is required")
	}
	t := cfg.Timing
	if t.Tick <= 0 || t.HeartbeatTicks < 1 || t.ElectionTicks <= t.HeartbeatTicks {
		return nil, fmt.Errorf("replication: timing %+v needs a positive tick and election ticks above heartbeat ticks", t)
	}
	if cfg.FollowLeader && cfg.Preference != nil {
		return nil, errors.New("replication: FollowLeader and Preference exclude each other")
	}
	if cfg.InboxBatches <= 0 {
		cfg.InboxBatches = DefaultInboxBatches
	}
	if cfg.MaxSizePerMsg == 0 {
		cfg.MaxSizePerMsg = DefaultMaxSizePerMsg
	}
	if cfg.MaxInflightMsgs <= 0 {
		cfg.MaxInflightMsgs = DefaultMaxInflightMsgs
	}
	if cfg.MaxInflightBytes == 0 {
		cfg.MaxInflightBytes = max(DefaultMaxInflightBytes, cfg.MaxSizePerMsg)
	}
	if cfg.MaxInflightBytes < cfg.MaxSizePerMsg {
		return nil, fmt.Errorf("replication: MaxInflightBytes %d is below MaxSizePerMsg %d", cfg.MaxInflightBytes, cfg.MaxSizePerMsg)
	}
	if cfg.CommitNoticeHold == 0 {
		cfg.CommitNoticeHold = DefaultCommitNoticeHold
	}
	if cfg.MaxCallBytes <= 0 {
		cfg.MaxCallBytes = DefaultMaxCallBytes
	}
	if cfg.CallHandlersPerPeer <= 0 {
		cfg.CallHandlersPerPeer = DefaultCallHandlersPerPeer
	}
	if cfg.CallBacklogPerPeer <= 0 {
		cfg.CallBacklogPerPeer = DefaultCallBacklogPerPeer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Host{
		cfg:         cfg,
		log:         cfg.Logger.With("component", "replication", "replica", uint64(cfg.Self)),
		inbox:       make(chan inbound, cfg.InboxBatches),
		unreach:     make(chan inbound, cfg.InboxBatches),
		failures:    make(chan GroupFailure, 64),
		reqs:        make(chan func()), // unbuffered: see do
		done:        make(chan struct{}),
		stopped:     make(chan struct{}),
		views:       map[GroupID]View{},
		viewWaits:   map[GroupID]chan struct{}{},
		groups:      map[GroupID]*group{},
		active:      map[GroupID]*group{},
		leading:     map[GroupID]*group{},
		outbox:      map[NodeID][]transport.Envelope{},
		peers:       map[NodeID]*peerState{},
		notices:     map[noticeKey]heldNotice{},
		noticeTimer: time.NewTimer(time.Hour),
	}
	h.noticeTimer.Stop()
	h.calls = newCalls(h)
	h.dir, h.ann = newDirectory(), newAnnouncer()
	for _, p := range cfg.Peers {
		if p != cfg.Self {
			h.peers[p] = &peerState{alive: true}
		}
	}
	go h.run()
	return h, nil
}

// GroupFailure reports a group that stopped on this host: its storage
// failed, or raft found its log lost (ErrLogLost).
type GroupFailure struct {
	Group GroupID
	Err   error
}

// Failures delivers the groups that stopped (a bounded buffer; reports
// beyond it are only logged).
func (h *Host) Failures() <-chan GroupFailure { return h.failures }

// Close stops the loop; waiting proposals fail with ErrStopped, wrapped
// in ErrOutcomeUnknown when they were admitted. Calls waiting for a reply
// fail with ErrStopped, and Close waits for the call handlers running
// here (their context ends).
func (h *Host) Close() {
	h.once.Do(func() { close(h.done) })
	<-h.stopped
	h.calls.close()
}

// Deliver implements transport.Handler: a batch from peer from. It never
// blocks; a full inbox drops the batch (raft retransmits). Calls, replies
// and leadership announcements are handled at once, off the loop.
func (h *Host) Deliver(from NodeID, envs []transport.Envelope) {
	envs = h.takeData(from, envs)
	if len(envs) == 0 {
		return
	}
	select {
	case h.inbox <- inbound{from, envs}:
	default:
		h.stats.inboxDropped.Add(1)
	}
}

// Unreachable implements transport.Handler: envelopes that could not be
// sent are reported to raft (ReportUnreachable, and a failed snapshot).
func (h *Host) Unreachable(to NodeID, envs []transport.Envelope) {
	envs = h.dataUnreachable(to, envs)
	if len(envs) == 0 {
		return
	}
	select {
	case h.unreach <- inbound{to, envs}:
	default:
	}
}

// Stats returns the counters.
func (h *Host) Stats() Stats {
	s := &h.stats
	return Stats{
		Ticks: s.ticks.Load(), RaftMessagesSent: s.raftSent.Load(), EnvelopesSent: s.envSent.Load(),
		Batches: s.batches.Load(), MessagesReceived: s.received.Load(), InboxDropped: s.inboxDropped.Load(),
		NoticesMerged: s.noticesMerged.Load(), Groups: s.groups.Load(), ActiveGroups: s.active.Load(),
		CallsSent: s.callsSent.Load(), CallsFailed: s.callsFailed.Load(), CallsServed: s.callsServed.Load(),
		CallsRefused: s.callsRefused.Load(), Announcements: s.announcements.Load(),
	}
}

// do runs fn on the loop; it fails when ctx ends or the host stops first,
// and then fn never runs, not even later: reqs is unbuffered, so fn is
// either taken by the loop (do returns nil, and the loop runs it at once)
// or not handed over at all. A proposal call that gets do's bare context
// or stop error therefore knows its proposal was never admitted
// (Transient answers 58 for it); reqs must stay unbuffered.
func (h *Host) do(ctx context.Context, fn func()) error {
	select {
	case h.reqs <- fn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-h.done:
		return ErrStopped
	}
}

func (h *Host) run() {
	defer close(h.stopped)
	ticker := time.NewTicker(h.cfg.Timing.Tick)
	defer ticker.Stop()
	defer h.noticeTimer.Stop()
	for {
		select {
		case <-h.done:
			h.shutdown()
			return
		case <-ticker.C:
			h.tick()
		case <-h.noticeTimer.C:
			h.releaseNotices()
		case in := <-h.inbox:
			h.receive(in)
		case in := <-h.unreach:
			h.unreachable(in)
		case fn := <-h.reqs:
			fn()
		}
	drain:
		for range maxDrainPerWake {
			select {
			case in := <-h.inbox:
				h.receive(in)
			case in := <-h.unreach:
				h.unreachable(in)
			case fn := <-h.reqs:
				fn()
			default:
				break drain
			}
		}
		h.processReady()
		h.flush()
	}
}

func (h *Host) shutdown() {
	for _, g := range h.groups {
		g.failAll(ErrStopped)
	}
}

// flush hands every destination its batch: one Network.Send per peer per
// loop pass.
func (h *Host) flush() {
	for to, envs := range h.outbox {
		if len(envs) == 0 {
			continue
		}
		h.outbox[to] = nil
		h.stats.batches.Add(1)
		h.stats.envSent.Add(uint64(len(envs)))
		h.cfg.Network.Send(to, envs)
	}
}

func (h *Host) enqueue(to NodeID, e transport.Envelope) {
	h.outbox[to] = append(h.outbox[to], e)
}

func (h *Host) markDirty(g *group) {
	if !g.dirty {
		g.dirty = true
		h.dirty = append(h.dirty, g)
	}
}

// raftID and nodeID convert between replica ids and raft ids.
func raftID(n NodeID) uint64  { return uint64(n) + 1 }
func nodeID(id uint64) NodeID { return NodeID(id - 1) }
