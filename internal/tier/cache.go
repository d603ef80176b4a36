package tier

// The chunk cache.
//
// A chunk is an immutable byte range [off, off+n) of one remote object,
// named by the object's key and off. The caller chooses the boundaries
// (aligned to records); the same (key, off) always means the same bytes,
// so a chunk is identified by (key, off) and n is checked, not keyed on.
// Each cached chunk is one file in the cache directory, named by the hex
// of the 128-bit XXH3 of the key seeded with off, plus ".chunk", and is
// kept open for as long as it is cached (one descriptor per chunk).
//
// Get returns a chunk pinned: it is not evicted while pinned, and if it
// leaves the index all the same (Drop, Close) its open descriptor stays
// readable; the descriptor is closed when the chunk is both unpinned and
// out of the index. Unpinned indexed chunks sit on an LRU list, most
// recently released at the front; after an insert and after a last
// Release the least recently used ones are evicted until the indexed
// chunks total at most maxBytes. Pinned chunks count towards the total
// but cannot be evicted, so while many are pinned the total may exceed
// the bound.
//
// A miss starts one fetch per chunk (singleflight): the fetch runs in its
// own goroutine, which fills a pooled buffer, verifies it, writes it to a
// temporary file and renames that into place; every Get of the chunk
// that arrives meanwhile waits for the same fetch. Renames and unlinks of
// chunk files happen under the cache mutex, so a chunk file exists
// exactly while its chunk is in the index.
//
// Context: the fetch does not run under any one caller's context. It
// runs under the first caller's values (trace spans, loggers) without its
// deadline or cancellation, and it is canceled when the cache closes or
// when every Get waiting for it has given up (its ctx ended) — so a lone
// caller's deadline does bound its fetch, while a caller that leaves
// never fails a fetch that others still wait for. A prefetch is never
// abandoned that way; only Close (or Drop of its key) cancels it. Per
// request timeouts belong in the Fetcher (the object store client).
//
// The cache is emptied at open: nothing on disk says whether a file was
// completely written or still matches the object it came from (no fsync,
// no manifest), and rebuilding from the bucket is cheap compared with
// serving a torn chunk.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/zeebo/xxh3"
)

// ErrCacheClosed is returned by Get on a closed Cache, and to the waiters
// of a fetch that Close interrupted.
var ErrCacheClosed = errors.New("tier: cache closed")

// errCacheAbandoned is the cancellation cause of a fetch that every
// waiter left, or whose key was dropped while nobody waited for it.
var errCacheAbandoned = errors.New("tier: chunk fetch abandoned")

const (
	// cacheChunkExt and cacheTempExt are the suffixes of chunk files and of
	// chunk files being written; OpenCache removes both.
	cacheChunkExt = ".chunk"
	cacheTempExt  = ".tmp"

	// cachePrefetchLimit is how many prefetches may run at a time.
	cachePrefetchLimit = 2

	// Fetch buffers are pooled in power-of-two size classes from
	// 1<<cacheBufMinShift to 1<<cacheBufMaxShift bytes; larger chunks get
	// a buffer of their own that is left to the garbage collector.
	cacheBufMinShift = 12
	cacheBufMaxShift = 26
)

// CacheStats are the counters of a Cache.
type CacheStats struct {
	// Hits and Misses count Gets that found the chunk cached and Gets
	// that did not (including those that joined a fetch already running,
	// a prefetch's among them). Prefetch counts neither.
	Hits, Misses uint64
	// Fetched and FetchedBytes count successful fetches (by Get and by
	// Prefetch) and their bytes.
	Fetched, FetchedBytes uint64
	// Evicted and EvictedBytes count chunks evicted to keep the bound
	// (not those removed by Drop or Close).
	Evicted, EvictedBytes uint64
	// Failures counts fetches that ended in an error of the Fetcher, the
	// Verifier or the local disk; fetches canceled because every waiter
	// left or the cache closed are not counted.
	Failures uint64
	// Bytes and Chunks are the size and number of the chunks in the
	// index, pinned or not.
	Bytes  int64
	Chunks int
}

// Fetcher reads exactly len(p) bytes of the object at its offset off into
// p. It must not keep p after it returns, and should return when ctx is
// done.
type Fetcher func(ctx context.Context, p []byte) error

// Verifier checks fetched bytes before they are cached; an error is
// returned to Get's caller (wrapped) and nothing is cached. It must not
// keep p after it returns.
type Verifier func(p []byte) error

// chunkID identifies a chunk: the key of its object and its offset.
type chunkID struct {
	key string
	off int64
}

// cacheFlight is a fetch in progress. Its fields other than done, ch and
// err are guarded by Cache.mu; ch and err are written before done is
// closed and read after.
type cacheFlight struct {
	id         chunkID
	n          int64
	background bool // a prefetch: not abandoned when its waiters leave
	detached   bool // out of Cache.flights (abandoned or dropped): its chunk is not indexed
	finished   bool
	waiters    int // Gets waiting; each gets one pin of the chunk
	cancel     context.CancelCauseFunc

	done chan struct{}
	ch   *Chunk
	err  error
}

// Cache is a bounded on-disk cache of chunks of remote objects. Safe for
// concurrent use.
type Cache struct {
	dir      string
	maxBytes int64

	// prefetchLimit is how many prefetches may run at a time.
	prefetchLimit int

	base     context.Context // canceled by Close, which cancels every fetch
	stopBase context.CancelCauseFunc
	wg       sync.WaitGroup // fetch goroutines

	bufs [cacheBufMaxShift - cacheBufMinShift + 1]sync.Pool // of *[]byte, by size class

	mu          sync.Mutex
	closed      bool
	index       map[string]map[int64]*Chunk // by key, then off
	lru         chunkList                   // indexed unpinned chunks, least recently used at the back
	flights     map[chunkID]*cacheFlight
	prefetching int
	stats       CacheStats // Bytes and Chunks describe index
}

// Chunk is a pinned cached chunk.
type Chunk struct {
	c    *Cache
	id   chunkID
	n    int64
	f    *os.File
	path string // the chunk file's name while indexed

	// Guarded by c.mu.
	pins       int
	indexed    bool
	prev, next *Chunk // links of c.lru; set only while on it
	onLRU      bool
}

// OpenCache opens the cache in dir (created if needed; files left by an
// earlier run are removed at open — the cache is not trusted across
// restarts), bounded to maxBytes of chunk files. Only chunk files and
// their temporary files are removed; other files in dir are left alone.
// Two caches must not share a directory.
func OpenCache(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("tier: cache bound %d bytes: must be positive", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("tier: open cache: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tier: open cache: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, cacheChunkExt) || strings.HasSuffix(name, cacheTempExt)) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("tier: open cache: remove stale file: %w", err)
		}
	}
	base, stop := context.WithCancelCause(context.Background())
	return &Cache{
		dir:           dir,
		maxBytes:      maxBytes,
		prefetchLimit: cachePrefetchLimit,
		base:          base,
		stopBase:      stop,
		index:         make(map[string]map[int64]*Chunk),
		flights:       make(map[chunkID]*cacheFlight),
	}, nil
}

// Get returns the chunk [off, off+n) of the object key, pinned: it stays
// open and is not evicted (or, if Drop or Close removes it from the
// index, its open file stays readable) until Release. On a miss the
// chunk is fetched with fetch into a buffer, checked with verify (nil
// skips the check), written to a temporary file in the cache directory
// and renamed into place, inserted, and least recently used unpinned
// chunks are evicted down to the bound. Concurrent Gets of one chunk
// share one fetch; the fetch and verify functions of the Get that
// started it are used.
//
// ctx bounds only this caller's wait. The fetch runs with the values of
// the ctx of the Get that started it but not its deadline; it is
// canceled when every Get waiting for it has returned because of its ctx,
// or when the cache closes. A fetch, verify or disk error is returned
// wrapped with the key and range; an ended ctx returns its error,
// wrapped likewise.
//
// The same (key, off) must always be asked with the same n; a mismatch
// with a cached or fetching chunk is an error.
func (c *Cache) Get(ctx context.Context, key string, off, n int64, fetch Fetcher, verify Verifier) (*Chunk, error) {
	if err := cacheCheckRange(key, off, n); err != nil {
		return nil, err
	}
	if fetch == nil {
		return nil, fmt.Errorf("tier: cache get %s [%d, %d): nil fetcher", key, off, off+n)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrCacheClosed
	}
	if ch := c.index[key][off]; ch != nil {
		if ch.n != n {
			c.mu.Unlock()
			return nil, cacheLenMismatch(key, off, n, ch.n)
		}
		c.stats.Hits++
		c.pinLocked(ch)
		c.mu.Unlock()
		return ch, nil
	}
	id := chunkID{key, off}
	fl := c.flights[id]
	if fl != nil && fl.n != n {
		c.mu.Unlock()
		return nil, cacheLenMismatch(key, off, n, fl.n)
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("tier: cache get %s [%d, %d): %w", key, off, off+n, err)
	}
	c.stats.Misses++
	if fl == nil {
		fctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		fl = c.startLocked(fctx, cancel, id, n, fetch, verify, false)
	}
	fl.waiters++
	c.mu.Unlock()

	select {
	case <-fl.done:
	case <-ctx.Done():
		c.mu.Lock()
		if !fl.finished {
			fl.waiters--
			if fl.waiters == 0 && !fl.background {
				c.detachLocked(fl)
				fl.cancel(errCacheAbandoned)
			}
			c.mu.Unlock()
			return nil, fmt.Errorf("tier: cache get %s [%d, %d): %w", key, off, off+n, ctx.Err())
		}
		c.mu.Unlock()
		<-fl.done // finished: the result holds a pin for this waiter
	}
	if fl.err != nil {
		return nil, fl.err
	}
	return fl.ch, nil
}

// Prefetch starts fetching the chunk in the background if it is not
// cached or being fetched, at most c.prefetchLimit (2) prefetches at a
// time (extra requests are dropped); errors are counted, not returned.
// A cached unpinned chunk is moved to the front of the LRU list, as it
// is about to be read. A running prefetch is canceled only by Close or
// by Drop of its key (when no Get waits for it).
func (c *Cache) Prefetch(key string, off, n int64, fetch Fetcher, verify Verifier) {
	if fetch == nil || cacheCheckRange(key, off, n) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if ch := c.index[key][off]; ch != nil {
		if ch.onLRU {
			c.lru.remove(ch)
			c.lru.pushFront(ch)
		}
		return
	}
	id := chunkID{key, off}
	if c.flights[id] != nil || c.prefetching >= c.prefetchLimit {
		return
	}
	c.prefetching++
	fctx, cancel := context.WithCancelCause(context.Background())
	c.startLocked(fctx, cancel, id, n, fetch, verify, true)
}

// startLocked registers a fetch of the chunk id and starts it under
// fctx, which cancel cancels (as does Close).
func (c *Cache) startLocked(fctx context.Context, cancel context.CancelCauseFunc, id chunkID, n int64, fetch Fetcher, verify Verifier, background bool) *cacheFlight {
	fl := &cacheFlight{id: id, n: n, background: background, cancel: cancel, done: make(chan struct{})}
	c.flights[id] = fl
	c.wg.Add(1)
	go c.run(fctx, fl, fetch, verify)
	return fl
}

// run performs the fetch of fl and hands its result to the waiters.
func (c *Cache) run(ctx context.Context, fl *cacheFlight, fetch Fetcher, verify Verifier) {
	defer c.wg.Done()
	stop := context.AfterFunc(c.base, func() { fl.cancel(ErrCacheClosed) })
	f, tmp, err := c.fill(ctx, fl, fetch, verify)
	stop()
	canceled := ctx.Err() != nil
	fl.cancel(nil)

	var ch *Chunk
	var closeF *os.File
	var evicted []*os.File
	removeTmp := tmp != ""
	c.mu.Lock()
	fl.finished = true
	indexable := !fl.detached // neither abandoned nor dropped
	c.detachLocked(fl)
	if fl.background {
		c.prefetching--
	}
	if err == nil {
		c.stats.Fetched++
		c.stats.FetchedBytes += uint64(fl.n)
	}
	switch {
	case err != nil:
		if !canceled {
			c.stats.Failures++
		}
		if c.closed {
			err = ErrCacheClosed
		}
	case c.closed:
		closeF, err = f, ErrCacheClosed
	case !indexable && fl.waiters == 0:
		closeF = f
	case !indexable:
		// Dropped while Gets waited: they get the bytes, unindexed; the
		// temporary file is unlinked and lives on as their descriptor.
		ch = &Chunk{c: c, id: fl.id, n: fl.n, f: f, pins: fl.waiters}
	default:
		path := c.chunkPath(fl.id)
		if rerr := os.Rename(tmp, path); rerr != nil {
			c.stats.Failures++
			closeF = f
			err = fmt.Errorf("tier: cache write %s [%d, %d): %w", fl.id.key, fl.id.off, fl.id.off+fl.n, rerr)
			break
		}
		removeTmp = false
		ch = &Chunk{c: c, id: fl.id, n: fl.n, f: f, path: path, pins: fl.waiters}
		c.insertLocked(ch)
		evicted = c.evictLocked(nil)
	}
	fl.ch, fl.err = ch, err
	c.mu.Unlock()

	// Tidy up before waking the waiters, so that none sees a stray
	// temporary file. A waiter that gave up meanwhile sees finished and
	// waits for done too: its pin is counted in ch.
	if closeF != nil {
		closeF.Close()
	}
	if removeTmp {
		os.Remove(tmp)
	}
	cacheCloseAll(evicted)
	close(fl.done)
}

// fill fetches, verifies and writes the chunk of fl to a new temporary
// file, which it returns open with its name. On error no file is left
// open; the name, if not empty, is still to be removed.
func (c *Cache) fill(ctx context.Context, fl *cacheFlight, fetch Fetcher, verify Verifier) (*os.File, string, error) {
	key, off, n := fl.id.key, fl.id.off, fl.n
	bp := c.getBuf(int(n))
	defer c.putBuf(bp)
	buf := *bp
	if err := fetch(ctx, buf); err != nil {
		return nil, "", fmt.Errorf("tier: cache fetch %s [%d, %d): %w", key, off, off+n, err)
	}
	if verify != nil {
		if err := verify(buf); err != nil {
			return nil, "", fmt.Errorf("tier: cache verify %s [%d, %d): %w", key, off, off+n, err)
		}
	}
	f, err := os.CreateTemp(c.dir, "*"+cacheTempExt)
	if err != nil {
		return nil, "", fmt.Errorf("tier: cache write %s [%d, %d): %w", key, off, off+n, err)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return nil, f.Name(), fmt.Errorf("tier: cache write %s [%d, %d): %w", key, off, off+n, err)
	}
	return f, f.Name(), nil
}

// detachLocked takes fl out of c.flights, if it is still there, so that
// a later Get starts a fetch of its own and fl's chunk is not indexed.
func (c *Cache) detachLocked(fl *cacheFlight) {
	if !fl.detached {
		fl.detached = true
		delete(c.flights, fl.id)
	}
}

// Drop removes every chunk of key (e.g. the object was deleted by
// retention); pinned ones are removed from the index and their files
// unlinked, readers keep their open descriptor. A fetch of the key in
// progress is not indexed when it ends; its waiters still get its chunk,
// and without waiters it is canceled.
func (c *Cache) Drop(key string) {
	var files []*os.File
	c.mu.Lock()
	for _, ch := range c.index[key] {
		if c.unindexLocked(ch) {
			files = append(files, ch.f)
		}
	}
	delete(c.index, key)
	for id, fl := range c.flights {
		if id.key != key {
			continue
		}
		c.detachLocked(fl)
		if fl.waiters == 0 {
			fl.cancel(errCacheAbandoned)
		}
	}
	c.mu.Unlock()
	cacheCloseAll(files)
}

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close cancels the fetches in progress (prefetches included), waits for
// them to return, and closes the files of unpinned chunks. Pinned chunks
// stay readable; their files are closed at their last Release. Get after
// Close returns ErrCacheClosed and Prefetch does nothing. The chunk files
// are left on disk for the next OpenCache to remove. Close returns the
// first error closing a file; closing again does nothing.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()

	c.stopBase(ErrCacheClosed)
	c.wg.Wait() // no fetch starts after closed is set

	var files []*os.File
	c.mu.Lock()
	for key, m := range c.index {
		for _, ch := range m {
			ch.indexed = false
			ch.path = ""
			if ch.onLRU {
				c.lru.remove(ch)
			}
			if ch.pins == 0 {
				files = append(files, ch.f)
			}
		}
		delete(c.index, key)
	}
	c.stats.Bytes, c.stats.Chunks = 0, 0
	c.mu.Unlock()

	var first error
	for _, f := range files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// File returns the chunk file; use ReadAt only (the file is shared).
// Offset 0 of the file is offset Base of the object.
func (ch *Chunk) File() *os.File { return ch.f }

// Base returns the object offset of the file's first byte (the off of Get).
func (ch *Chunk) Base() int64 { return ch.id.off }

// Len returns the length of the chunk in bytes.
func (ch *Chunk) Len() int64 { return ch.n }

// Acquire adds a pin, for handing the chunk to a second holder, who
// calls Release in turn. The chunk must be pinned already.
func (ch *Chunk) Acquire() {
	c := ch.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.pins <= 0 {
		panic("tier: Acquire of an unpinned chunk")
	}
	ch.pins++
}

// Release drops one pin. The file is closed when the chunk is both
// unpinned and out of the index (evicted, dropped or closed); a chunk in
// the index becomes the most recently used, and chunks over the bound
// are evicted.
func (ch *Chunk) Release() {
	c := ch.c
	var files []*os.File
	c.mu.Lock()
	if ch.pins <= 0 {
		c.mu.Unlock()
		panic("tier: Release of an unpinned chunk")
	}
	ch.pins--
	if ch.pins == 0 {
		if ch.indexed {
			c.lru.pushFront(ch)
			files = c.evictLocked(nil)
		} else {
			files = append(files, ch.f)
		}
	}
	c.mu.Unlock()
	cacheCloseAll(files)
}

// cacheCheckRange checks the arguments naming a chunk.
func cacheCheckRange(key string, off, n int64) error {
	if off < 0 || n <= 0 || n > math.MaxInt || off > math.MaxInt64-n {
		return fmt.Errorf("tier: cache chunk %s offset %d length %d: invalid range", key, off, n)
	}
	return nil
}

func cacheLenMismatch(key string, off, n, have int64) error {
	return fmt.Errorf("tier: cache get %s at %d length %d: the chunk at that offset has length %d", key, off, n, have)
}

// chunkPath returns the name of the file of chunk id.
func (c *Cache) chunkPath(id chunkID) string {
	sum := xxh3.HashString128Seed(id.key, uint64(id.off)).Bytes()
	var name [2*len(sum) + len(cacheChunkExt)]byte
	hex.Encode(name[:], sum[:])
	copy(name[2*len(sum):], cacheChunkExt)
	return filepath.Join(c.dir, string(name[:]))
}

// getBuf returns a buffer of length n, from the pool of its size class
// when there is one.
func (c *Cache) getBuf(n int) *[]byte {
	k := max(bits.Len(uint(n-1)), cacheBufMinShift)
	if k > cacheBufMaxShift {
		b := make([]byte, n)
		return &b
	}
	if bp, _ := c.bufs[k-cacheBufMinShift].Get().(*[]byte); bp != nil {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]byte, n, 1<<k)
	return &b
}

// putBuf returns a buffer of getBuf to its pool.
func (c *Cache) putBuf(bp *[]byte) {
	size := cap(*bp)
	k := bits.Len(uint(size - 1))
	if size != 1<<k || k < cacheBufMinShift || k > cacheBufMaxShift {
		return
	}
	c.bufs[k-cacheBufMinShift].Put(bp)
}

func cacheCloseAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
