// Package raftlog is a durable raft log for one raft group: a Log stored
// in one directory that implements raft.Storage (go.etcd.io/raft/v3) plus
// the writes the replication host makes from each Ready (Append,
// SetHardState, ApplySnapshot, CreateSnapshot, Compact). It behaves like
// raft.MemoryStorage for every sequence of calls and keeps its contents
// across Close and Open (and crashes). Where MemoryStorage panics on a
// call raft never makes (an index out of bounds), Log returns an error.
// The ConfState of a stored snapshot always has AutoLeave set (false when
// absent), the form MemoryStorage itself converges to.
//
// # Layout
//
// A Log directory holds:
//
//   - entry segments <first index, 20 digits>.log: records of
//     consecutive entries, each u32 payload length | u32 CRC-32C |
//     payload (little-endian; the checksum covers the length bytes and
//     the payload; the payload is the raftpb.Entry protobuf, so its
//     length is the size raft's maxSize limits count). A segment is
//     closed and a new one started once it reaches Options.SegmentBytes.
//   - hardstate: term, vote and commit (one record with a sequence
//     number), replaced atomically: temp file, fsync, rename, directory
//     fsync.
//   - commit: the same record, overwritten in place without fsync when
//     only the commit index changed; used on Open when it is valid, newer
//     than hardstate and has the same term and vote.
//   - first: the index and term of the entry before the first one served
//     (raft's compaction point, MemoryStorage's dummy entry) and the
//     generation of the last applied snapshot; replaced atomically.
//   - snapshot: the latest raftpb.Snapshot and whether CreateSnapshot or
//     ApplySnapshot wrote it; replaced atomically.
//
// # Durability
//
// With Options.Sync, Append fsyncs every segment it wrote (and the
// directory when it created one) before returning. Without it, entries
// are written with write(2) only: a process crash loses nothing, a
// machine crash can lose the entries appended since the last fsync.
// Whatever Options.Sync says, a change of term or vote, a snapshot, the
// first marker and the removal of segments by a truncating Append are
// made durable before the call returns; a change of the commit index
// alone is not (see SetHardState for why that is safe).
//
// An Append that conflicts with the log removes the later segments
// (directory fsynced) and cuts the segment holding the conflicting index
// at that record, then writes the new entries. Compact writes the new
// first marker, then deletes the segments wholly at or below it; entries
// of a partly compacted segment stay on disk but are not served
// (raft.ErrCompacted). ApplySnapshot writes the snapshot marked as
// applied with a new generation, deletes every segment, then writes the
// first marker with that generation.
//
// # Recovery
//
// Open removes temp files, finishes an ApplySnapshot whose generation the
// first marker lacks, deletes segments left behind by an interrupted
// Compact, and scans every remaining record (checksum, length, and that
// indexes run on without a gap from the first marker). A bad record in
// the last segment (incomplete, an impossible length, or a checksum
// mismatch) after which no good record of a later entry starts at any
// offset is the trace of an interrupted write: it and what follows it are
// cut off with a WARN log line naming the file and the offset. A bad
// record followed by a good later one (damage in the middle), a bad record
// in any other segment, a record with the wrong index, or a gap between
// segments fails Open with an error naming the file and the offset: a log
// with a hole is never served. Entries at or below the first marker are
// ignored.
//
// # Memory
//
// Memory is bounded independently of the log's length: per entry the Log
// keeps 24 bytes (term, offset in its segment, encoded size), plus a cache
// of the most recent entries bounded by Options.CacheBytes, plus the
// latest snapshot. Entries not in the cache are read back with one pread
// per segment touched. Every segment stays open (one file descriptor per
// segment), so a group's descriptor count grows with the uncompacted log
// divided by Options.SegmentBytes.
//
// A Log is safe for concurrent use; the host calls it from one goroutine.
// One Log per directory: nothing stops two processes from opening the
// same directory, and doing so corrupts it.
package raftlog
