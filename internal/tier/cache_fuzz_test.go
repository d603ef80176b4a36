package tier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// cacheModel is the reference a Cache is checked against by the property
// test: the index, the pins and the LRU order, kept by plain slices and
// maps from the same operations, one at a time.
type cacheModel struct {
	c     *Cache
	max   int64
	index map[chunkID]*Chunk
	pins  map[*Chunk]int
	lru   []*Chunk // most recently used first
	bytes int64
	stats CacheStats // all but Bytes and Chunks
	held  []*Chunk   // one entry per pin
	seen  []*Chunk   // every chunk Get returned
}

var (
	errCacheTestFetch  = errors.New("injected fetch error")
	errCacheTestVerify = errors.New("injected verify error")
)

// drawChunk draws one of the chunks of the test objects: three objects of
// five chunks each, of assorted lengths.
func (m *cacheModel) drawChunk(t *rapid.T) (key string, off, n int64) {
	k := rapid.IntRange(0, 2).Draw(t, "key")
	i := rapid.IntRange(0, 4).Draw(t, "chunk")
	return fmt.Sprintf("obj%d", k), int64(i) * 1000, 20 + int64((k*7+i*13)%10)*25
}

// drawFuncs draws whether the fetch or the verify fails, and returns the
// functions, and a flag set when the fetch runs.
func (m *cacheModel) drawFuncs(t *rapid.T, key string, off, n int64) (Fetcher, Verifier, *bool, int) {
	mode := rapid.IntRange(0, 5).Draw(t, "mode") // 0: fetch fails, 1: verify fails
	fetched := new(bool)
	fetch := func(_ context.Context, p []byte) error {
		*fetched = true
		if mode == 0 {
			return errCacheTestFetch
		}
		cacheTestFill(key, off, p)
		return nil
	}
	verify := func(p []byte) error {
		if mode == 1 {
			return errCacheTestVerify
		}
		if !bytes.Equal(p, cacheTestData(key, off, n)) {
			return errors.New("fetched bytes differ")
		}
		return nil
	}
	return fetch, verify, fetched, mode
}

func (m *cacheModel) evict() {
	for m.bytes > m.max && len(m.lru) > 0 {
		ch := m.lru[len(m.lru)-1]
		m.lru = m.lru[:len(m.lru)-1]
		delete(m.index, ch.id)
		m.bytes -= ch.n
		m.stats.Evicted++
		m.stats.EvictedBytes += uint64(ch.n)
	}
}

func (m *cacheModel) unLRU(ch *Chunk) {
	if i := slices.Index(m.lru, ch); i >= 0 {
		m.lru = slices.Delete(m.lru, i, i+1)
	}
}

// fetched records a fetch of ch that succeeded: it is indexed with pins
// pins and the cache evicted down to the bound.
func (m *cacheModel) fetched(ch *Chunk, pins int) {
	m.stats.Fetched++
	m.stats.FetchedBytes += uint64(ch.n)
	m.index[ch.id] = ch
	m.pins[ch] = pins
	m.bytes += ch.n
	if pins == 0 {
		m.lru = slices.Insert(m.lru, 0, ch)
	}
	m.evict()
}

func (m *cacheModel) get(t *rapid.T) {
	key, off, n := m.drawChunk(t)
	fetch, verify, fetched, mode := m.drawFuncs(t, key, off, n)
	ch, err := m.c.Get(context.Background(), key, off, n, fetch, verify)
	id := chunkID{key, off}
	if cached := m.index[id]; cached != nil {
		if err != nil || ch != cached || *fetched {
			t.Fatalf("Get %v: want a hit, got %p (want %p), %v, fetched %v", id, ch, cached, err, *fetched)
		}
		m.stats.Hits++
		if m.pins[ch] == 0 {
			m.unLRU(ch)
		}
		m.pins[ch]++
	} else {
		m.stats.Misses++
		if !*fetched {
			t.Fatalf("Get %v: a miss without a fetch", id)
		}
		switch mode {
		case 0, 1:
			if want := []error{errCacheTestFetch, errCacheTestVerify}[mode]; !errors.Is(err, want) {
				t.Fatalf("Get %v: err %v, want %v", id, err, want)
			}
			m.stats.Failures++
			return
		}
		if err != nil {
			t.Fatalf("Get %v: %v", id, err)
		}
		if slices.Contains(m.seen, ch) {
			t.Fatalf("Get %v: a miss returned a chunk seen before", id)
		}
		m.seen = append(m.seen, ch)
		m.fetched(ch, 1)
	}
	cacheTestCheckBytes(t, ch, key)
	m.held = append(m.held, ch)
}

func (m *cacheModel) prefetch(t *rapid.T) {
	key, off, n := m.drawChunk(t)
	fetch, verify, fetched, mode := m.drawFuncs(t, key, off, n)
	id := chunkID{key, off}
	gate := make(chan struct{}) // holds the fetch until fl is seen
	defer close(gate)
	m.c.Prefetch(key, off, n, func(ctx context.Context, p []byte) error {
		<-gate
		return fetch(ctx, p)
	}, verify)
	m.c.mu.Lock()
	fl := m.c.flights[id]
	m.c.mu.Unlock()
	if cached := m.index[id]; cached != nil {
		if fl != nil {
			t.Fatalf("Prefetch %v: fetching a cached chunk", id)
		}
		if m.pins[cached] == 0 {
			m.unLRU(cached)
			m.lru = slices.Insert(m.lru, 0, cached)
		}
		return
	}
	if fl == nil {
		t.Fatalf("Prefetch %v: no fetch started", id)
	}
	gate <- struct{}{}
	<-fl.done
	if !*fetched {
		t.Fatalf("Prefetch %v: no fetch", id)
	}
	if mode <= 1 {
		m.stats.Failures++
		return
	}
	m.c.mu.Lock()
	ch := m.c.index[key][off]
	m.c.mu.Unlock()
	cached := ch != nil
	if !cached {
		ch = &Chunk{id: id, n: n} // evicted at once; a stand-in for the model
	} else {
		m.seen = append(m.seen, ch)
	}
	m.fetched(ch, 0)
	if inModel := m.index[id] == ch; inModel != cached {
		t.Fatalf("Prefetch %v: cached %v, model %v", id, cached, inModel)
	}
}

func (m *cacheModel) release(t *rapid.T) {
	if len(m.held) == 0 {
		t.Skip("nothing held")
	}
	i := rapid.IntRange(0, len(m.held)-1).Draw(t, "held")
	ch := m.held[i]
	m.held = slices.Delete(m.held, i, i+1)
	ch.Release()
	m.pins[ch]--
	if m.pins[ch] == 0 && m.index[ch.id] == ch {
		m.lru = slices.Insert(m.lru, 0, ch)
		m.evict()
	}
}

func (m *cacheModel) acquire(t *rapid.T) {
	if len(m.held) == 0 {
		t.Skip("nothing held")
	}
	ch := m.held[rapid.IntRange(0, len(m.held)-1).Draw(t, "held")]
	ch.Acquire()
	m.pins[ch]++
	m.held = append(m.held, ch)
}

func (m *cacheModel) drop(t *rapid.T) {
	key := fmt.Sprintf("obj%d", rapid.IntRange(0, 2).Draw(t, "key"))
	m.c.Drop(key)
	for id, ch := range m.index {
		if id.key == key {
			delete(m.index, id)
			m.unLRU(ch)
			m.bytes -= ch.n
		}
	}
}

// check compares the cache with the model, and checks the files: every
// pinned or cached chunk reads as its object, every other one is closed,
// and the directory holds the files of the index.
func (m *cacheModel) check(t *rapid.T) {
	want := m.stats
	want.Bytes, want.Chunks = m.bytes, len(m.index)
	if got := m.c.Stats(); got != want {
		t.Fatalf("stats %+v, model %+v", got, want)
	}
	m.c.mu.Lock()
	for id, ch := range m.index {
		if got := m.c.index[id.key][id.off]; got != ch {
			m.c.mu.Unlock()
			t.Fatalf("chunk %v: cache has %p, model %p", id, got, ch)
		}
	}
	var lru []chunkID
	for ch := m.c.lru.front; ch != nil; ch = ch.next {
		lru = append(lru, ch.id)
	}
	m.c.mu.Unlock()
	var wantLRU []chunkID
	for _, ch := range m.lru {
		wantLRU = append(wantLRU, ch.id)
	}
	if !slices.Equal(lru, wantLRU) {
		t.Fatalf("LRU %v, model %v", lru, wantLRU)
	}
	cacheTestCheck(t, m.c)
	for _, ch := range m.seen {
		if m.pins[ch] == 0 && m.index[ch.id] != ch {
			if !cacheTestClosed(ch) {
				t.Fatalf("chunk %v: neither pinned nor cached, file open", ch.id)
			}
			continue
		}
		cacheTestCheckBytes(t, ch, ch.id.key)
	}
	if len(m.held) == 0 && m.bytes > m.max {
		t.Fatalf("%d bytes over the bound %d with nothing pinned", m.bytes, m.max)
	}
}

// cacheProperty runs random Gets, Prefetches, Releases, Acquires and
// Drops on a cache in a new directory under base against a cacheModel.
func cacheProperty(base string) func(*rapid.T) {
	return func(t *rapid.T) {
		dir, err := os.MkdirTemp(base, "cache")
		if err != nil {
			t.Fatalf("%v", err)
		}
		defer os.RemoveAll(dir)
		maxBytes := rapid.Int64Range(1, 1200).Draw(t, "max")
		c, err := OpenCache(dir, maxBytes)
		if err != nil {
			t.Fatalf("%v", err)
		}
		defer c.Close()
		m := &cacheModel{c: c, max: maxBytes, index: make(map[chunkID]*Chunk), pins: make(map[*Chunk]int)}
		t.Repeat(map[string]func(*rapid.T){
			"get":      m.get,
			"prefetch": m.prefetch,
			"release":  m.release,
			"acquire":  m.acquire,
			"drop":     m.drop,
			"":         m.check,
		})
		for len(m.held) > 0 {
			ch := m.held[0]
			m.held = m.held[1:]
			ch.Release()
			m.pins[ch]--
			if m.pins[ch] == 0 && m.index[ch.id] == ch {
				m.lru = slices.Insert(m.lru, 0, ch)
				m.evict()
			}
		}
		m.check(t)
		if err := c.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		for _, ch := range m.seen {
			if !cacheTestClosed(ch) {
				t.Fatalf("chunk %v: file open after Close", ch.id)
			}
		}
	}
}

func TestCacheProperty(t *testing.T) {
	rapid.Check(t, cacheProperty(t.TempDir()))
}

func FuzzCache(f *testing.F) {
	base := f.TempDir()
	f.Fuzz(rapid.MakeFuzz(cacheProperty(base)))
}
