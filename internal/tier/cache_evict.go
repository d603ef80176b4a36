package tier

import (
	"os"
)

// chunkList is an intrusive doubly linked list of chunks: the LRU list of
// a Cache, holding exactly its indexed unpinned chunks, the most recently
// released at the front. Guarded by Cache.mu.
type chunkList struct {
	front, back *Chunk
}

func (l *chunkList) pushFront(ch *Chunk) {
	ch.prev, ch.next = nil, l.front
	if l.front != nil {
		l.front.prev = ch
	} else {
		l.back = ch
	}
	l.front = ch
	ch.onLRU = true
}

func (l *chunkList) remove(ch *Chunk) {
	if ch.prev != nil {
		ch.prev.next = ch.next
	} else {
		l.front = ch.next
	}
	if ch.next != nil {
		ch.next.prev = ch.prev
	} else {
		l.back = ch.prev
	}
	ch.prev, ch.next = nil, nil
	ch.onLRU = false
}

// insertLocked adds ch, whose file is in place, to the index; unpinned,
// it goes to the front of the LRU list.
func (c *Cache) insertLocked(ch *Chunk) {
	m := c.index[ch.id.key]
	if m == nil {
		m = make(map[int64]*Chunk)
		c.index[ch.id.key] = m
	}
	m[ch.id.off] = ch
	ch.indexed = true
	c.stats.Bytes += ch.n
	c.stats.Chunks++
	if ch.pins == 0 {
		c.lru.pushFront(ch)
	}
}

// pinLocked adds a pin to the indexed chunk ch, taking it off the LRU
// list if it was unpinned.
func (c *Cache) pinLocked(ch *Chunk) {
	if ch.onLRU {
		c.lru.remove(ch)
	}
	ch.pins++
}

// unindexLocked takes ch out of the accounting and the LRU list and
// unlinks its file; the caller removes it from c.index. It reports
// whether ch is unpinned, that is whether the caller is to close its
// file (after unlocking). The unlink happens under c.mu so that it cannot
// remove the file of a later chunk of the same name, which is renamed
// into place under c.mu too.
func (c *Cache) unindexLocked(ch *Chunk) bool {
	ch.indexed = false
	c.stats.Bytes -= ch.n
	c.stats.Chunks--
	if ch.onLRU {
		c.lru.remove(ch)
	}
	os.Remove(ch.path) // the chunk lives on as its descriptor; nothing to do on error
	ch.path = ""
	return ch.pins == 0
}

// evictLocked evicts least recently used unpinned chunks until the
// indexed chunks total at most c.maxBytes or none is unpinned, and
// returns files with the files of the evicted chunks appended, to be
// closed after unlocking.
func (c *Cache) evictLocked(files []*os.File) []*os.File {
	for c.stats.Bytes > c.maxBytes && c.lru.back != nil {
		ch := c.lru.back
		m := c.index[ch.id.key]
		delete(m, ch.id.off)
		if len(m) == 0 {
			delete(c.index, ch.id.key)
		}
		c.unindexLocked(ch)
		c.stats.Evicted++
		c.stats.EvictedBytes += uint64(ch.n)
		files = append(files, ch.f)
	}
	return files
}
