package replicated

import "go.etcd.io/raft/v3/raftpb"

// segCacheBytes bounds the entries a segLog caches (appended, not yet
// applied).
const segCacheBytes = 16 << 20

// entryCache holds consecutive recent entries by index, up to max bytes.
type entryCache struct {
	ents  []*raftpb.Entry
	first uint64
	bytes int
	max   int
}

func (c *entryCache) get(i uint64) *raftpb.Entry {
	if len(c.ents) == 0 || i < c.first || i >= c.first+uint64(len(c.ents)) {
		return nil
	}
	return c.ents[i-c.first]
}

// put adds entries (consecutive, after any truncate of their range).
func (c *entryCache) put(ents []*raftpb.Entry) {
	if len(ents) == 0 {
		return
	}
	if len(c.ents) == 0 || ents[0].GetIndex() != c.first+uint64(len(c.ents)) {
		c.truncate(0)
		c.first = ents[0].GetIndex()
	}
	for _, e := range ents {
		c.ents = append(c.ents, e)
		c.bytes += len(e.GetData())
	}
	for c.bytes > c.max && len(c.ents) > 0 {
		c.dropFront()
	}
}

// truncate drops entries at or after index i (all when i is 0).
func (c *entryCache) truncate(i uint64) {
	if i <= c.first || len(c.ents) == 0 {
		clear(c.ents)
		c.ents, c.bytes = c.ents[:0], 0
		return
	}
	keep := int(min(i-c.first, uint64(len(c.ents))))
	for _, e := range c.ents[keep:] {
		c.bytes -= len(e.GetData())
	}
	clear(c.ents[keep:])
	c.ents = c.ents[:keep]
}

// drop releases entries up to index i.
func (c *entryCache) drop(i uint64) {
	for len(c.ents) > 0 && c.first <= i {
		c.dropFront()
	}
}

func (c *entryCache) dropFront() {
	c.bytes -= len(c.ents[0].GetData())
	c.ents[0] = nil
	c.ents = c.ents[1:]
	c.first++
	if len(c.ents) == 0 {
		c.ents = nil
	}
}
