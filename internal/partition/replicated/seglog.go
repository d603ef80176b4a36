package replicated

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// segLog is a partition group's raft log whose batches live in the
// partition's segment files (cluster mode): message bytes are written
// once, to the segment, when raft hands the entry to this node, committed
// or not.
//
// Append writes the stamped record of every send entry to the partition
// with storage.AppendStamped (the partition is opened in storage's Held
// mode, so the record stays invisible to consumers) and gives the inner
// log (the group's raft log files, internal/replication/raftlog) only the
// entry's header, flagged flagStored and carrying the record length.
// Every other entry (offsets, purge, configuration changes, the leader's
// empty entries) goes to the inner log whole. Entries rebuilds a stored
// entry from its header and the record read back from the segment
// (storage.ReadRecord), or takes it from a small cache of the entries
// appended and not yet applied, which serves the apply of fresh entries
// without a read. Apply (apply.go) then only reveals the record
// (storage.Reveal): consumers see committed entries only.
//
// raft replacing an uncommitted suffix truncates the segment too
// (storage.TruncateFrom at the first replaced batch); committed records
// are never cut (storage refuses to cut revealed ones).
//
// Purge. A purge entry resets the offsets, so the batches after it in the
// log start at offset 0 again and cannot go to the segment while the purge
// has not applied. segLog stores entries and applies none: a batch that
// follows a purge entry not yet applied here is kept whole in the inner
// log (its record with it), and so is every batch after a whole one until
// that one has applied; apply (apply.go) appends the record of a whole
// batch to the segment. The leader never stamps a batch while a purge it
// holds is unapplied (prepare answers errPurgePending), so whole batches
// occur on followers that receive a purge and batches after it in one go,
// and they are applied moments later. Apply tells segLog what applied
// (applied) and which records a purge removed (purged).
//
// Start-up (openSegLog) reconciles the two files: a record beyond the
// last batch the inner log accounts for (the process died between the two
// writes) is cut; a stored header whose record is missing (an OS crash
// lost unsynced segment pages but not the raft log's) stops the group
// with errSegmentsBehind, and the replica must be rebuilt (remove-node,
// add-node). Records up to the stored commit index are revealed at once.
//
// All methods run on the host's loop (the mutex makes tests and the
// start-up scan race-free).
type segLog struct {
	inner replication.LogStorage
	part  *storage.Partition

	mu sync.Mutex
	// purgedAt is the index of the last purge applied here: the records of
	// the entries at or below it are gone (purged).
	purgedAt uint64
	// pendingPurge is the index of the last purge entry appended and not
	// yet applied here (0: none); lastWhole that of the last batch kept
	// whole. While either is above lastApplied, batches are kept whole.
	pendingPurge uint64
	lastWhole    uint64
	lastApplied  uint64
	// local, when set, says how this node seals the partition's batches
	// (Local.Sealing) and checks that a sealed batch opens with its key
	// (Local.VerifySealed); nil in tests of a bare log.
	local Local
	cache entryCache
	buf   []*raftpb.Entry
	// reads counts batches read back from the segment; keptWhole counts
	// batches kept whole (State).
	reads     atomic.Uint64
	keptWhole atomic.Uint64
}

// errKeyMismatch: the leader sealed a batch with another key than this
// node's, or sealed it while this node stores plaintext, or the reverse.
var errKeyMismatch = errors.New("partition: the leader's encryption of this batch does not match this node's system.encryption.key (every node of a cluster needs the same key)")

// errForeignStored: a stored header arrived from raft where a whole entry
// was expected.
var errForeignStored = errors.New("partition: a raft entry arrived without its batch")

// Append stores entries: batches to the segment, headers and every other
// entry to the inner log (see segLog).
func (s *segLog) Append(entries []*raftpb.Entry) error {
	sync, err := s.appendEntries(entries, false)
	if err == nil && sync != nil {
		err = sync()
	}
	return err
}

// AppendDeferred implements replication.DeferredSync: Append, with the
// fsync of the segment (enforce_fsync) and of the header log left to the
// returned function.
func (s *segLog) AppendDeferred(entries []*raftpb.Entry) (func() error, error) {
	return s.appendEntries(entries, true)
}

// appendEntries is Append; with deferred the syncs are returned instead of
// done (nil when there are none).
func (s *segLog) appendEntries(entries []*raftpb.Entry, deferred bool) (func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(entries) == 0 {
		return nil, s.inner.Append(entries)
	}
	from := entries[0].GetIndex()
	last, err := s.inner.LastIndex()
	if err != nil {
		return nil, err
	}
	if from <= last {
		if err := s.truncate(from, last); err != nil {
			return nil, err
		}
	}
	out := s.buf[:0]
	var seq uint64
	for _, e := range entries {
		h, sq, err := s.store(e, deferred)
		if err != nil {
			return nil, fmt.Errorf("raft entry %d: %w", e.GetIndex(), err)
		}
		seq = max(seq, sq)
		out = append(out, h)
	}
	s.buf = out
	var innerSync func() error
	if d, ok := s.inner.(replication.DeferredSync); ok && deferred {
		innerSync, err = d.AppendDeferred(out)
	} else {
		err = s.inner.Append(out)
	}
	clear(out)
	if err != nil {
		return nil, err
	}
	s.cache.put(entries)
	if seq == 0 && innerSync == nil {
		return nil, nil
	}
	part := s.part
	return func() error {
		if err := part.Sync(seq); err != nil {
			return fmt.Errorf("sync batches: %w", err)
		}
		if innerSync != nil {
			return innerSync()
		}
		return nil
	}, nil
}

// truncate handles raft replacing entries from..last: the segment loses
// the records of replaced batches, a replaced purge is no longer pending.
func (s *segLog) truncate(from, last uint64) error {
	s.cache.truncate(from)
	if s.pendingPurge >= from {
		s.pendingPurge = 0
	}
	if s.lastWhole >= from {
		s.lastWhole = from - 1 // kept whole until what precedes applied
	}
	err := forEntries(s.inner, from, last, func(e *raftpb.Entry) (bool, error) {
		b, ok := storedHeader(e)
		if !ok {
			return true, nil
		}
		if err := s.part.TruncateFrom(b.base); err != nil {
			return false, fmt.Errorf("replace raft entries from %d: %w", from, err)
		}
		return false, nil
	})
	return err
}

// store writes e's batch to the segment and returns the header the inner
// log keeps; other entries, and batches kept whole (see segLog), are
// returned as they are.
// With deferred, a batch's fsync (enforce_fsync) is left to the caller:
// seq is the append to sync (0: none).
func (s *segLog) store(e *raftpb.Entry, deferred bool) (h *raftpb.Entry, seq uint64, err error) {
	d := e.GetData()
	if e.GetType() != raftpb.EntryNormal || len(d) < entryCommonLen || d[1] != entryVersion {
		return e, 0, nil
	}
	switch d[0] {
	case entryPurge:
		s.pendingPurge = e.GetIndex()
		return e, 0, nil
	case entrySend:
	default:
		return e, 0, nil
	}
	if d[2]&flagStored != 0 {
		return nil, 0, errForeignStored
	}
	if len(d) < entrySendLen+wire.BatchHeaderSize {
		return e, 0, nil // malformed: kept whole, its apply reports it
	}
	rec := d[entrySendLen:]
	count := binary.LittleEndian.Uint32(d[offSendCount:])
	base := binary.LittleEndian.Uint64(d[offSendBase:])
	ts := binary.LittleEndian.Uint64(d[offSendTs:])
	if s.local != nil {
		tag, from := s.local.Sealing()
		if got := d[3]; got != tag && (got != 0 || base >= from) {
			return nil, 0, fmt.Errorf("%w: batch at offset %d has key tag %d, this node's is %d", errKeyMismatch, base, got, tag)
		}
		if d[3] != 0 {
			// The tag matches; the key itself must too (the tag is one byte).
			if err := s.local.VerifySealed(rec); err != nil {
				return nil, 0, fmt.Errorf("%w: batch at offset %d does not open with this node's key: %w", errKeyMismatch, base, err)
			}
		}
	}
	if s.pendingPurge > s.lastApplied || s.lastWhole > s.lastApplied {
		s.lastWhole = e.GetIndex()
		s.keptWhole.Add(1)
		return e, 0, nil
	}
	if deferred {
		_, seq, err = s.part.AppendStampedDeferred(rec, count, base, ts)
	} else {
		_, err = s.part.AppendStamped(rec, count, base, ts)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("store batch at offset %d: %w", base, err)
	}
	hd := make([]byte, entrySendLen)
	copy(hd, d[:entrySendLen])
	hd[2] |= flagStored
	binary.LittleEndian.PutUint32(hd[offSendRecLen:], uint32(len(rec)))
	return &raftpb.Entry{Term: e.Term, Index: e.Index, Type: e.Type, Data: hd}, seq, nil
}

// Entries returns entries [lo, hi) within maxSize (at least one), stored
// batches rebuilt from the cache or the segment.
func (s *segLog) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ents, err := s.inner.Entries(lo, hi, maxSize)
	if err != nil {
		return nil, err
	}
	out := make([]*raftpb.Entry, 0, len(ents))
	var size uint64
	for _, e := range ents {
		full, err := s.whole(e)
		if err != nil {
			return nil, err
		}
		size += uint64(proto.Size(full))
		if len(out) > 0 && size > maxSize {
			break
		}
		out = append(out, full)
	}
	return out, nil
}

// whole returns e with its batch (e itself unless it is a stored header).
func (s *segLog) whole(e *raftpb.Entry) (*raftpb.Entry, error) {
	b, ok := storedHeader(e)
	if !ok {
		return e, nil
	}
	d := e.GetData()
	if c := s.cache.get(e.GetIndex()); c != nil && c.GetTerm() == e.GetTerm() {
		return c, nil
	}
	if e.GetIndex() <= s.purgedAt {
		// The batch is gone with the purge executed here after it (the
		// log is compacted there only once the purge has applied, so a
		// restart in between still holds the header): an entry without
		// effect takes its place, same index and term, for the replay and
		// for a follower that lags behind the purge, which then applies
		// the purge itself.
		tomb := make([]byte, entryCommonLen)
		copy(tomb, d[:entryCommonLen])
		tomb[0], tomb[2] = entryPurged, tomb[2]&flagWindowed // still a duplicate if retried
		return &raftpb.Entry{Term: e.Term, Index: e.Index, Type: e.Type, Data: tomb}, nil
	}
	n, base := b.recLen, b.base
	buf := make([]byte, entrySendLen, entrySendLen+int(n))
	copy(buf, d)
	buf[2] &^= flagStored
	binary.LittleEndian.PutUint32(buf[offSendRecLen:], 0)
	s.reads.Add(1)
	buf, count, err := s.part.ReadRecord(buf, base)
	switch {
	case errors.Is(err, storage.ErrNoRecord):
		// Removed by retention before the log was compacted past it:
		// raft sends the snapshot instead.
		return nil, raft.ErrCompacted
	case err != nil:
		return nil, fmt.Errorf("raft entry %d: read batch at offset %d: %w", e.GetIndex(), base, err)
	case count != b.count || len(buf) != entrySendLen+int(n):
		return nil, fmt.Errorf("raft entry %d: the segment record at offset %d holds %d messages in %d bytes, the raft log says %d in %d",
			e.GetIndex(), base, count, len(buf)-entrySendLen, b.count, n)
	}
	return &raftpb.Entry{Term: e.Term, Index: e.Index, Type: e.Type, Data: buf}, nil
}

// headers returns the inner log: stored batches as headers only (what
// stampLog scans).
func (s *segLog) headers() replication.LogStorage { return s.inner }

// applied notes that the entries up to index have applied (called by
// apply before it applies the entry at index): cached entries up to it are
// released, and a purge or whole batch at or below it no longer holds
// batches whole.
func (s *segLog) applied(index uint64) {
	s.mu.Lock()
	s.cache.drop(index)
	s.lastApplied = max(s.lastApplied, index)
	s.mu.Unlock()
}

// purged notes that the purge at index applied here: the records of the
// entries at or below it are gone.
func (s *segLog) purged(index uint64) {
	s.mu.Lock()
	s.purgedAt = max(s.purgedAt, index)
	s.mu.Unlock()
}

// Term, LastIndex, FirstIndex, Snapshot, InitialState and the writes
// below act on the inner log.

// Term returns the term of entry i.
func (s *segLog) Term(i uint64) (uint64, error) { return s.inner.Term(i) }

// LastIndex returns the last index of the log.
func (s *segLog) LastIndex() (uint64, error) { return s.inner.LastIndex() }

// FirstIndex returns the first index of the log.
func (s *segLog) FirstIndex() (uint64, error) { return s.inner.FirstIndex() }

// Snapshot returns the latest snapshot.
func (s *segLog) Snapshot() (*raftpb.Snapshot, error) { return s.inner.Snapshot() }

// InitialState returns the stored hard state and configuration.
func (s *segLog) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	return s.inner.InitialState()
}

// SetHardState stores term, vote and commit.
func (s *segLog) SetHardState(st *raftpb.HardState) error { return s.inner.SetHardState(st) }

// ApplySnapshot replaces the log with snap; the plane's Restore moves the
// partition to the snapshot's position.
func (s *segLog) ApplySnapshot(snap *raftpb.Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.truncate(0)
	s.pendingPurge, s.lastWhole = 0, 0
	s.lastApplied = max(s.lastApplied, snap.GetMetadata().GetIndex())
	return s.inner.ApplySnapshot(snap)
}

// CreateSnapshot records a snapshot at index i.
func (s *segLog) CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (*raftpb.Snapshot, error) {
	return s.inner.CreateSnapshot(i, cs, data)
}

// Compact discards the log up to compactIndex.
func (s *segLog) Compact(compactIndex uint64) error {
	s.mu.Lock()
	s.cache.drop(compactIndex)
	s.mu.Unlock()
	return s.inner.Compact(compactIndex)
}

// Close closes the inner log (the partition is closed by its owner).
func (s *segLog) Close() error {
	closeStorage(s.inner)
	return nil
}

// closeStorage closes a log storage that holds files.
func closeStorage(st replication.LogStorage) {
	if c, ok := st.(io.Closer); ok {
		_ = c.Close()
	}
}
