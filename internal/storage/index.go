package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
)

// IndexEntryBytes is the size of one .index entry: offset u64, timestamp u64,
// position u64, little-endian (../shared/design/storage.md §2).
const IndexEntryBytes = 24

// IndexEntry is one decoded .index entry: the record starting at byte
// Position of the .log has base offset Offset and server timestamp Timestamp.
type IndexEntry struct {
	Offset    uint64
	Timestamp uint64
	Position  uint64
}

// AppendTo appends the 24-byte encoding of e to dst.
func (e IndexEntry) AppendTo(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, e.Offset)
	dst = binary.LittleEndian.AppendUint64(dst, e.Timestamp)
	return binary.LittleEndian.AppendUint64(dst, e.Position)
}

// ParseIndexEntry decodes the 24-byte entry at the start of b (which must
// hold one), the inverse of IndexEntry.AppendTo.
func ParseIndexEntry(b []byte) IndexEntry {
	return IndexEntry{
		Offset:    binary.LittleEndian.Uint64(b[0:8]),
		Timestamp: binary.LittleEndian.Uint64(b[8:16]),
		Position:  binary.LittleEndian.Uint64(b[16:24]),
	}
}

// errIndexDamaged marks an index file that does not describe its log; the
// caller rebuilds the index from the log.
var errIndexDamaged = errors.New("index damaged")

// DecodeIndex decodes and checks the .index content of a segment starting at
// offset start whose .log is logSize bytes long. The entries must start at
// offset start and position 0, have strictly increasing offsets and
// positions, non-decreasing timestamps, and positions inside the log. It
// never allocates more than len(b) implies. An error means the index cannot
// be trusted (recovery then rebuilds it from the log).
func DecodeIndex(b []byte, start uint64, logSize int64) ([]IndexEntry, error) {
	if len(b)%IndexEntryBytes != 0 {
		return nil, fmt.Errorf("%w: length %d is not a multiple of %d", errIndexDamaged, len(b), IndexEntryBytes)
	}
	n := len(b) / IndexEntryBytes
	if (n == 0) != (logSize == 0) {
		return nil, fmt.Errorf("%w: %d entries for a log of %d bytes", errIndexDamaged, n, logSize)
	}
	out := make([]IndexEntry, n)
	for i := range out {
		e := ParseIndexEntry(b[i*IndexEntryBytes:])
		if err := checkIndexStep(out, i, e, start, logSize); err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// checkIndexStep validates entry i against entry i-1 (prev[i-1]).
func checkIndexStep(prev []IndexEntry, i int, e IndexEntry, start uint64, logSize int64) error {
	if e.Position >= uint64(logSize) {
		return fmt.Errorf("%w: entry %d position %d beyond log size %d", errIndexDamaged, i, e.Position, logSize)
	}
	if i == 0 {
		if e.Offset != start || e.Position != 0 {
			return fmt.Errorf("%w: first entry (offset %d, position %d) does not start the segment %d", errIndexDamaged, e.Offset, e.Position, start)
		}
		return nil
	}
	p := prev[i-1]
	if e.Offset <= p.Offset || e.Position <= p.Position || e.Timestamp < p.Timestamp {
		return fmt.Errorf("%w: entry %d out of order", errIndexDamaged, i)
	}
	return nil
}

// memEntry is the in-memory index entry of the active segment. It also keeps
// the record's message count and length so that the end of the last visible
// record is known from one published counter.
type memEntry struct {
	off    uint64
	ts     uint64
	pos    int64
	count  uint32
	length uint32
}

func (e *memEntry) endOff() uint64 { return e.off + uint64(e.count) }
func (e *memEntry) endPos() int64  { return e.pos + int64(e.length) }

const memIndexInitial = 256

// memIndex is the in-memory index of the active segment. One writer (holding
// Partition.mu) appends; readers load without locks. Entries below vis are
// immutable; the backing array is replaced (copied) when it grows, and a
// reader that loads vis before arr always gets an array holding at least vis
// entries.
type memIndex struct {
	arr atomic.Pointer[[]memEntry]
	vis atomic.Int64 // entries visible to readers
	n   int          // entries written; guarded by Partition.mu
}

func newMemIndex(capacity int) *memIndex {
	m := &memIndex{}
	a := make([]memEntry, max(capacity, memIndexInitial))
	m.arr.Store(&a)
	return m
}

// add appends e. Caller must hold Partition.mu.
func (m *memIndex) add(e memEntry) {
	a := *m.arr.Load()
	if m.n == len(a) {
		na := make([]memEntry, 2*len(a))
		copy(na, a[:m.n])
		m.arr.Store(&na)
		a = na
	}
	a[m.n] = e
	m.n++
}

// last returns the last written entry. Caller must hold Partition.mu and
// m.n > 0.
func (m *memIndex) last() *memEntry { return &(*m.arr.Load())[m.n-1] }

// publish makes the first n entries visible. Caller must hold Partition.mu.
func (m *memIndex) publish(n int) {
	if int64(n) > m.vis.Load() {
		m.vis.Store(int64(n))
	}
}

// view returns the visible entries.
func (m *memIndex) view() []memEntry {
	n := m.vis.Load()
	a := *m.arr.Load()
	return a[:n]
}

// written returns the first n written entries. Caller must hold Partition.mu
// or segment.flushMu with n captured under Partition.mu.
func (m *memIndex) written(n int) []memEntry { return (*m.arr.Load())[:n] }

// findEntry returns the position of the entry whose record starts at
// offset off in entries (ordered by offset), and whether there is one.
func findEntry(entries []memEntry, off uint64) (int, bool) {
	return slices.BinarySearchFunc(entries, off, func(e memEntry, x uint64) int {
		switch {
		case e.off < x:
			return -1
		case e.off > x:
			return 1
		}
		return 0
	})
}
