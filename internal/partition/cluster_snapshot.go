package partition

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/replication"
)

// Partition group snapshots.
//
// A snapshot of a partition group is only the partition's position: the
// next offset and the last timestamp (snapshotLen bytes: u8 version, u64
// next offset, u64 timestamp). The plane never compacts partition raft
// logs itself, so the host only snapshots a group when someone calls
// Compact. Streaming sealed segments to a lagging replica is not
// implemented: RestoreReplicated accepts a snapshot only when the local
// partition already holds at least its next offset, and otherwise fails
// (the host then stops that group on this node and logs it). A replica
// that fell behind a compacted log must be rebuilt from a copy of the
// partition directory.

const (
	snapshotVersion = 1
	snapshotLen     = 17
)

// errSnapshotTransfer is a snapshot this node cannot restore from.
var errSnapshotTransfer = errors.New("partition: restoring a lagging replica from a snapshot (segment transfer) is not supported")

type partSnapshot struct{ next, ts uint64 }

func (s partSnapshot) encode() []byte {
	b := make([]byte, 1, snapshotLen)
	b[0] = snapshotVersion
	b = binary.LittleEndian.AppendUint64(b, s.next)
	return binary.LittleEndian.AppendUint64(b, s.ts)
}

func decodeSnapshot(b []byte) (partSnapshot, error) {
	if len(b) != snapshotLen || b[0] != snapshotVersion {
		return partSnapshot{}, fmt.Errorf("partition snapshot: %d bytes, not a version %d snapshot", len(b), snapshotVersion)
	}
	return partSnapshot{next: binary.LittleEndian.Uint64(b[1:]), ts: binary.LittleEndian.Uint64(b[9:])}, nil
}

// SnapshotReplicated returns the state of group g's partition (runs on
// the host's loop).
func (p *Plane) SnapshotReplicated(g replication.GroupID) ([]byte, error) {
	rep := p.replicaFor(g)
	if rep == nil {
		return nil, fmt.Errorf("snapshot group %d: %w", g, replication.ErrUnknownGroup)
	}
	if rep.part.log == nil {
		return nil, fmt.Errorf("snapshot group %d: partition %s is stopped", g, rep.part.dir)
	}
	next, ts := rep.part.log.Tail()
	return partSnapshot{next: next, ts: ts}.encode(), nil
}

// RestoreReplicated accepts a snapshot at index only when the local
// partition already holds its next offset (see the package notes above).
func (p *Plane) RestoreReplicated(g replication.GroupID, index uint64, data []byte) error {
	rep := p.replicaFor(g)
	if rep == nil {
		return fmt.Errorf("restore group %d: %w", g, replication.ErrUnknownGroup)
	}
	s, err := decodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("restore group %d: %w", g, err)
	}
	if rep.part.log == nil {
		return fmt.Errorf("restore group %d: partition %s is stopped", g, rep.part.dir)
	}
	next, _ := rep.part.log.Tail()
	if next < s.next {
		return fmt.Errorf("restore group %d at index %d: local next offset %d, snapshot's %d: %w", g, index, next, s.next, errSnapshotTransfer)
	}
	return nil
}

// replicaFor returns the replica of group g (nil in single-node mode).
func (p *Plane) replicaFor(g replication.GroupID) *replica {
	if p.cl == nil {
		return nil
	}
	return p.cl.replicaOf(g)
}
