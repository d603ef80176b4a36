package tier

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
	"go.uber.org/goleak"
)

// cacheTestFill fills p with the bytes at offset off of the test object
// key: a function of the key and the position, so that every chunk of
// every object has bytes of its own.
func cacheTestFill(key string, off int64, p []byte) {
	h := xxh3.HashString(key)
	for i := range p {
		x := uint64(off+int64(i)) ^ h
		p[i] = byte((x * 0x9E3779B97F4A7C15) >> 56)
	}
}

func cacheTestData(key string, off, n int64) []byte {
	p := make([]byte, n)
	cacheTestFill(key, off, p)
	return p
}

// cacheTestSource serves the test objects and counts the fetches.
type cacheTestSource struct {
	mu    sync.Mutex
	calls map[chunkID]int
}

func newCacheTestSource() *cacheTestSource {
	return &cacheTestSource{calls: make(map[chunkID]int)}
}

func (s *cacheTestSource) fetcher(key string, off int64) Fetcher {
	return func(_ context.Context, p []byte) error {
		s.mu.Lock()
		s.calls[chunkID{key, off}]++
		s.mu.Unlock()
		cacheTestFill(key, off, p)
		return nil
	}
}

func (s *cacheTestSource) count(key string, off int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[chunkID{key, off}]
}

func openCacheTest(t *testing.T, maxBytes int64) *Cache {
	t.Helper()
	c, err := OpenCache(t.TempDir(), maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// cacheTB is what the checks need of a *testing.T or a *rapid.T.
type cacheTB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// cacheTestNoFatal is a cacheTB for goroutines other than the test's:
// its Fatalf reports an error and returns.
type cacheTestNoFatal struct{ *testing.T }

func (t cacheTestNoFatal) Fatalf(format string, args ...any) { t.Errorf(format, args...) }

// cacheTestCheckBytes checks that the file of ch holds exactly the bytes
// of its range of the object key.
func cacheTestCheckBytes(t cacheTB, ch *Chunk, key string) {
	t.Helper()
	got := make([]byte, ch.Len()+1)
	n, err := ch.File().ReadAt(got, 0)
	if n != int(ch.Len()) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("read chunk %s@%d: %d bytes, %v; want %d bytes", key, ch.Base(), n, err, ch.Len())
	}
	if want := cacheTestData(key, ch.Base(), ch.Len()); !bytes.Equal(got[:n], want) {
		t.Fatalf("chunk %s@%d: bytes differ from the object", key, ch.Base())
	}
}

// cacheTestClosed reports whether the file of ch is closed.
func cacheTestClosed(ch *Chunk) bool {
	_, err := ch.f.ReadAt(make([]byte, 1), 0)
	return errors.Is(err, os.ErrClosed)
}

// cacheTestDir lists the chunk files and the temporary files in dir.
func cacheTestDir(t cacheTB, dir string) (chunks, tmps []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, e := range ents {
		switch {
		case strings.HasSuffix(e.Name(), cacheChunkExt):
			chunks = append(chunks, filepath.Join(dir, e.Name()))
		case strings.HasSuffix(e.Name(), cacheTempExt):
			tmps = append(tmps, filepath.Join(dir, e.Name()))
		}
	}
	return chunks, tmps
}

// cacheTestCheck checks the invariants of an idle cache (no fetch
// running): the counters describe the index, the LRU list holds exactly
// the unpinned indexed chunks, the bound holds unless every chunk is
// pinned, and the directory holds exactly the files of the index.
func cacheTestCheck(t cacheTB, c *Cache) {
	t.Helper()
	paths, idle := cacheTestCheckIndex(t, c)
	if !idle {
		return
	}
	cacheTestCheckDir(t, c.dir, paths)
}

// cacheTestCheckDir checks that dir holds the chunk files paths and no
// temporary file.
func cacheTestCheckDir(t cacheTB, dir string, paths []string) {
	t.Helper()
	files, tmps := cacheTestDir(t, dir)
	slices.Sort(files)
	slices.Sort(paths)
	if !slices.Equal(files, paths) {
		t.Fatalf("files %v, index %v", files, paths)
	}
	if len(tmps) != 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
}

// cacheTestCheckIndex checks the invariants of the index and returns the
// paths of its files, and whether no fetch that could index a chunk is
// running.
func cacheTestCheckIndex(t cacheTB, c *Cache) (paths []string, idle bool) {
	t.Helper()
	c.mu.Lock()
	var bytes int64
	var count, unpinned int
	for key, m := range c.index {
		if len(m) == 0 {
			t.Fatalf("empty index entry for %s", key)
		}
		for off, ch := range m {
			if ch.id != (chunkID{key, off}) || !ch.indexed || ch.path != c.chunkPath(ch.id) {
				t.Fatalf("chunk %s@%d: id %v indexed %v path %q", key, off, ch.id, ch.indexed, ch.path)
			}
			if ch.onLRU != (ch.pins == 0) {
				t.Fatalf("chunk %s@%d: pins %d, on LRU %v", key, off, ch.pins, ch.onLRU)
			}
			if ch.pins == 0 {
				unpinned++
			}
			bytes += ch.n
			count++
			paths = append(paths, ch.path)
		}
	}
	var onList int
	var prev *Chunk
	for ch := c.lru.front; ch != nil; ch = ch.next {
		if ch.prev != prev || !ch.indexed || ch.pins != 0 {
			t.Fatalf("LRU list: bad element %v (prev ok %v)", ch.id, ch.prev == prev)
		}
		prev = ch
		onList++
	}
	if c.lru.back != prev {
		t.Fatalf("LRU list: back is not the last element")
	}
	st, maxBytes, flights := c.stats, c.maxBytes, len(c.flights)
	c.mu.Unlock()

	if st.Bytes != bytes || st.Chunks != count {
		t.Fatalf("stats say %d bytes in %d chunks, index has %d in %d", st.Bytes, st.Chunks, bytes, count)
	}
	if onList != unpinned {
		t.Fatalf("LRU list has %d chunks, %d are unpinned", onList, unpinned)
	}
	if bytes > maxBytes && unpinned > 0 {
		t.Fatalf("%d bytes over the bound %d with %d unpinned chunks", bytes, maxBytes, unpinned)
	}
	return paths, flights == 0
}

// cacheTestWait polls cond until it holds.
func cacheTestWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// cacheTestWaiters returns the number of Gets waiting for the fetch of a
// chunk, -1 if none is running.
func cacheTestWaiters(c *Cache, key string, off int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fl := c.flights[chunkID{key, off}]; fl != nil {
		return fl.waiters
	}
	return -1
}

func cacheTestCached(c *Cache, key string, off int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.index[key][off] != nil
}

func mustGet(t *testing.T, c *Cache, src *cacheTestSource, key string, off, n int64) *Chunk {
	t.Helper()
	ch, err := c.Get(context.Background(), key, off, n, src.fetcher(key, off), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Base() != off || ch.Len() != n {
		t.Fatalf("chunk %s@%d: base %d len %d, want %d", key, off, ch.Base(), ch.Len(), n)
	}
	cacheTestCheckBytes(t, ch, key)
	return ch
}

func TestCacheHitMiss(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	const key = "iggo/s1/t1-5/p0/e0/00000000000000000000.log"

	ch := mustGet(t, c, src, key, 4096, 1000)
	cacheTestCheck(t, c)
	ch.Release()
	ch = mustGet(t, c, src, key, 4096, 1000)
	ch.Release()
	other := mustGet(t, c, src, key, 5096, 24)
	other.Release()

	if got := src.count(key, 4096); got != 1 {
		t.Fatalf("fetched %d times, want 1", got)
	}
	want := CacheStats{Hits: 1, Misses: 2, Fetched: 2, FetchedBytes: 1024, Bytes: 1024, Chunks: 2}
	if got := c.Stats(); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	files, _ := cacheTestDir(t, c.dir)
	if len(files) != 2 || !slices.Contains(files, c.chunkPath(chunkID{key, 4096})) {
		t.Fatalf("files %v", files)
	}
	if base := filepath.Base(files[0]); len(base) != 32+len(cacheChunkExt) {
		t.Fatalf("chunk file name %q: want 32 hex digits and %s", base, cacheChunkExt)
	}
	cacheTestCheck(t, c)
}

func TestCacheHitAllocs(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	fetch := src.fetcher("k", 0)
	ctx := context.Background()
	mustGet(t, c, src, "k", 0, 100).Release()
	allocs := testing.AllocsPerRun(100, func() {
		ch, err := c.Get(ctx, "k", 0, 100, fetch, nil)
		if err != nil {
			t.Fatal(err)
		}
		ch.Release()
	})
	if allocs != 0 {
		t.Fatalf("a hit allocates %v times", allocs)
	}
}

func TestCacheSingleflight(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	const waiters = 8
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(_ context.Context, p []byte) error {
		calls.Add(1)
		<-release
		cacheTestFill("k", 100, p)
		return nil
	}
	chunks := make([]*Chunk, waiters)
	errs := make([]error, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() { chunks[i], errs[i] = c.Get(context.Background(), "k", 100, 5000, fetch, nil) })
	}
	cacheTestWait(t, "all waiters", func() bool { return cacheTestWaiters(c, "k", 100) == waiters })
	close(release)
	wg.Wait()
	for i := range waiters {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if chunks[i] != chunks[0] {
			t.Fatalf("waiter %d got another chunk", i)
		}
		cacheTestCheckBytes(t, chunks[i], "k")
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
	if st := c.Stats(); st.Misses != waiters || st.Hits != 0 || st.Fetched != 1 {
		t.Fatalf("stats %+v", st)
	}
	for i := range waiters - 1 {
		chunks[i].Release()
	}
	// One pin left: still pinned and readable.
	cacheTestCheck(t, c)
	c.mu.Lock()
	pins := chunks[0].pins
	c.mu.Unlock()
	if pins != 1 {
		t.Fatalf("pins %d, want 1", pins)
	}
	cacheTestCheckBytes(t, chunks[0], "k")
	chunks[0].Release()
	cacheTestCheck(t, c)
}

func TestCacheLRU(t *testing.T) {
	c := openCacheTest(t, 300)
	src := newCacheTestSource()
	for _, k := range []string{"a", "b", "c"} {
		mustGet(t, c, src, k, 0, 100).Release()
	}
	mustGet(t, c, src, "a", 0, 100).Release()         // a, c, b
	c.Prefetch("b", 0, 100, src.fetcher("b", 0), nil) // cached: b, a, c
	mustGet(t, c, src, "d", 0, 100).Release()         // d, b, a; c evicted
	for _, k := range []string{"a", "b", "d"} {
		if !cacheTestCached(c, k, 0) {
			t.Fatalf("%s evicted", k)
		}
	}
	if cacheTestCached(c, "c", 0) {
		t.Fatal("c not evicted")
	}
	want := CacheStats{Hits: 1, Misses: 4, Fetched: 4, FetchedBytes: 400, Evicted: 1, EvictedBytes: 100, Bytes: 300, Chunks: 3}
	if got := c.Stats(); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	cacheTestCheck(t, c)

	// A chunk larger than the bound evicts everything else, then itself
	// once released.
	big := mustGet(t, c, src, "e", 0, 500)
	if st := c.Stats(); st.Bytes != 500 || st.Chunks != 1 || st.Evicted != 4 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c)
	big.Release()
	if st := c.Stats(); st.Bytes != 0 || st.Chunks != 0 || st.Evicted != 5 {
		t.Fatalf("stats %+v", st)
	}
	if !cacheTestClosed(big) {
		t.Fatal("evicted chunk's file is open")
	}
	cacheTestCheck(t, c)
	mustGet(t, c, src, "c", 0, 100).Release()
	if got := src.count("c", 0); got != 2 {
		t.Fatalf("c fetched %d times, want 2", got)
	}
}

func TestCachePinnedNotEvicted(t *testing.T) {
	c := openCacheTest(t, 200)
	src := newCacheTestSource()
	a := mustGet(t, c, src, "a", 0, 100)
	b := mustGet(t, c, src, "b", 0, 100)
	cc := mustGet(t, c, src, "c", 0, 100)
	if st := c.Stats(); st.Bytes != 300 || st.Evicted != 0 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c)
	for _, ch := range []*Chunk{a, b, cc} {
		cacheTestCheckBytes(t, ch, []string{"a", "b", "c"}[slices.Index([]*Chunk{a, b, cc}, ch)])
	}
	a.Release() // the only unpinned chunk: evicted at once
	if cacheTestCached(c, "a", 0) || !cacheTestClosed(a) {
		t.Fatal("a not evicted on release")
	}
	b.Release() // 200 <= 200: kept
	if !cacheTestCached(c, "b", 0) {
		t.Fatal("b evicted within the bound")
	}
	cc.Release()
	if !cacheTestCached(c, "b", 0) || !cacheTestCached(c, "c", 0) {
		t.Fatal("evicted within the bound")
	}
	d := mustGet(t, c, src, "d", 0, 100) // 300: b is the least recently released
	if cacheTestCached(c, "b", 0) || !cacheTestCached(c, "c", 0) {
		t.Fatal("wrong chunk evicted")
	}
	cacheTestCheck(t, c)

	// Acquire keeps a chunk pinned past the first Release.
	d.Acquire()
	d.Release()
	mustGet(t, c, src, "e", 0, 150).Release()
	if !cacheTestCached(c, "d", 0) || cacheTestCached(c, "c", 0) {
		t.Fatal("acquired chunk evicted")
	}
	cacheTestCheckBytes(t, d, "d")
	d.Release()
	cacheTestCheck(t, c)
}

func TestCacheDrop(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	pinned := mustGet(t, c, src, "a", 0, 100)
	unpinned := mustGet(t, c, src, "a", 100, 100)
	unpinned.Release()
	mustGet(t, c, src, "b", 0, 100).Release()

	c.Drop("a")
	c.Drop("nothing")
	if st := c.Stats(); st.Chunks != 1 || st.Bytes != 100 || st.Evicted != 0 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c) // only b's file is left
	if !cacheTestClosed(unpinned) {
		t.Fatal("dropped unpinned chunk's file is open")
	}
	cacheTestCheckBytes(t, pinned, "a")
	pinned.Acquire()
	pinned.Release()
	cacheTestCheckBytes(t, pinned, "a")
	pinned.Release()
	if !cacheTestClosed(pinned) {
		t.Fatal("dropped chunk's file open after its last release")
	}
	mustGet(t, c, src, "a", 0, 100).Release()
	if got := src.count("a", 0); got != 2 {
		t.Fatalf("fetched %d times after drop, want 2", got)
	}
	cacheTestCheck(t, c)
}

func TestCacheDropDuringFetch(t *testing.T) {
	c := openCacheTest(t, 1<<20)

	// A Get waits: it gets the bytes, but they are not cached.
	release := make(chan struct{})
	fetch := func(_ context.Context, p []byte) error {
		<-release
		cacheTestFill("a", 0, p)
		return nil
	}
	done := make(chan struct{})
	var ch *Chunk
	var err error
	go func() {
		defer close(done)
		ch, err = c.Get(context.Background(), "a", 0, 100, fetch, nil)
	}()
	cacheTestWait(t, "the waiter", func() bool { return cacheTestWaiters(c, "a", 0) == 1 })
	c.Drop("a")
	close(release)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	cacheTestCheckBytes(t, ch, "a")
	if st := c.Stats(); st.Chunks != 0 || st.Fetched != 1 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c) // no chunk file, no temporary file
	ch.Release()
	if !cacheTestClosed(ch) {
		t.Fatal("file open after release")
	}

	// A prefetch nobody waits for is canceled.
	causes := make(chan error, 1)
	c.Prefetch("a", 0, 100, func(ctx context.Context, _ []byte) error {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, nil)
	cacheTestWait(t, "the prefetch", func() bool { return cacheTestWaiters(c, "a", 0) == 0 })
	c.Drop("a")
	if cause := <-causes; !errors.Is(cause, errCacheAbandoned) {
		t.Fatalf("prefetch canceled with %v", cause)
	}
	cacheTestWait(t, "the prefetch's end", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.prefetching == 0
	})
	if st := c.Stats(); st.Failures != 0 || st.Chunks != 0 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c)
}

func TestCacheVerifyFailure(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	errBad := errors.New("checksum mismatch")
	var verified []byte
	bad := func(p []byte) error {
		verified = append([]byte(nil), p...)
		return errBad
	}
	_, err := c.Get(context.Background(), "obj", 200, 300, src.fetcher("obj", 200), bad)
	if !errors.Is(err, errBad) || !strings.Contains(err.Error(), "obj [200, 500)") {
		t.Fatalf("err %v", err)
	}
	if !bytes.Equal(verified, cacheTestData("obj", 200, 300)) {
		t.Fatal("verifier got other bytes")
	}
	if st := c.Stats(); st.Failures != 1 || st.Chunks != 0 || st.Fetched != 0 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c) // nothing on disk

	ok := func(p []byte) error {
		if !bytes.Equal(p, cacheTestData("obj", 200, 300)) {
			return errBad
		}
		return nil
	}
	ch, err := c.Get(context.Background(), "obj", 200, 300, src.fetcher("obj", 200), ok)
	if err != nil {
		t.Fatal(err)
	}
	cacheTestCheckBytes(t, ch, "obj")
	ch.Release()
	if got := src.count("obj", 200); got != 2 {
		t.Fatalf("fetched %d times, want 2", got)
	}
	cacheTestCheck(t, c)
}

func TestCacheFetchError(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	errFetch := errors.New("503 slow down")
	release := make(chan struct{})
	fetch := func(context.Context, []byte) error {
		<-release
		return errFetch
	}
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.Get(context.Background(), "obj", 0, 64, fetch, nil) })
	}
	cacheTestWait(t, "the waiters", func() bool { return cacheTestWaiters(c, "obj", 0) == len(errs) })
	close(release)
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, errFetch) || !strings.Contains(err.Error(), "obj [0, 64)") {
			t.Fatalf("err %v", err)
		}
	}
	if st := c.Stats(); st.Failures != 1 || st.Misses != 3 || st.Chunks != 0 {
		t.Fatalf("stats %+v", st)
	}
	cacheTestCheck(t, c)
}

func TestCachePrefetch(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	c.Prefetch("a", 0, 100, src.fetcher("a", 0), nil)
	cacheTestWait(t, "the prefetch", func() bool { return c.Stats().Chunks == 1 })
	mustGet(t, c, src, "a", 0, 100).Release()
	if st := c.Stats(); st.Hits != 1 || st.Misses != 0 || st.Fetched != 1 {
		t.Fatalf("stats %+v", st)
	}
	c.Prefetch("a", 0, 100, src.fetcher("a", 0), nil) // cached: nothing to do
	if got := src.count("a", 0); got != 1 {
		t.Fatalf("fetched %d times", got)
	}

	// At most two at a time; a Get joins a running prefetch.
	release := make(chan struct{})
	var started atomic.Int32
	blocking := func(key string) Fetcher {
		return func(_ context.Context, p []byte) error {
			started.Add(1)
			<-release
			cacheTestFill(key, 0, p)
			return nil
		}
	}
	for _, k := range []string{"b", "c", "d"} {
		c.Prefetch(k, 0, 100, blocking(k), nil)
	}
	c.Prefetch("b", 0, 100, blocking("b"), nil) // running already
	if cacheTestWaiters(c, "b", 0) != 0 || cacheTestWaiters(c, "c", 0) != 0 || cacheTestWaiters(c, "d", 0) != -1 {
		t.Fatal("want prefetches of b and c only")
	}
	done := make(chan error)
	go func() {
		ch, err := c.Get(context.Background(), "b", 0, 100, src.fetcher("b", 0), nil)
		if err == nil {
			cacheTestCheckBytes(cacheTestNoFatal{t}, ch, "b")
			ch.Release()
		}
		done <- err
	}()
	cacheTestWait(t, "the Get", func() bool { return cacheTestWaiters(c, "b", 0) == 1 })
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cacheTestWait(t, "the prefetches", func() bool { return c.Stats().Chunks == 3 })
	if src.count("b", 0) != 0 || started.Load() != 2 {
		t.Fatalf("b fetched by the Get %d times; %d prefetches started", src.count("b", 0), started.Load())
	}
	if st := c.Stats(); st.Hits != 1 || st.Misses != 1 || st.Fetched != 3 {
		t.Fatalf("stats %+v", st)
	}

	// Errors are counted.
	c.Prefetch("e", 0, 100, func(context.Context, []byte) error { return errors.New("boom") }, nil)
	cacheTestWait(t, "the failed prefetch", func() bool { return c.Stats().Failures == 1 })
	cacheTestWait(t, "idle", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.prefetching == 0
	})
	cacheTestCheck(t, c)
}

type cacheTestCtxKey struct{}

func TestCacheContext(t *testing.T) {
	c := openCacheTest(t, 1<<20)

	t.Run("lone waiter leaves", func(t *testing.T) {
		causes := make(chan error, 1)
		fetch := func(ctx context.Context, _ []byte) error {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return ctx.Err()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := c.Get(ctx, "k1", 0, 10, fetch, nil)
			done <- err
		}()
		cacheTestWait(t, "the waiter", func() bool { return cacheTestWaiters(c, "k1", 0) == 1 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "k1 [0, 10)") {
			t.Fatalf("err %v", err)
		}
		if cause := <-causes; !errors.Is(cause, errCacheAbandoned) {
			t.Fatalf("fetch canceled with %v", cause)
		}
		// The next Get fetches anew, even before the abandoned fetch ends.
		src := newCacheTestSource()
		mustGet(t, c, src, "k1", 0, 10).Release()
		if st := c.Stats(); st.Failures != 0 {
			t.Fatalf("cancellation counted as failure: %+v", st)
		}
	})

	t.Run("one of two leaves", func(t *testing.T) {
		release := make(chan struct{})
		var fetchCanceled atomic.Bool
		fetch := func(ctx context.Context, p []byte) error {
			<-release
			fetchCanceled.Store(ctx.Err() != nil)
			cacheTestFill("k2", 0, p)
			return nil
		}
		ctx1, cancel1 := context.WithCancel(context.Background())
		done1, done2 := make(chan error), make(chan *Chunk)
		go func() {
			_, err := c.Get(ctx1, "k2", 0, 10, fetch, nil)
			done1 <- err
		}()
		cacheTestWait(t, "the first waiter", func() bool { return cacheTestWaiters(c, "k2", 0) == 1 })
		go func() {
			ch, err := c.Get(context.Background(), "k2", 0, 10, fetch, nil)
			if err != nil {
				t.Error(err)
			}
			done2 <- ch
		}()
		cacheTestWait(t, "the second waiter", func() bool { return cacheTestWaiters(c, "k2", 0) == 2 })
		cancel1()
		if err := <-done1; !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		close(release)
		ch := <-done2
		if ch == nil {
			t.FailNow()
		}
		if fetchCanceled.Load() {
			t.Fatal("fetch canceled though a waiter was left")
		}
		cacheTestCheckBytes(t, ch, "k2")
		c.mu.Lock()
		pins := ch.pins
		c.mu.Unlock()
		if pins != 1 {
			t.Fatalf("pins %d, want 1", pins)
		}
		ch.Release()
	})

	t.Run("values not deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), cacheTestCtxKey{}, "span"), time.Hour)
		defer cancel()
		ch, err := c.Get(ctx, "k3", 0, 10, func(ctx context.Context, p []byte) error {
			if _, ok := ctx.Deadline(); ok {
				return errors.New("fetch has the caller's deadline")
			}
			if ctx.Value(cacheTestCtxKey{}) != "span" {
				return errors.New("fetch lacks the caller's values")
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ch.Release()
	})

	t.Run("ended before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var called atomic.Bool
		_, err := c.Get(ctx, "k4", 0, 10, func(context.Context, []byte) error { called.Store(true); return nil }, nil)
		if !errors.Is(err, context.Canceled) || called.Load() {
			t.Fatalf("err %v, fetch called %v", err, called.Load())
		}
	})

	cacheTestWait(t, "idle", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.flights) == 0
	})
	cacheTestCheck(t, c)
}

func TestCacheClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, err := OpenCache(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	src := newCacheTestSource()
	pinned := mustGet(t, c, src, "a", 0, 100)
	unpinned := mustGet(t, c, src, "b", 0, 100)
	unpinned.Release()

	// A prefetch and a Get in progress are canceled; Close waits for them.
	var returned atomic.Int32
	honoring := func(ctx context.Context, _ []byte) error {
		<-ctx.Done()
		returned.Add(1)
		return context.Cause(ctx)
	}
	c.Prefetch("c", 0, 100, honoring, nil)
	getErr := make(chan error)
	go func() {
		_, err := c.Get(context.Background(), "d", 0, 100, honoring, nil)
		getErr <- err
	}()
	cacheTestWait(t, "the Get", func() bool { return cacheTestWaiters(c, "d", 0) == 1 })

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := returned.Load(); n != 2 {
		t.Fatalf("Close returned with %d of 2 fetches running", 2-n)
	}
	if err := <-getErr; !errors.Is(err, ErrCacheClosed) {
		t.Fatalf("waiting Get: %v", err)
	}
	if !cacheTestClosed(unpinned) {
		t.Fatal("unpinned chunk's file open after Close")
	}
	cacheTestCheckBytes(t, pinned, "a")
	if _, err := c.Get(context.Background(), "a", 0, 100, src.fetcher("a", 0), nil); !errors.Is(err, ErrCacheClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	c.Prefetch("e", 0, 100, src.fetcher("e", 0), nil)
	c.Drop("a")
	if src.count("e", 0) != 0 {
		t.Fatal("Prefetch after Close fetched")
	}
	if st := c.Stats(); st.Chunks != 0 || st.Bytes != 0 {
		t.Fatalf("stats %+v", st)
	}
	pinned.Release()
	if !cacheTestClosed(pinned) {
		t.Fatal("pinned chunk's file open after its release")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCacheOpenCleans(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tier", "cache")
	c, err := OpenCache(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	src := newCacheTestSource()
	mustGet(t, c, src, "a", 0, 100).Release()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"0123.chunk", "4567.tmp", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("stale"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.chunk"), 0o750); err != nil {
		t.Fatal(err)
	}
	c, err = OpenCache(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"keep.txt", "sub.chunk"}) {
		t.Fatalf("left after open: %v", names)
	}
	mustGet(t, c, src, "a", 0, 100).Release()
	if got := src.count("a", 0); got != 2 {
		t.Fatalf("fetched %d times, want 2: the cache is not trusted across restarts", got)
	}

	for _, maxBytes := range []int64{0, -1} {
		if _, err := OpenCache(t.TempDir(), maxBytes); err == nil {
			t.Fatalf("OpenCache with bound %d: no error", maxBytes)
		}
	}
}

func TestCacheBadArgs(t *testing.T) {
	c := openCacheTest(t, 1<<20)
	src := newCacheTestSource()
	ctx := context.Background()
	for _, tc := range []struct{ off, n int64 }{{-1, 10}, {0, 0}, {0, -5}, {math.MaxInt64 - 5, 10}} {
		if _, err := c.Get(ctx, "k", tc.off, tc.n, src.fetcher("k", tc.off), nil); err == nil {
			t.Fatalf("Get(%d, %d): no error", tc.off, tc.n)
		}
		c.Prefetch("k", tc.off, tc.n, src.fetcher("k", tc.off), nil)
	}
	if _, err := c.Get(ctx, "k", 0, 10, nil, nil); err == nil {
		t.Fatal("Get with nil fetcher: no error")
	}
	mustGet(t, c, src, "k", 0, 10).Release()
	if _, err := c.Get(ctx, "k", 0, 11, src.fetcher("k", 0), nil); err == nil {
		t.Fatal("Get with another length of a cached chunk: no error")
	}

	release := make(chan struct{})
	done := make(chan error)
	go func() {
		ch, err := c.Get(ctx, "k", 100, 10, func(_ context.Context, p []byte) error { <-release; return nil }, nil)
		if err == nil {
			ch.Release()
		}
		done <- err
	}()
	cacheTestWait(t, "the fetch", func() bool { return cacheTestWaiters(c, "k", 100) == 1 })
	if _, err := c.Get(ctx, "k", 100, 20, src.fetcher("k", 100), nil); err == nil {
		t.Fatal("Get with another length of a fetching chunk: no error")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if src.count("k", 100) != 0 {
		t.Fatal("mismatched Get fetched")
	}

	ch := mustGet(t, c, src, "k", 0, 10)
	ch.Release()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Release of an unpinned chunk did not panic")
			}
		}()
		ch.Release()
	}()
	cacheTestCheck(t, c)
}

// TestCacheConcurrent runs Gets, Releases, Acquires, Drops and Prefetches
// from several goroutines against a small bound, checking every read.
func TestCacheConcurrent(t *testing.T) {
	c := openCacheTest(t, 2000)
	keys := []string{"a", "b", "c"}
	chunkLen := func(i int) int64 { return 100 + int64(i)*37 }
	chunkOff := func(i int) int64 { return int64(i) * 1000 }
	var fetches atomic.Int64
	fetcher := func(key string, off int64, fail bool) Fetcher {
		return func(ctx context.Context, p []byte) error {
			fetches.Add(1)
			if fail {
				return errors.New("injected")
			}
			cacheTestFill(key, off, p)
			return nil
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			var held []*Chunk
			var heldKeys []string
			for range 400 {
				key, i := keys[rng.IntN(len(keys))], rng.IntN(8)
				off, n := chunkOff(i), chunkLen(i)
				switch op := rng.IntN(10); {
				case op < 5:
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(2000))*time.Microsecond)
					ch, err := c.Get(ctx, key, off, n, fetcher(key, off, rng.IntN(10) == 0), nil)
					cancel()
					if err != nil {
						continue
					}
					if ch.Base() != off || ch.Len() != n {
						t.Errorf("chunk %s@%d: base %d len %d", key, off, ch.Base(), ch.Len())
					}
					cacheTestCheckBytes(cacheTestNoFatal{t}, ch, key)
					held, heldKeys = append(held, ch), append(heldKeys, key)
				case op < 7 && len(held) > 0:
					j := rng.IntN(len(held))
					cacheTestCheckBytes(cacheTestNoFatal{t}, held[j], heldKeys[j])
					held[j].Release()
					held[j], held = held[len(held)-1], held[:len(held)-1]
					heldKeys[j], heldKeys = heldKeys[len(heldKeys)-1], heldKeys[:len(heldKeys)-1]
				case op < 8 && len(held) > 0:
					j := rng.IntN(len(held))
					held[j].Acquire()
					held, heldKeys = append(held, held[j]), append(heldKeys, heldKeys[j])
				case op < 9:
					c.Prefetch(key, off, n, fetcher(key, off, false), nil)
				default:
					c.Drop(key)
				}
			}
			for j, ch := range held {
				cacheTestCheckBytes(cacheTestNoFatal{t}, ch, heldKeys[j])
				ch.Release()
			}
		})
	}
	wg.Wait()
	cacheTestWait(t, "idle", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.flights) == 0
	})
	// Abandoned fetches may still be running, but none of them indexes
	// its chunk; Close waits for them, and leaves the chunk files.
	paths, _ := cacheTestCheckIndex(t, c)
	st := c.Stats()
	if st.Hits == 0 || st.Evicted == 0 || st.Failures == 0 {
		t.Errorf("stats %+v: not every path exercised", st)
	}
	t.Logf("%d fetches, stats %+v", fetches.Load(), st)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	cacheTestCheckDir(t, c.dir, paths)
}
