package tier

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggo-dev/iggo/internal/storage"
)

// remoteIndexDir is the directory, in a partition directory, that keeps
// the index of every segment in the manifest ({start:020}.index), so a
// remote read finds its records with local preads.
const remoteIndexDir = "remote"

// LocalRetention is how much sealed data a partition keeps on local disk
// once it is in the remote tier; the active segment is always local.
type LocalRetention struct {
	// Bytes is the size of uploaded sealed segments kept locally, newest
	// first; 0 drops each local copy as soon as it is uploaded, and
	// Unlimited keeps them all.
	Bytes uint64
	// Age drops local copies of uploaded segments whose newest record is
	// older; 0 is no age rule.
	Age time.Duration
}

// Unlimited is a LocalRetention.Bytes that keeps every segment local.
const Unlimited = ^uint64(0)

// Cluster connects a partition's remote tier to its raft group (cluster
// mode, internal/partition/replicated). Only the group's leader uploads;
// the fact that a segment is in the bucket travels through the group's
// log as a record (Publish), which every replica applies to its own
// manifest (ApplyRecord), so every replica drops its local copies by the
// same rule and serves reads of the bucket. A replica that catches up
// from a snapshot gets the manifest in it (Snapshot, Restore) and then
// only the local segments as log entries.
type Cluster interface {
	// Leads reports whether this replica leads the group now.
	Leads() bool
	// Publish proposes a record to the group and returns once it applied
	// here (or failed).
	Publish(ctx context.Context, record []byte) error
	// DropOldest removes the k oldest local segments, first offset kept
	// keep, once the group's log is compacted past them; nothing when
	// the local log changed since (storage.Partition.OldestSegmentsEnd).
	DropOldest(k int, keep uint64) (storage.Removed, error)
}

// Partition is one partition's log across both tiers: the local log
// (storage.Partition) holds the newest segments, the bucket the older
// ones its manifest lists. Reads, bounds, stats and retention see one log.
// All methods are safe for concurrent use.
type Partition struct {
	m      *Manager
	ref    PartitionRef
	dir    string
	log    *storage.Partition
	format storage.Format
	// cl connects the partition to its raft group; nil on a single node.
	cl Cluster

	// dropMu serialises the removals of local segments (local retention,
	// retention, DELETE_SEGMENTS), each decided from one look at both
	// tiers. It is taken before mu.
	dropMu sync.Mutex
	// mu serialises changes of the manifest (uploads listed, records
	// applied, retention, purge). It is never held while waiting for the
	// replication loop, which applies records under it.
	mu sync.Mutex
	// man is the current manifest, replaced whole (readers load it).
	man atomic.Pointer[Manifest]
	// keep is the local retention.
	keep atomic.Pointer[LocalRetention]
	// warned and remoteWarned hold the starts of segments whose damage
	// was logged: local ones not uploaded, objects not served. Guarded
	// by mu.
	warned, remoteWarned map[uint64]bool

	// ctx ends the partition's background work (Close, Delete).
	ctx    context.Context
	cancel context.CancelFunc

	// Upload scheduling, guarded by Manager.mu.
	busy      bool
	failures  int
	notBefore time.Time
}

// SetLocalRetention changes the local retention (a topic's options were
// updated).
func (p *Partition) SetLocalRetention(r LocalRetention) { p.keep.Store(&r) }

func (p *Partition) manifestPath() string { return filepath.Join(p.dir, manifestName) }

func (p *Partition) indexPath(start uint64) string {
	return filepath.Join(p.dir, remoteIndexDir, fmt.Sprintf("%020d.index", start))
}

// commit saves m and makes it current. Caller holds p.mu.
func (p *Partition) commit(m Manifest) error {
	if err := m.save(p.manifestPath()); err != nil {
		return err
	}
	p.man.Store(&m)
	return nil
}

// remoteOnly returns the manifest and how many of its oldest segments
// start before the first local offset: offsets below it are read from
// them.
func (p *Partition) remoteOnly() (*Manifest, int, uint64, uint64) {
	localFirst, next := p.log.Bounds()
	m := p.man.Load()
	// Every poll asks: a binary search, however many segments the
	// bucket holds.
	k := sort.Search(len(m.Segments), func(i int) bool { return m.Segments[i].Start >= localFirst })
	return m, k, localFirst, next
}

// Bounds returns the oldest offset of the whole log (the oldest segment
// in the bucket, when older than the local ones) and the next offset.
func (p *Partition) Bounds() (first, next uint64) {
	m, k, localFirst, next := p.remoteOnly()
	if k > 0 {
		return m.Segments[0].Start, next
	}
	return localFirst, next
}

// Tiers splits a partition's bytes between the tiers.
type Tiers struct {
	// LocalBytes is the size of the segments on local disk.
	LocalBytes uint64
	// RemoteBytes is the size of the segments in the bucket (some may
	// also be local); RemoteOnlyBytes of those no longer local.
	RemoteBytes, RemoteOnlyBytes uint64
	// RemoteSegments counts the segments in the bucket;
	// RemoteOnlySegments those no longer local.
	RemoteSegments, RemoteOnlySegments int
	// PendingSegments and PendingBytes are the sealed local segments not
	// uploaded yet.
	PendingSegments int
	PendingBytes    uint64
}

// Stats returns the counters of the whole log and how its bytes are
// split between the tiers.
func (p *Partition) Stats() (storage.Stats, Tiers) {
	st := p.log.Stats()
	m, k, _, _ := p.remoteOnly()
	t := Tiers{LocalBytes: st.Bytes, RemoteBytes: uint64(m.bytes()), RemoteSegments: len(m.Segments), RemoteOnlySegments: k}
	for i := range m.Segments[:k] {
		t.RemoteOnlyBytes += uint64(m.Segments[i].Bytes)
	}
	for _, s := range p.log.Sealed() {
		if !m.covers(s.Start, s.End) {
			t.PendingSegments++
			t.PendingBytes += uint64(s.Bytes)
		}
	}
	if k > 0 {
		st.FirstOffset = m.Segments[0].Start
		if st.NextOffset > st.FirstOffset {
			st.Messages = st.NextOffset - st.FirstOffset
		}
		st.Bytes += t.RemoteOnlyBytes
		st.Segments += k
	}
	return st, t
}

// Close stops uploads of the partition; the local log is the caller's.
func (p *Partition) Close() {
	p.m.forget(p)
}

// Delete stops uploads of the partition and deletes its objects from the
// bucket in the background (the partition itself was deleted).
func (p *Partition) Delete() error {
	p.m.forget(p)
	return p.m.deletePrefix(p.m.bucket.Key(p.ref.prefix()))
}

// removeIndexes removes the local copies of the indexes of segments.
func (p *Partition) removeIndexes(segs []Remote) {
	for i := range segs {
		if err := os.Remove(p.indexPath(segs[i].Start)); err != nil && !os.IsNotExist(err) {
			p.m.log.Warn("remove remote segment index", "partition", p.ref, "err", err)
		}
	}
}
