package partition

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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
}

// Plane is the partition plane. It is safe for concurrent use.
type Plane struct {
	opts Options
	log  *slog.Logger

	topicsRef atomic.Pointer[topicsHolder]

	mu     sync.RWMutex
	topics map[uint64]*topic // by incarnation; guarded by mu
	closed bool              // guarded by mu
	enc    planeCrypt        // encrypt.go

	// mode makes and unmakes the partitions' committers (mode.go).
	mode mode

	stop chan struct{}
	wg   sync.WaitGroup
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
	// commit commits the partition's writes: local.go, or its
	// replicated.Replica in cluster mode; nil while the partition is
	// stopped.
	commit commit.Committer
}

var _ catalog.Data = (*Plane)(nil)

// New returns a Plane storing data under opts.Dir and starts its
// retention loop. Partitions are opened by CreatePartitions (the metadata
// plane calls it while it replays its log at start-up).
func New(opts Options) (*Plane, error) {
	if opts.Dir == "" {
		return nil, errors.New("partition: Options.Dir is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = wire.MaxFrameSize
	}
	if opts.RetentionInterval == 0 {
		opts.RetentionInterval = DefaultRetentionInterval
	}
	p := &Plane{opts: opts, log: opts.Logger, topics: map[uint64]*topic{}, stop: make(chan struct{})}
	p.mode = localMode{p}
	if opts.Replicator != nil {
		p.mode = newReplicatedMode(p)
	}
	if opts.RetentionInterval > 0 {
		p.wg.Add(1)
		go p.retentionLoop(opts.RetentionInterval)
	}
	return p, nil
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

// storageOptions maps the topic settings to the storage options.
func (p *Plane) storageOptions(s wire.TopicSettings, id uint32) storage.Options {
	seg := int64(s.SegmentSize)
	if s.SegmentSize == 0 || s.SegmentSize > 1<<40 {
		seg = 0 // storage default
	}
	return storage.Options{
		Format:         commit.BatchFormat{PartitionID: uint64(id)},
		SegmentBytes:   seg,
		Preallocate:    s.PreallocateSegments,
		Fsync:          s.EnforceFsync,
		Held:           p.mode.held(),
		OffsetsFsync:   s.ConsumerOffsetFsync,
		FlushMessages:  uint64(s.MessagesRequiredToSave),
		FlushBytes:     s.SizeOfMessagesRequiredToSave,
		FlushInterval:  p.opts.FlushInterval,
		MaxRecordBytes: p.opts.MaxFrameBytes,
		VerifySealed:   p.opts.VerifySealed,
		Clock:          p.opts.Clock,
		Observer:       p.opts.StorageObserver,
	}
}

// CreatePartitions implements catalog.Data: it opens (creating or
// recovering) the partitions' logs. Existing open partitions are left as
// they are. A partition whose data is corrupt is kept stopped (logged,
// requests to it fail) and is not an error, so start-up continues.
func (p *Plane) CreatePartitions(t catalog.TopicRef, ids []uint32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return storage.ErrClosed
	}
	tp := p.topics[t.Incarnation]
	if tp == nil {
		tp = &topic{ref: t, dir: p.TopicDir(t), parts: map[uint32]*partition{}, unopened: map[uint32]struct{}{}}
		p.topics[t.Incarnation] = tp
	}
	tp.ref.Settings = t.Settings
	var errs []error
	for _, id := range ids {
		if part, ok := tp.parts[id]; ok {
			// Open already (a metadata snapshot restored): a purge it
			// names may be new.
			if part.commit != nil {
				part.commit.WantPurge(t.PurgedAt)
			}
			continue
		}
		part := &partition{id: id, dir: p.PartitionDir(t, id), window: commit.NewWindow(p.opts.WindowClients)}
		log, err := storage.Open(part.dir, p.storageOptions(t.Settings, id))
		if err != nil {
			if errors.Is(err, storage.ErrCorrupt) {
				p.log.Error("partition stopped: its data is corrupt and will not be served",
					"stream", t.StreamID, "topic", t.TopicID, "partition", id, "dir", part.dir, "err", err)
				part.broken = err
				tp.parts[id] = part
				continue
			}
			errs = append(errs, fmt.Errorf("open partition %d/%d/%d: %w", t.StreamID, t.TopicID, id, err))
			tp.unopened[id] = struct{}{}
			continue
		}
		if !p.attachCrypt(tp, part, log, &errs) {
			continue
		}
		delete(tp.unopened, id)
		part.log = log
		tp.parts[id] = part
		part.commit = p.mode.open(tp.ref, part)
		part.commit.WantPurge(t.PurgedAt)
	}
	return errors.Join(errs...)
}

// DeletePartitions implements catalog.Data: it closes the partitions and
// removes their data and offsets.
func (p *Plane) DeletePartitions(t catalog.TopicRef, ids []uint32) error {
	p.mode.drop(t, ids)
	p.mu.Lock()
	tp := p.topics[t.Incarnation]
	var victims []*partition
	for _, id := range ids {
		if tp != nil {
			delete(tp.unopened, id)
			if part, ok := tp.parts[id]; ok {
				victims = append(victims, part)
				delete(tp.parts, id)
			}
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, part := range victims {
		if part.log != nil {
			if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
				p.log.Warn("close deleted partition", "dir", part.dir, "err", err)
			}
		}
	}
	for _, id := range ids {
		if err := os.RemoveAll(p.PartitionDir(t, id)); err != nil {
			errs = append(errs, fmt.Errorf("remove partition %d: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// DeleteTopic implements catalog.Data: it closes every partition of the
// topic incarnation and removes its directory (and the stream directory
// when it becomes empty).
func (p *Plane) DeleteTopic(t catalog.TopicRef) error {
	p.mu.Lock()
	tp := p.topics[t.Incarnation]
	delete(p.topics, t.Incarnation)
	p.mu.Unlock()
	if tp != nil {
		ids := make([]uint32, 0, len(tp.parts))
		for id := range tp.parts {
			ids = append(ids, id)
		}
		p.mode.drop(t, ids)
		for _, part := range tp.parts {
			if part.log != nil {
				if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					p.log.Warn("close deleted partition", "dir", part.dir, "err", err)
				}
			}
		}
	}
	if err := os.RemoveAll(p.TopicDir(t)); err != nil {
		return fmt.Errorf("remove topic %d/%d: %w", t.StreamID, t.TopicID, err)
	}
	p.removeIfEmpty(filepath.Join(p.opts.Dir, strconv.FormatUint(uint64(t.StreamID), 10), topicsDirName))
	p.removeIfEmpty(filepath.Join(p.opts.Dir, strconv.FormatUint(uint64(t.StreamID), 10)))
	return nil
}

// removeIfEmpty removes an empty directory; anything else is left alone.
func (p *Plane) removeIfEmpty(dir string) {
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return // not empty, or busy: fine
	}
}

// PurgeTopic implements catalog.Data: every partition of the topic loses
// its messages and consumer offsets; offsets restart at 0. In cluster mode
// the purge goes through each partition's raft log (replicated/purge.go).
func (p *Plane) PurgeTopic(t catalog.TopicRef) error {
	var errs []error
	for _, part := range p.topicParts(t) {
		if part.commit != nil {
			errs = append(errs, part.commit.Purge(t.PurgedAt))
		}
	}
	return errors.Join(errs...)
}

// DeleteSegments implements catalog.Data: it removes the oldest count
// sealed segments of one partition. An unknown partition is not an error
// (idempotence); the metadata plane checks existence.
func (p *Plane) DeleteSegments(t catalog.TopicRef, partitionID uint32, count uint32) error {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.commit == nil {
		return nil
	}
	return part.commit.DeleteSegments(int(min(count, 1<<30)))
}

// DeleteGroupOffsets implements catalog.Data: the group's offsets are
// removed from every partition of the topic.
func (p *Plane) DeleteGroupOffsets(t catalog.TopicRef, group uint32) error {
	var errs []error
	for _, part := range p.topicParts(t) {
		if part.commit != nil {
			errs = append(errs, part.commit.DeleteGroupOffsets(group))
		}
	}
	return errors.Join(errs...)
}

// PartitionStats implements catalog.Data.
func (p *Plane) PartitionStats(t catalog.TopicRef, partitionID uint32) catalog.PartitionStats {
	part := p.lookup(t.Incarnation, partitionID)
	if part == nil || part.log == nil {
		return catalog.PartitionStats{}
	}
	st := part.log.Stats()
	out := catalog.PartitionStats{Messages: st.Messages, SizeBytes: st.Bytes, Segments: uint32(st.Segments)}
	if st.NextOffset > 0 {
		out.CurrentOffset = st.NextOffset - 1
	}
	return out
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

// Flush syncs every open partition.
func (p *Plane) Flush() error {
	var errs []error
	p.mu.RLock()
	var parts []*partition
	for _, tp := range p.topics {
		for _, part := range tp.parts {
			parts = append(parts, part)
		}
	}
	p.mu.RUnlock()
	for _, part := range parts {
		if part.log != nil {
			if err := part.log.Flush(); err != nil && !errors.Is(err, storage.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops retention, then flushes and closes every partition. Call it
// after the transports stopped serving.
func (p *Plane) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	topics := p.topics
	p.topics = map[uint64]*topic{}
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	p.mode.close()
	var errs []error
	for _, tp := range topics {
		for _, part := range tp.parts {
			if part.log != nil {
				if err := part.log.Close(); err != nil && !errors.Is(err, storage.ErrClosed) {
					errs = append(errs, fmt.Errorf("close partition %s: %w", part.dir, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}
