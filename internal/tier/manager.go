package tier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Bucket is what the remote tier needs of the object store
// (*objstore.Store).
type Bucket interface {
	// Key returns the full key of a key relative to the configured prefix.
	Key(rel string) string
	// Put uploads an object and verifies what the store kept.
	Put(ctx context.Context, key string, r io.ReaderAt, size int64, meta map[string]string) (objstore.Info, error)
	// ReadRange reads len(p) bytes of an object from off.
	ReadRange(ctx context.Context, key string, off int64, p []byte) error
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every object under a full key prefix.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
	// AbortIncomplete aborts the multipart uploads under a full key
	// prefix started before a time.
	AbortIncomplete(ctx context.Context, prefix string, before time.Time) (int, error)
}

// Options configure a Manager.
type Options struct {
	// Bucket is the object store. Required.
	Bucket Bucket
	// StateDir keeps the manager's own files (the queue of prefixes to
	// delete). Required.
	StateDir string
	// CacheDir and CacheBytes are the read cache's directory and bound.
	CacheDir   string
	CacheBytes int64
	// ChunkBytes is the size of the pieces remote segments are read and
	// cached in (aligned to records); 0 is DefaultChunkBytes.
	ChunkBytes int64
	// UploadConcurrency bounds the segments uploaded at once, across
	// partitions and within one (oldest first); 0 is 2.
	UploadConcurrency int
	// UploadInterval is how often partitions are looked at for sealed
	// segments to upload and local copies to drop; 0 is one second.
	UploadInterval time.Duration
	// RequestTimeout bounds one upload, read or delete; 0 is one minute.
	RequestTimeout time.Duration
	// LocalRetention is the default local retention of a partition.
	LocalRetention LocalRetention
	// Logger receives the tier's log lines; nil discards them.
	Logger *slog.Logger
	// Clock returns the current time for local retention by age (the
	// log's clock); nil is time.Now. Backoff and warnings use real time.
	Clock func() time.Time
	// Claim, when set, is called before the first upload and again on
	// each pass until it succeeds (the bucket prefix must belong to this
	// server: objstore.Claim). Nothing is uploaded or deleted before.
	Claim func(ctx context.Context) error
	// IncompleteAge: once claimed, multipart uploads under the prefix
	// that started this long before the manager did are aborted (what a
	// crash or an outage left). 0 aborts every one older than the
	// manager (a single node: none is its own); a cluster passes a bound
	// past any upload of another node still in flight.
	IncompleteAge time.Duration
}

// DefaultChunkBytes is the default size of a cached piece of a remote
// segment.
const DefaultChunkBytes = 4 << 20

// warnEvery spaces the warnings about a failing object store.
const warnEvery = time.Minute

// Manager runs the remote tier of one server: it uploads sealed segments
// of the partitions opened through it, drops their local copies by the
// local retention, deletes objects retention and deletions no longer
// need, and serves remote reads through its cache.
type Manager struct {
	opts   Options
	bucket Bucket
	cache  *Cache
	log    *slog.Logger
	met    metrics

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}
	// slots bounds the segment uploads in flight across partitions.
	slots chan struct{}

	// claimed is set once Options.Claim succeeded (loop goroutine only).
	claimed bool
	// started is when the manager started.
	started time.Time

	mu       sync.Mutex
	parts    map[*Partition]struct{}
	prefixes []string // full key prefixes waiting for deletion
	lastWarn time.Time
	closed   bool
}

// NewManager starts the remote tier: it opens the cache and the queue
// of deletions and starts the background loop.
func NewManager(opts Options) (*Manager, error) {
	if opts.Bucket == nil || opts.StateDir == "" {
		return nil, errors.New("tier: Options.Bucket and Options.StateDir are required")
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = DefaultChunkBytes
	}
	if opts.UploadConcurrency <= 0 {
		opts.UploadConcurrency = 2
	}
	if opts.UploadInterval <= 0 {
		opts.UploadInterval = time.Second
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.CacheDir == "" {
		opts.CacheDir = filepath.Join(opts.StateDir, "cache")
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("tier state dir: %w", err)
	}
	prefixes, err := loadPrefixes(filepath.Join(opts.StateDir, prefixQueueName))
	if err != nil {
		return nil, err
	}
	cache, err := OpenCache(opts.CacheDir, opts.CacheBytes)
	if err != nil {
		return nil, fmt.Errorf("tier cache: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, bucket: opts.Bucket, cache: cache, log: opts.Logger,
		ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1), slots: make(chan struct{}, opts.UploadConcurrency),
		parts: map[*Partition]struct{}{}, prefixes: prefixes, started: time.Now()}
	m.wg.Add(1)
	go m.loop()
	return m, nil
}

// Open attaches the remote tier to an open local log: it loads the
// partition's manifest and starts uploading its sealed segments. dir is
// the partition directory, format the log's record format.
//
// cl is nil on a single node; in a cluster it connects the partition to
// its raft group (see Cluster).
func (m *Manager) Open(ref PartitionRef, dir string, log *storage.Partition, format storage.Format, keep LocalRetention, cl Cluster) (*Partition, error) {
	man, err := loadManifest(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, remoteIndexDir), 0o755); err != nil {
		return nil, fmt.Errorf("tier: %w", err)
	}
	p := &Partition{m: m, ref: ref, dir: dir, log: log, format: format, cl: cl}
	p.ctx, p.cancel = context.WithCancel(m.ctx)
	p.man.Store(&man)
	p.keep.Store(&keep)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		p.cancel()
		return nil, errors.New("tier: manager closed")
	}
	m.parts[p] = struct{}{}
	m.poke()
	return p, nil
}

// forget stops the background work on p.
func (m *Manager) forget(p *Partition) {
	m.mu.Lock()
	delete(m.parts, p)
	m.mu.Unlock()
	p.cancel()
	// Wait for an upload of p in flight: its caller closes the log next.
	for {
		m.mu.Lock()
		busy := p.busy
		m.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// poke asks the loop for a pass now. Caller holds m.mu or not.
func (m *Manager) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Notify asks for a pass soon (a segment was sealed, a topic's options
// changed).
func (m *Manager) Notify() { m.poke() }

// Close stops the background work, waiting for uploads in flight to end
// (their context is cancelled), and closes the cache.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	return m.cache.Close()
}

// loop runs a pass every UploadInterval or when poked.
func (m *Manager) loop() {
	defer m.wg.Done()
	t := time.NewTicker(m.opts.UploadInterval)
	defer t.Stop()
	for {
		m.pass()
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		case <-m.kick:
		}
	}
}

// pass uploads what is pending (UploadConcurrency partitions at a time),
// drops local copies past the local retention and deletes what waits for
// deletion.
func (m *Manager) pass() {
	if !m.claim() {
		return
	}
	now := time.Now()
	m.mu.Lock()
	var ready []*Partition
	for p := range m.parts {
		if !p.busy && !now.Before(p.notBefore) {
			p.busy = true
			ready = append(ready, p)
		}
	}
	m.mu.Unlock()
	sem := make(chan struct{}, m.opts.UploadConcurrency)
	var wg sync.WaitGroup
	for _, p := range ready {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := p.work(p.ctx)
			m.mu.Lock()
			p.busy = false
			if err != nil && p.ctx.Err() == nil {
				p.failures++
				p.notBefore = time.Now().Add(backoff(p.failures))
				m.warn("remote tier: partition work failed; local data is kept and the work is retried",
					"partition", p.ref, "attempts", p.failures, "retry_in", backoff(p.failures), "err", err)
			} else if err == nil {
				p.failures = 0
			}
			m.mu.Unlock()
		}()
	}
	wg.Wait()
	m.deletePrefixes()
}

// claim runs Options.Claim until it succeeds; false while it has not.
func (m *Manager) claim() bool {
	if m.claimed {
		return true
	}
	if m.opts.Claim == nil {
		m.claimed = true
		m.abortIncomplete()
		return true
	}
	ctx, cancel := m.requestCtx(m.ctx)
	err := m.opts.Claim(ctx)
	cancel()
	if err != nil {
		if m.ctx.Err() == nil {
			m.mu.Lock()
			m.warn("remote tier: the bucket prefix cannot be claimed; nothing is uploaded until it is", "err", err)
			m.mu.Unlock()
		}
		return false
	}
	m.claimed = true
	m.abortIncomplete()
	return true
}

// abortIncomplete aborts the multipart uploads a crash or an outage left
// under the prefix (Options.IncompleteAge); a failure is logged, and the
// uploads stay until the next start.
func (m *Manager) abortIncomplete() {
	ctx, cancel := m.requestCtx(m.ctx)
	defer cancel()
	n, err := m.bucket.AbortIncomplete(ctx, m.bucket.Key("streams/"), m.started.Add(-m.opts.IncompleteAge))
	switch {
	case err != nil && m.ctx.Err() == nil:
		m.log.Warn("remote tier: unfinished uploads left by an earlier run could not be aborted", "err", err)
	case n > 0:
		m.log.Info("remote tier: unfinished uploads left by an earlier run aborted", "uploads", n)
	}
}

// backoff is the wait before the n-th retry: 1 s doubling to 1 min.
func backoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// warn logs at WARN at most once per warnEvery; the rest are debug lines
// (the metrics count every failure). Caller holds m.mu.
func (m *Manager) warn(msg string, args ...any) {
	m.met.failures.Add(1)
	now := time.Now()
	if now.Sub(m.lastWarn) >= warnEvery || m.lastWarn.IsZero() {
		m.lastWarn = now
		m.log.Warn(msg, args...)
		return
	}
	m.log.Debug(msg, args...)
}

// requestCtx bounds one request to the bucket.
func (m *Manager) requestCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.opts.RequestTimeout)
}

// LocalRetentionFor resolves a topic's local_retention_size (bytes) and
// local_retention_age (µs) options: 0 takes the server's default
// (Options.LocalRetention), u64::MAX keeps everything local or sets no
// age rule.
func (m *Manager) LocalRetentionFor(size, age uint64) LocalRetention {
	r := m.opts.LocalRetention
	if size != 0 {
		r.Bytes = size
	}
	switch {
	case age == ^uint64(0):
		r.Age = 0
	case age != 0:
		r.Age = time.Duration(min(age, uint64(1<<63-1)/1000)) * time.Microsecond
	}
	return r
}
