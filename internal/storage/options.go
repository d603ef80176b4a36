package storage

import (
	"errors"
	"time"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// Defaults, from the topic option catalogue (../shared/design/semantics.md §3.4).
const (
	// DefaultSegmentBytes is the default segment_size (1 GiB).
	DefaultSegmentBytes = 1 << 30
	// DefaultFlushMessages is the default messages_required_to_save.
	DefaultFlushMessages = 1024
	// DefaultFlushBytes is the default size_of_messages_required_to_save (1 MiB).
	DefaultFlushBytes = 1 << 20
	// DefaultFlushInterval bounds how long unsynced data may sit in the page
	// cache when the thresholds are not reached. The reference has no such
	// timer (a sub-threshold tail waits for the next commit); ours is a
	// deliberate addition so an idle partition does not keep data unsynced.
	DefaultFlushInterval = time.Second
	// DefaultMaxRecordBytes bounds one record: the default transport frame
	// limit (message_bus.max_message_size, 64 MiB).
	DefaultMaxRecordBytes = 64 << 20
)

// Options configure a Partition. The zero value of every field except Format
// selects the default.
type Options struct {
	// Format stamps and verifies records. Required.
	Format Format
	// SegmentBytes is segment_size: after an append that makes the active
	// segment at least this large, the segment is sealed and a new one starts
	// (a soft limit, a segment may exceed it by one record).
	SegmentBytes int64
	// Preallocate reserves SegmentBytes of disk for each new active segment
	// with fallocate(FALLOC_FL_KEEP_SIZE) (preallocate_segments); the file size
	// is unchanged so recovery is unaffected, and unused space is released
	// when the segment is sealed. Filesystems without fallocate, and OSes
	// other than Linux (prealloc_other.go), are ignored.
	Preallocate bool
	// Fsync is enforce_fsync: Append returns only after the record and its
	// index entry are on disk, and readers see the record only then.
	Fsync bool
	// Held makes appended records invisible to readers (Read,
	// OffsetForTimestamp, Bounds, Stats) until Reveal covers them: the
	// partition is a replicated log whose tail may still be uncommitted
	// (cluster mode). Tail still reports every appended record. With Fsync,
	// AppendStamped/Append still return only once the record is on disk.
	// See held.go for segment rolls, TruncateFrom and reopening.
	Held bool
	// OffsetsFsync (consumer_offset_durability = "persisted") makes every
	// consumer-offset write durable (file and directory synced) before it
	// returns; Fsync implies it.
	OffsetsFsync bool
	// FlushMessages and FlushBytes are the background flush thresholds
	// (messages_required_to_save, size_of_messages_required_to_save) used
	// when Fsync is off: the flusher syncs once this many messages or bytes
	// are unsynced.
	FlushMessages uint64
	FlushBytes    uint64
	// FlushInterval bounds how long unsynced data waits for a sync when no
	// threshold is reached: the first unsynced append arms a timer of this
	// length. Negative disables the timer.
	FlushInterval time.Duration
	// MaxRecordBytes bounds one record, at append and during recovery.
	MaxRecordBytes int64
	// VerifySealed makes Open read and verify every record of every sealed
	// segment, not only the active one. Off, a sealed segment is trusted when
	// its index is well formed and its last record verifies and ends exactly
	// at the end of the log, and its other records are verified by the
	// reads that first return them (verify.go).
	VerifySealed bool
	// DamageFound, when set, is called once for each range of records a
	// read (Read, OffsetForTimestamp, ReadRecord) found damaged and
	// quarantined: a sealed segment Open trusted without VerifySealed is
	// verified by the reads that first return its records (verify.go).
	// Damage found by Open is in Damaged, by Scrub in ScrubReport.New. It
	// runs on the reading goroutine, outside the partition's locks.
	DamageFound func(Damage)
	// Clock returns the current time; it stamps records and drives
	// retention by age. Default time.Now.
	Clock func() time.Time
	// Observer, when set, receives write and sync latencies (observe.go)
	// and, if it is a WriteErrorObserver, the disk errors (diskerr.go).
	Observer Observer
	// FileIO performs the append path's writes, syncs, cuts and
	// reservations; nil is the operating system. Tests inject disk
	// errors through it (fileio.Faults). Recovery at Open uses the OS.
	FileIO fileio.IO
	// OnDisk, when set, is told when the disk refuses or stops the log
	// and when space is back (diskerr.go). It runs with the partition's
	// lock held: it must be quick and must not call the partition.
	OnDisk func(DiskReport)
}

func (o Options) withDefaults() (Options, error) {
	if o.Format == nil {
		return o, errors.New("storage: Options.Format is required")
	}
	if o.Format.HeaderLen() <= 0 {
		return o, errors.New("storage: Format.HeaderLen must be positive")
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.FlushMessages == 0 {
		o.FlushMessages = DefaultFlushMessages
	}
	if o.FlushBytes == 0 {
		o.FlushBytes = DefaultFlushBytes
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxRecordBytes > maxRecordLimit {
		o.MaxRecordBytes = maxRecordLimit
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.FileIO == nil {
		o.FileIO = osIO{}
	}
	return o, nil
}

// maxRecordLimit is the largest record length the in-memory index can hold
// (its length field is a uint32).
const maxRecordLimit = 1<<32 - 1
