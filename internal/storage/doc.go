// Package storage is the partition log engine: an append-only sequence of
// segment files holding stamped message-batch records exactly as they travel
// on the wire, a dense per-record index, durability (group-committed
// fdatasync or a background flusher), retention, purge, crash recovery and
// consumer-offset files.
//
// The package never parses a batch itself. A [Format] supplied by the caller
// (the broker plugs in the wire batch codec) stamps base offset and server
// timestamp into a record at append time and validates records during
// recovery; tests use a tiny fake format.
//
// # Layout (../shared/design/storage.md §1-2)
//
// One directory per partition:
//
//	{start_offset:020}.log     records back to back, no padding
//	{start_offset:020}.index   24-byte entries, one per record:
//	                           offset u64 | timestamp u64 | position u64 (LE)
//	{start_offset:020}.quarantine  damaged ranges of the segment
//	                           (sidecar.go), only while it has some
//	purge.pending              marker while a purge is in progress
//	offsets/consumers/{id}     consumer offset files (see [Offsets])
//	offsets/groups/{id}
//
// The index is dense per stored record (one entry per batch, not per
// message): offset is the record's base offset, timestamp its server
// timestamp (µs), position the byte offset of the record in the .log. The
// active segment's index lives in memory (published to readers with an
// atomic count); a sealed segment keeps only a fence (the offset and
// timestamp of every 128th entry) in memory and reads one 3 KiB block of its
// .index with pread per lookup, so heap use does not grow with the data
// written.
//
// # Reading
//
// Read returns Extents: byte ranges of whole stored records (file, position,
// length, first/last record offsets). The caller sends them as they are with
// Extent.WriteTo (sendfile with an explicit offset to sockets, pread copy
// otherwise) or reads them into its own buffer with Extent.ReadAt, and
// slices the first/last record itself when a poll starts or ends inside a
// batch. Segments are pinned until ReadResult.Release.
//
// Verified before first served (verify.go): a sealed segment Open trusted
// without reading every record is unverified. Read, OffsetForTimestamp
// (for the record it answers) and ReadRecord first verify the records
// they would return that no read, Scrub or Open verified since Open:
// pread into a pooled buffer (runs of records with one call), Format.Verify
// and the offsets, count and length the index gives each slot. A record
// that fails is quarantined (as by Scrub, reported once through
// Options.DamageFound and by Damaged) and the read redone, so its extents
// stop before it or start after it. Each segment keeps a watermark (index
// entries below it are verified, or the whole segment is) and up to four
// verified spans past it: a read starting within 1 MiB of the watermark
// verifies from the watermark on, so a sequential consumer moves it and
// verifies each record once; a read deeper in (a poll by timestamp)
// verifies just its records as a span, which reads continuing from it
// extend and the watermark takes in when it reaches it. A verified
// segment costs a read one atomic load; segments this process wrote,
// segments recovery walked and segments a Scrub passed are verified.
// Verification takes no partition lock, so it never blocks appends.
//
// # Concurrency
//
// Lock order: Partition.syncMu -> Partition.mu -> Partition.qmu ->
// segment.flushMu (Offsets.mu is independent); qmu guards changes of the
// quarantine and its files; segment.vmu (the verified spans, verify.go) is
// a leaf, never held with another lock. Partition.mu guards append state and the
// segment list; it is never held across an fdatasync except when a segment
// is sealed (rolled), cut (TruncateFrom) or the partition purged, where the
// sealed segment is synced before the next one is created so that a crash can
// never leave a torn record in a sealed segment. Readers take no lock: they
// load the segment list and the committed end from atomics, pin a segment
// with a reference count, and read with pread (ReadAt) or sendfile with an
// explicit offset (only a lookup that failed on an index a TruncateFrom was
// shortening waits for that cut, then retries). Retention unlinks files
// immediately; the descriptors stay open until the last reader releases
// the segment.
//
// # Durability
//
// With Options.Fsync (topic option enforce_fsync = true) Append returns only
// after the record was written and its log fdatasync'ed, and the record
// becomes visible to readers only then; concurrent appenders share one
// fdatasync (group commit). The active segment's index entries are written
// but not synced: recovery rebuilds that index from the log, so one sync
// per round suffices; sealing syncs log and index, whose sealed index
// recovery then trusts. Without it records are visible once written to
// the page cache and a background goroutine syncs when the unsynced messages
// or bytes pass the configured thresholds, or on an interval; it exists only
// while there is something to sync (flusher.go). Flush and Close sync
// everything.
//
// Writes, syncs, cuts and reservations of the append path go through
// Options.FileIO (internal/fileio; the OS by default). A failed sync or a
// write error other than a full disk stops the log for good (no fsync is
// ever retried); a full disk refuses the append after cutting the partial
// record back, and the log resumes with the next append that fits
// (diskerr.go).
//
// # Held mode
//
// With Options.Held (cluster mode, where the partition's segments are its
// raft log) appended records stay invisible to Read, OffsetForTimestamp,
// Bounds and Stats until Reveal covers them (Tail still counts them), so
// an uncommitted raft tail is stored once, in place. ReadRecord reads any
// record by its base offset, revealed or not; TruncateFrom cuts an
// unrevealed suffix that raft replaces; ResetTo restarts the partition
// empty at a snapshot position, keeping consumer offsets (a marker makes
// an interrupted reset complete at Open). Segments roll at SegmentBytes as
// without Held, so a sealed segment may end with unrevealed records: reads
// stop at the revealed end, retention stops at the first segment holding
// an unrevealed record, and a TruncateFrom into a sealed segment removes
// the newer segments and makes the cut one active again. A held partition
// reopens with every intact record recovered and none revealed. Stats.Bytes
// counts sealed segments whole, unrevealed records included. See held.go,
// held_cut.go, readrecord.go and reset.go.
//
// # Damaged records
//
// A record that fails verification is quarantined, not refused, whenever
// its position and offsets can be located (recover.go, recover_locate.go):
// the recovery walk resumes where the damaged record's own length header
// ends or at an old index entry past it whose record verifies, and damage
// running to the end of a sealed segment ends where the next segment
// starts. The located bytes become one slot of the index (one Damage);
// Damaged lists the quarantine, oldest first. Only damage nothing locates
// still fails Open with a *CorruptError; a torn tail of the last segment
// (nothing valid after it) is still cut back to the last whole record.
//
// Reads (Read, OffsetForTimestamp, and so the sendfile path) never return
// a quarantined or unverified record: a read starting before a damaged range stops
// before it, one starting at or inside it starts after it (the offsets are
// skipped, like offsets removed by retention). ReadRecord of a quarantined
// record fails with a *CorruptError. Stats and Bounds still count the
// damaged offsets. A segment's quarantine is kept in
// {start_offset:020}.quarantine beside it (sidecar.go): recovery trusts a
// sealed index without reading every record, and a range located once
// stays quarantined even when what located it is gone (a torn tail cut
// after it), so offsets never go back. Retention, purge, reset and
// TruncateFrom remove a range with its segment or records.
//
// Without Options.VerifySealed, Open verifies the records of the active
// segment only (and the index and last record of each sealed one); the
// other records of a sealed segment are verified by the read that first
// returns them (see Reading), so nothing damaged is served: every record
// served was verified since Open opened its segment, at Open, by a read or
// by Scrub (scrub.go). Scrub re-verifies every record of the sealed
// segments against their index at a bounded rate (a token bucket,
// scrub_pace.go), beside appends, reads and retention, quarantines what
// fails, and finds rot that appears after a record was verified.
// RepairRecord (repair.go) writes verified bytes over a quarantined slot
// and lifts it. Storage does not log: the caller logs Damaged after Open,
// what Options.DamageFound reports, and ScrubReport.New after a pass.
//
// # Files and space
//
// Space for the active segment is reserved ahead of its end in growing
// steps (reserve.go), and its index file is open only once something was
// flushed to it (idxfile.go), so an idle partition holds one descriptor.
//
// fdatasync here means the data sync of the OS (sync_*.go): fdatasync on
// Linux, fcntl(F_FULLFSYNC) on macOS (fsync where the file system refuses
// it), FlushFileBuffers on Windows, fsync elsewhere. Directory syncs are
// skipped on Windows, which cannot flush a directory; preallocation exists
// only on Linux; sendfile is used on Linux, macOS and FreeBSD. See
// "Platforms" in docs/DESIGN.md.
package storage
