package replicated

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// Purge in cluster mode.
//
// PurgeTopic is a metadata effect that runs on every node, each at its
// own moment relative to the partition groups' logs; purging there would
// reset offsets at different log positions on different replicas. So in
// cluster mode a purge is a partition-log entry, applied by every replica
// at the same log position: it purges the partition (messages and
// consumer offsets) and the stamping tail restarts at 0 right after it.
//
// Every purge has an identity, the same on every node: the metadata log
// position of the PURGE_TOPIC (catalog.TopicRef.PurgedAt). PurgeTopic
// only records, on every node, that the identity is wanted; the keeper
// (keeper.go) of whichever node leads the partition group
// proposes it, now or when it becomes the leader later, until it has
// applied. A purge entry whose identity has applied already is a no-op,
// and the leader refuses to propose an identity its log already holds
// (stampLog.prepare), so two nodes proposing the same purge purge once.
// At start-up the wanted identity comes back from the metadata state
// (CreatePartitions carries it), so a purge no node had proposed before
// a restart of every node still happens.
//
// Deleting a consumer group's offsets (DeleteGroupOffsets) goes the same
// way (group ids are never reused, so a second deletion is harmless): the
// group stays wanted on the replica until its offset-deletion entry has
// applied here.
//
// The raft index and the identity of the last purge applied are kept in
// purgeFileName in the partition directory (written after the purge
// itself), so that a restart, which replays the group's log from its
// first index, neither re-applies what came before it nor wants that
// purge again.

// purgeFileName is the purge record's file in the partition directory.
const purgeFileName = "raft-purge"

// wantDeletes records that rep wants the offsets of groups deleted.
func (cl *Set) wantDeletes(rep *Replica, groups ...uint32) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if rep.wantDelete == nil {
		rep.wantDelete = map[uint32]struct{}{}
	}
	for _, g := range groups {
		rep.wantDelete[g] = struct{}{}
	}
	rep.deletes.Store(int32(len(rep.wantDelete)))
}

// wantDeletedGroups records, at a group's start, the deletion of every
// consumer group offset rep holds for a group the metadata deleted
// (catalog.GroupHistory): a deletion that had applied nowhere before a
// restart of every node is proposed again.
func (s *Set) wantDeletedGroups(rep *Replica) {
	h, ok := s.catalog().(catalog.GroupHistory)
	if !ok || rep.part.Log == nil {
		return
	}
	var gone []uint32
	for _, o := range rep.part.Log.Offsets().All() {
		if o.Kind == storage.KindGroup && h.GroupDeleted(rep.ref, o.ID) {
			gone = append(gone, o.ID)
		}
	}
	if len(gone) == 0 {
		return
	}
	s.wantDeletes(rep, gone...)
	s.log.Info("offsets of deleted consumer groups found; their deletion is proposed again", "dir", rep.part.Dir, "groups", gone)
}

// purge removes the partition's messages and offsets at the purge entry
// of the group's log at index: the plane's purge (Local.Purge), or the
// storage's own in tests of a bare partition.
func (part *Partition) purge(index uint64) error {
	if part.Local != nil {
		return part.Local.Purge(index)
	}
	return part.Log.Purge()
}

// want raises the purge identity rep wants.
func (rep *Replica) want(id uint64) {
	for {
		cur := rep.wantPurge.Load()
		if id <= cur || rep.wantPurge.CompareAndSwap(cur, id) {
			return
		}
	}
}

// applyPurge purges the partition at a purge entry of identity id and
// records its index and identity. An identity already applied here is a
// no-op (0, an entry from before identities, always applies).
func (s *Set) applyPurge(rep *Replica, index, id uint64) applyResult {
	part := rep.part
	done := rep.purgeID.Load()
	if id != 0 && id <= done {
		s.log.Info("purge already applied; entry ignored", "dir", part.Dir, "index", index, "purge", id)
		return applyResult{}
	}
	if err := part.purge(index); err != nil {
		s.log.Error("replicated purge failed", "dir", part.Dir, "err", err)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	}
	id = max(id, done)
	if err := writePurgeRecord(part.Dir, purgeRecord{index: index, id: id}); err != nil {
		s.log.Error("record of a replicated purge not written; a restart re-applies older entries", "dir", part.Dir, "err", err)
	}
	rep.purgedAt = index
	rep.purgeID.Store(id)
	if seg := rep.seg.Load(); seg != nil {
		seg.purged(index)
	}
	s.notify()
	s.compactAtPurge(rep, index)
	return applyResult{}
}

// completeInterruptedPurge records a purge that ran before a crash but
// was not recorded: the log's last purge entry after the recorded one is
// committed and not applied as far as the record says, batches before it
// are stored, and yet the partition is empty (only a purge empties a
// partition to offset 0). Without it, the replay would find those
// batches missing from the segments. Start-up, before the log is opened.
func (s *Set) completeInterruptedPurge(rep *Replica, st replication.LogStorage) error {
	last, err := st.LastIndex()
	if err != nil {
		return err
	}
	var pending, pendingID, expect uint64
	err = forEntriesBack(st, last, func(e *raftpb.Entry) (bool, error) {
		if e.GetIndex() <= rep.purgedAt {
			return false, nil
		}
		if isPurge(e) {
			if pending == 0 {
				pending, pendingID = e.GetIndex(), purgeIDOf(e.GetData())
			}
			return true, nil
		}
		if b, ok := storedHeader(e); ok {
			expect = b.end()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if next, _ := rep.part.Log.Tail(); pending == 0 || expect == 0 || next != 0 {
		return nil
	}
	id := max(pendingID, rep.purgeID.Load())
	if err := writePurgeRecord(rep.part.Dir, purgeRecord{index: pending, id: id}); err != nil {
		return fmt.Errorf("complete the purge at %d: %w", pending, err)
	}
	s.log.Info("a purge interrupted by a crash was completed", "dir", rep.part.Dir, "index", pending, "purge", id)
	rep.purgedAt = pending
	rep.purgeID.Store(id)
	s.compactAtPurge(rep, pending)
	return nil
}

// adoptPurge makes id the identity of the last purge applied to rep when
// it is higher than the one known (a partition snapshot, which carries
// the identity of the last purge before its index, was restored), and
// persists it in the purge record, so the keeper does not want that purge
// again and the leader refuses to propose it. Host's loop or start-up.
func (s *Set) adoptPurge(rep *Replica, id uint64) error {
	if id <= rep.purgeID.Load() {
		return nil
	}
	if err := writePurgeRecord(rep.part.Dir, purgeRecord{index: rep.purgedAt, id: id}); err != nil {
		return fmt.Errorf("adopt purge %d: %w", id, err)
	}
	rep.purgeID.Store(id)
	s.notify()
	return nil
}

// adoptLogSnapshot adopts the purge identity of st's snapshot (start-up;
// none for a log without one, or with an empty snapshot: a bootstrap).
func (s *Set) adoptLogSnapshot(rep *Replica, st replication.LogStorage) error {
	snap, err := st.Snapshot()
	if err != nil {
		return fmt.Errorf("raft log snapshot: %w", err)
	}
	if len(snap.GetData()) == 0 {
		return nil
	}
	ps, err := decodeSnapshot(snap.GetData())
	if err != nil {
		return fmt.Errorf("raft log snapshot at %d: %w", snap.GetMetadata().GetIndex(), err)
	}
	return s.adoptPurge(rep, ps.purge)
}

// deleted notes that group's offsets are deleted on rep (apply, on the
// host's loop): the deletion is no longer wanted here.
func (s *Set) deleted(rep *Replica, group uint32) {
	cl := s
	cl.mu.Lock()
	_, ok := rep.wantDelete[group]
	delete(rep.wantDelete, group)
	rep.deletes.Store(int32(len(rep.wantDelete)))
	cl.mu.Unlock()
	if ok {
		cl.notify()
	}
}

// The purge record: u64 raft index, u64 purge identity, u32 CRC-32C of
// both. The older form without the identity (u64 index, u32 CRC) still
// reads, as identity 0.
var purgeCRC = crc32.MakeTable(crc32.Castagnoli)

const (
	purgeRecordLen       = 20
	purgeRecordLegacyLen = 12
)

// purgeRecord is the last purge applied to a partition: its raft index
// and its identity.
type purgeRecord struct{ index, id uint64 }

// readPurgeRecord returns the recorded purge (zero when none).
func readPurgeRecord(dir string) (purgeRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, purgeFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return purgeRecord{}, nil
	}
	if err != nil {
		return purgeRecord{}, fmt.Errorf("read purge record: %w", err)
	}
	n := len(b) - 4
	if (len(b) != purgeRecordLen && len(b) != purgeRecordLegacyLen) || crc32.Checksum(b[:n], purgeCRC) != binary.LittleEndian.Uint32(b[n:]) {
		return purgeRecord{}, fmt.Errorf("purge record %s is corrupt", filepath.Join(dir, purgeFileName))
	}
	r := purgeRecord{index: binary.LittleEndian.Uint64(b)}
	if len(b) == purgeRecordLen {
		r.id = binary.LittleEndian.Uint64(b[8:])
	}
	return r, nil
}

// writePurgeRecord durably records r (fileio.WriteFileAtomic).
func writePurgeRecord(dir string, r purgeRecord) error {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, purgeRecordLen), r.index)
	b = binary.LittleEndian.AppendUint64(b, r.id)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, purgeCRC))
	if err := fileio.WriteFileAtomic(filepath.Join(dir, purgeFileName), b); err != nil {
		return fmt.Errorf("write purge record: %w", err)
	}
	return nil
}
