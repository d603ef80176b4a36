package raftlog

import pb "go.etcd.io/raft/v3/raftpb"

// entryCache holds the most recent entries, a contiguous run ending at the
// last index, bounded in bytes. Its entries are shared with callers of
// Entries and are never modified.
type entryCache struct {
	limit int64
	first uint64 // index of ents[0]
	ents  []*pb.Entry
	costs []int64
	bytes int64
}

func (c *entryCache) get(i uint64) (*pb.Entry, bool) {
	if i < c.first || i-c.first >= uint64(len(c.ents)) {
		return nil, false
	}
	return c.ents[i-c.first], true
}

// reset empties the cache; the next entry added must be next.
func (c *entryCache) reset(next uint64) {
	clear(c.ents)
	c.ents, c.costs, c.bytes, c.first = c.ents[:0], c.costs[:0], 0, next
}

// add appends e (index = end of the cache) of the given encoded size and
// evicts the oldest entries beyond the limit.
func (c *entryCache) add(e *pb.Entry, size uint32) {
	cost := int64(size) + cacheEntryOverhead
	if cost > c.limit {
		c.reset(e.GetIndex() + 1)
		return
	}
	if c.first+uint64(len(c.ents)) != e.GetIndex() {
		c.reset(e.GetIndex())
	}
	c.ents = append(c.ents, e)
	c.costs = append(c.costs, cost)
	c.bytes += cost
	for c.bytes > c.limit {
		c.dropFront()
	}
}

func (c *entryCache) dropFront() {
	c.bytes -= c.costs[0]
	c.ents[0] = nil
	c.ents, c.costs = c.ents[1:], c.costs[1:]
	c.first++
}

// truncateFrom removes entries with index >= i.
func (c *entryCache) truncateFrom(i uint64) {
	if i <= c.first {
		c.reset(i)
		return
	}
	keep := i - c.first
	if keep >= uint64(len(c.ents)) {
		return
	}
	for k := keep; k < uint64(len(c.ents)); k++ {
		c.bytes -= c.costs[k]
		c.ents[k] = nil
	}
	c.ents, c.costs = c.ents[:keep], c.costs[:keep]
}

// dropThrough removes entries with index <= i.
func (c *entryCache) dropThrough(i uint64) {
	for len(c.ents) > 0 && c.first <= i {
		c.dropFront()
	}
	if c.first <= i {
		c.first = i + 1
	}
}
