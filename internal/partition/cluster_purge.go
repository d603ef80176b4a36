package partition

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// Purge in cluster mode.
//
// PurgeTopic is a metadata effect that runs on every node, each at its
// own moment relative to the partition groups' logs; purging there would
// reset offsets at different log positions on different replicas. So in
// cluster mode PurgeTopic only makes the leader of each partition group
// propose a purge entry to that group (asynchronously, the call may run
// on the host's loop); followers do nothing locally. The purge entry is
// applied by every replica at the same log position: it purges the
// partition (messages and consumer offsets) and the stamping tail restarts
// at 0 right after it in the log. A node that does not lead the group
// when the purge applies in the metadata plane (no leader known: it waits
// up to purgeLeaderWait for one) leaves the proposal to the leader.
//
// A choice (the behaviour of two nodes that both believed they led when
// the metadata entry applied is unspecified): each would propose, and the
// partition would be purged twice; a second purge only loses messages
// sent between the two entries. raft's CheckQuorum makes this window one
// leader change wide.
//
// The raft index of the last purge applied is kept in purgeFileName in the
// partition directory (written after the purge itself), so that a restart,
// which replays the group's log from its first index, does not re-apply
// what came before it.

const (
	purgeFileName   = "raft-purge"
	purgeLeaderWait = 10 * time.Second
	proposeTimeout  = 5 * time.Second
)

// purgeCluster queues the purge proposals of a topic's partitions.
func (p *Plane) purgeCluster(t catalog.TopicRef) {
	p.proposeToTopic(t, "purge", func() *entry { return &entry{kind: entryPurge} })
}

// deleteGroupOffsetsCluster queues, for every partition of a topic, the
// proposal that deletes a consumer group's offset (DeleteGroupOffsets in
// cluster mode): like a purge, the deletion then applies at one log
// position on every replica instead of at each node's metadata apply.
func (p *Plane) deleteGroupOffsetsCluster(t catalog.TopicRef, group uint32) {
	p.proposeToTopic(t, "delete group offsets", func() *entry {
		return &entry{kind: entryOffsetDelete, consumer: storage.KindGroup, id: group}
	})
}

// proposeToTopic queues, for each partition group of topic t, the
// proposal of the entry mk returns by that group's leader (what names it
// in log lines). Until it has applied here, the partition's writes wait
// (awaitQueued): the command's reply goes out when its metadata entry
// applies, and a send that follows it must land after the purge, not
// before.
func (p *Plane) proposeToTopic(t catalog.TopicRef, what string, mk func() *entry) {
	for _, part := range p.topicParts(t) {
		g := GroupID(t, part.id)
		if p.cl.replicaOf(g) == nil {
			continue
		}
		e := mk()
		e.origin = uint32(p.cl.r.Self())
		data := e.encode()
		part.queued.Add(1)
		p.cl.ops.push(func(ctx context.Context) {
			defer part.queued.Add(-1)
			p.proposeAsLeader(ctx, g, what, data)
		})
	}
}

// proposeAsLeader proposes data to group g if this node leads it,
// retrying while leadership is settling.
func (p *Plane) proposeAsLeader(ctx context.Context, g replication.GroupID, what string, data []byte) {
	cl := p.cl
	ctx, cancel := context.WithTimeout(ctx, purgeLeaderWait)
	defer cancel()
	for {
		v, err := cl.r.WaitFor(ctx, g, func(v replication.View) bool { return v.HasLeader })
		if err != nil {
			p.log.Warn(what+": no leader for the partition group", "group", uint64(g), "err", err)
			return
		}
		if v.Leader != cl.r.Self() {
			return // the leader proposes
		}
		pctx, pcancel := context.WithTimeout(ctx, proposeTimeout)
		_, err = cl.r.Propose(pctx, g, data)
		pcancel()
		switch {
		case err == nil:
			return
		case errors.Is(err, replication.ErrOutcomeUnknown) || ctx.Err() != nil:
			p.log.Warn(what+": proposal outcome unknown", "group", uint64(g), "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// applyPurge purges the partition at a purge entry and records its index.
func (p *Plane) applyPurge(rep *replica, index uint64) applyResult {
	part := rep.part
	if err := p.resetCrypt(part); err != nil {
		p.log.Error("replicated purge failed", "dir", part.dir, "err", err)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	}
	if err := part.log.Purge(); err != nil {
		p.log.Error("replicated purge failed", "dir", part.dir, "err", err)
		return applyResult{code: wire.ErrCannotAppendMessage.Code}
	}
	if err := writePurgeIndex(part.dir, index); err != nil {
		p.log.Error("record of a replicated purge not written; a restart re-applies older entries", "dir", part.dir, "err", err)
	}
	rep.purgedAt = index
	p.compactAtPurge(rep, index)
	return applyResult{}
}

// The purge record: u64 raft index, u32 CRC-32C of it.
var purgeCRC = crc32.MakeTable(crc32.Castagnoli)

// readPurgeIndex returns the recorded purge index (0 when none).
func readPurgeIndex(dir string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, purgeFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read purge record: %w", err)
	}
	if len(b) != 12 || crc32.Checksum(b[:8], purgeCRC) != binary.LittleEndian.Uint32(b[8:]) {
		return 0, fmt.Errorf("purge record %s is corrupt", filepath.Join(dir, purgeFileName))
	}
	return binary.LittleEndian.Uint64(b), nil
}

// writePurgeIndex durably records index (temporary file, fsync, rename).
func writePurgeIndex(dir string, index uint64) error {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 12), index)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, purgeCRC))
	tmp := filepath.Join(dir, purgeFileName+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write purge record: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, purgeFileName))
	}
	if err != nil {
		return fmt.Errorf("write purge record: %w", err)
	}
	return nil
}

// awaitQueued waits (up to proposeTimeout) until the entries queued for
// part by metadata commands have applied here; false when they have not.
func (p *Plane) awaitQueued(part *partition) bool {
	if part.queued.Load() == 0 {
		return true
	}
	deadline := time.Now().Add(proposeTimeout)
	for part.queued.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(purgeRetry)
	}
	return true
}
