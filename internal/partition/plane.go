package partition

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/encryption"
	"github.com/iggo-dev/iggo/internal/partition/commit"
	"github.com/iggo-dev/iggo/internal/partition/replicated"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/internal/tier"
	"github.com/iggo-dev/iggo/wire"
)

// Directory names under the data root (config.md: system.stream.path,
// system.topic.path, system.partition.path defaults).
const (
	StreamsDirName    = "streams"
	topicsDirName     = "topics"
	partitionsDirName = "partitions"
)

// DefaultRetentionInterval is data_maintenance.messages.interval.
const DefaultRetentionInterval = time.Minute

// Forwarder is the plane's seam to the other nodes of a cluster
// (Options.Forwarder; nil on a single node).
type Forwarder interface {
	// Self is this node's replica id.
	Self() replication.NodeID
	// LeaderOf returns the leader of group g: this node's own replica's
	// view when it knows one, else the leader directory.
	LeaderOf(g replication.GroupID) (replication.NodeID, bool)
	// AwaitLeader waits until a leader of g is known (LeaderOf).
	AwaitLeader(ctx context.Context, g replication.GroupID) (replication.NodeID, error)
	// AwaitReadable waits, at most within, until this node's replica of g
	// leads and has applied an entry of its own term
	// (replication.Host.AwaitReadable), so that a read served from its
	// applied state sees every acknowledged write; an error when it does
	// not in time.
	AwaitReadable(ctx context.Context, g replication.GroupID, within time.Duration) error
	// Forward sends a forwarded request to node to and returns the
	// payload ServeForwarded answered there.
	Forward(ctx context.Context, to replication.NodeID, payload []byte) ([]byte, error)
}

// Options configure a Plane.
type Options struct {
	// Dir is the root of partition data ({system.path}/streams).
	Dir string
	// Logger receives recovery and retention events (slog.Default if nil).
	Logger *slog.Logger
	// Clock stamps batches and drives retention by age (time.Now if nil).
	Clock func() time.Time
	// MaxFrameBytes is the transport's frame limit
	// (message_bus.max_message_size); it bounds one stored record and one
	// poll reply. Default wire.MaxFrameSize.
	MaxFrameBytes int64
	// RetentionInterval is how often retention runs
	// (data_maintenance.messages.interval); negative disables the loop
	// (RunRetention still works). Zero means DefaultRetentionInterval.
	RetentionInterval time.Duration
	// FlushInterval is passed to storage.Options.FlushInterval.
	FlushInterval time.Duration
	// VerifySealed makes recovery verify every record of sealed segments.
	VerifySealed bool
	// WindowClients bounds the clients one partition's duplicate window
	// tracks (session.DefaultPartitionWindowClients if 0).
	WindowClients int
	// StorageObserver is passed to storage.Options.Observer (metrics).
	StorageObserver storage.Observer
	// Cipher encrypts messages at rest (system.encryption); nil disables
	// it. See encrypt.go.
	Cipher *encryption.Cipher
	// Replicator, when set, puts the plane in cluster mode: every
	// partition is a raft group on it (internal/partition/replicated).
	// nil is single node.
	Replicator replicated.Replicator
	// LogStorage opens the raft log of a partition group in dir
	// (<partition dir>/raft); nil keeps the logs in memory
	// (replication.NewMemoryLog). Cluster mode only.
	LogStorage func(dir string) (replication.LogStorage, error)
	// ClusterID is the header's cluster field of committed replies in
	// cluster mode.
	ClusterID wire.Uint128
	// Forwarder, in cluster mode, routes partition requests to the node
	// whose replica leads the partition (forward.go); nil serves every
	// request here.
	Forwarder Forwarder
	// RebuildObserver, when set, is told about damaged replicas and their
	// rebuilds (rebuild.go; metrics).
	RebuildObserver RebuildObserver
	// ScrubInterval is the period of the background scrubber
	// (storage.scrub_interval, scrub.go): one pass over every partition
	// per interval; 0 disables it (RunScrub and VERIFY_PARTITION still
	// work).
	ScrubInterval time.Duration
	// ScrubRate bounds the scrubber's reads in bytes per second
	// (storage.scrub_rate); 0 computes it from the data held and the
	// interval (MinAutoScrubRate..MaxAutoScrubRate).
	ScrubRate int64
	// ScrubObserver receives the scrubber's counts (metrics); nil counts
	// nothing.
	ScrubObserver ScrubObserver
	// OnDamage, when set, is told of the damage the scrubber or
	// VERIFY_PARTITION newly found in a partition, after the quarantine,
	// the log line, the metrics and (cluster mode) the start of the
	// replica's rebuild.
	OnDamage DamageHook
	// Tier, when set, is the remote tier (tiered_storage, single node
	// only): sealed segments are uploaded to a bucket and read back from
	// it (tiered.go).
	Tier *tier.Manager
}

// The plane is the metadata plane's catalog.Data: the life of topic
// incarnations and partitions, purges, segment removals and group-offset
// deletions, each handed to the partitions' committers.
var _ catalog.Data = (*Plane)(nil)

// The plane holds partitions on a subset of the nodes in cluster mode.
var _ catalog.Placer = (*Plane)(nil)

// Plane is the partition plane. It is safe for concurrent use.
type Plane struct {
	opts Options
	log  *slog.Logger

	topicsRef atomic.Pointer[topicsHolder]
	// remoteRR holds the Balanced counters (*atomic.Uint32, by topic
	// incarnation) of topics this node holds no partition of, whose sends
	// it forwards (cluster mode).
	remoteRR sync.Map

	mu     sync.RWMutex
	topics map[uint64]*topic // by incarnation; guarded by mu
	closed bool              // guarded by mu
	enc    planeCrypt        // encrypt.go

	// mode makes and unmakes the partitions' committers (mode.go).
	mode mode
	// damaged reacts to damage found in a replica while it runs (a read,
	// a scrub): RebuildDamaged, set by New. It is a field so that the
	// files opening partitions need not know the rebuild that reacts.
	damaged func(t catalog.TopicRef, id uint32, found []storage.Damage)
	// rebuilding holds the partition groups whose damaged replica is
	// being rebuilt here, with the rebuild's number (rebuild.go); guarded
	// by mu.
	rebuilding map[replication.GroupID]uint64
	// rebuildGen numbers the rebuilds (the values of rebuilding);
	// guarded by mu.
	rebuildGen uint64

	stop chan struct{}
	// stopScrub ends the scrubber's pass in progress (Close).
	stopScrub context.CancelFunc
	wg        sync.WaitGroup
}

// topicsHolder boxes the catalog.Topics interface for atomic.Pointer.
type topicsHolder struct{ t catalog.Topics }

// topic is one open topic incarnation.
type topic struct {
	ref catalog.TopicRef // guarded by Plane.mu (Settings may be updated)
	dir string
	// rr is the Balanced round-robin counter (semantics.md §4.1).
	rr    atomic.Uint32
	parts map[uint32]*partition // guarded by Plane.mu
	// unopened holds the ids CreatePartitions could not open (an I/O
	// error, not corruption): they are live for SweepOrphans, which must
	// never remove their data. Guarded by Plane.mu.
	unopened map[uint32]struct{}
}

// partition is one open (or stopped) partition.
type partition struct {
	id  uint32
	dir string
	// log is nil when the partition is stopped (broken is set).
	log    *storage.Partition
	broken error
	// window is the duplicate window; its owner is commit.
	window *commit.Window
	// traffic counts messages and bytes in and out (observe.go).
	traffic traffic
	// crypt is the encryption state; nil for a plaintext partition (encrypt.go).
	crypt *partCrypt
	// tier is the partition in the remote tier; nil without one
	// (tiered.go). In cluster mode replica is the partition's replica
	// once the mode has made it, for the remote tier's groupTier.
	tier    *tier.Partition
	replica atomic.Pointer[replicated.Replica]
	// commit commits the partition's writes: local.go, or its
	// replicated.Replica in cluster mode; nil while the partition is
	// stopped.
	commit commit.Committer
	// offsetsFull is set while consumer-offset writes find the disk full,
	// so that is logged once per episode (diskerr.go).
	offsetsFull atomic.Bool
}

// SetTopics installs the metadata plane's catalog.Topics. It must be
// called before requests are served.
func (p *Plane) SetTopics(t catalog.Topics) { p.topicsRef.Store(&topicsHolder{t: t}) }

func (p *Plane) catalog() catalog.Topics {
	if h := p.topicsRef.Load(); h != nil {
		return h.t
	}
	return nil
}

// TopicDir returns the directory of a topic incarnation.
func (p *Plane) TopicDir(t catalog.TopicRef) string {
	return filepath.Join(p.opts.Dir, strconv.FormatUint(uint64(t.StreamID), 10), topicsDirName,
		strconv.FormatUint(uint64(t.TopicID), 10)+"-"+strconv.FormatUint(t.Incarnation, 10))
}

// PartitionDir returns the directory of one partition.
func (p *Plane) PartitionDir(t catalog.TopicRef, id uint32) string {
	return filepath.Join(p.TopicDir(t), partitionsDirName, strconv.FormatUint(uint64(id), 10))
}

// topicParts returns the open partitions of a topic incarnation.
func (p *Plane) topicParts(t catalog.TopicRef) []*partition {
	p.mu.RLock()
	defer p.mu.RUnlock()
	tp := p.topics[t.Incarnation]
	if tp == nil {
		return nil
	}
	out := make([]*partition, 0, len(tp.parts))
	for _, part := range tp.parts {
		out = append(out, part)
	}
	return out
}

// lookup returns an open partition or nil.
func (p *Plane) lookup(incarnation uint64, id uint32) *partition {
	p.mu.RLock()
	defer p.mu.RUnlock()
	tp := p.topics[incarnation]
	if tp == nil {
		return nil
	}
	return tp.parts[id]
}

// lookupTopic returns an open topic or nil.
func (p *Plane) lookupTopic(incarnation uint64) *topic {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.topics[incarnation]
}

// mode is what differs between a single node and a cluster member at the
// level of the plane: how a partition's committer is made and unmade.
// Everything a write does goes through the partition's commit.Committer.
type mode interface {
	// held reports whether storage keeps appended records invisible
	// until revealed (storage.Options.Held: a replicated log reveals
	// committed records only).
	held() bool
	// holds reports whether this node holds a partition whose replica
	// list is replicas (nil: every node).
	holds(replicas []uint8) bool
	// open returns the committer of a partition CreatePartitions has just
	// opened (Plane.mu held; it must not block): replicas is its replica
	// list, joining whether a replica move just added this node to it.
	open(t catalog.TopicRef, part *partition, replicas []uint8, joining bool) commit.Committer
	// place records the new replica list of a partition this node keeps
	// holding (a move changed it).
	place(t catalog.TopicRef, id uint32, replicas []uint8)
	// drop forgets the committers of partitions being deleted, before
	// their files go.
	drop(t catalog.TopicRef, ids []uint32)
	// await waits until the purges and offset deletions wanted by the
	// given partitions have applied here (catalog.Awaiter).
	await(ctx context.Context, t catalog.TopicRef, ids []uint32) error
	// close ends the mode's goroutines (Plane.Close).
	close()
}

// has reports whether partition id is in the ascending list ids.
func has(ids []uint32, id uint32) bool {
	_, found := slices.BinarySearch(ids, id)
	return found
}
