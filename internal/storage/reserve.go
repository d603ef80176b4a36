package storage

// Space for the active segment is reserved ahead of the write position in
// growing steps (fallocate with FALLOC_FL_KEEP_SIZE where available, see
// prealloc_*.go), unless Options.Preallocate already reserved the whole
// segment. An append into reserved blocks skips the file system's
// delayed-allocation bookkeeping for every block it writes, which made an
// append of 1 MB to the page cache about a third more expensive on ext4;
// and the background flusher's write-back then converts reserved extents
// instead of allocating, while the next append runs.
//
// The step is the size already written to the segment, at least
// minReserveAhead and at most maxReserveAhead, and never past
// Options.SegmentBytes: a busy partition reserves 64 MiB at a time (a
// fallocate call per 64 appends of 1 MB), an idle or small one no more
// than it wrote (at least 16 KiB). The file size does not change, so
// recovery is unaffected; sealing trims the unused reservation, and a
// crash leaves at most one step allocated past the end of the active
// segment until it is sealed or removed.
const (
	minReserveAhead = 16 << 10
	maxReserveAhead = 64 << 20
)

// reserveAhead makes sure the log has space reserved up to end (the end
// of the record about to be written) and, when it reserves, a step more.
// limit is the segment size at which the segment rolls. Caller must hold
// Partition.mu.
func (s *segment) reserveAhead(end, limit int64) {
	if s.noReserve || end <= s.reserved || end >= limit {
		return
	}
	step := min(max(end, minReserveAhead), maxReserveAhead)
	s.preallocate(min(end+step, limit))
}
