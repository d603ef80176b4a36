package partition

import (
	"fmt"

	"github.com/iggo-dev/iggo/internal/replication"
)

// ApplyReplicated routes an entry to its group's replica.
func (p *Plane) ApplyReplicated(g replication.GroupID, e replication.Entry) {
	if m, ok := p.mode.(replicatedMode); ok {
		if rep := m.set.Replica(g); rep != nil {
			rep.Apply(e)
		}
	}
}

// SnapshotReplicated routes a snapshot to its group's replica.
func (p *Plane) SnapshotReplicated(g replication.GroupID) ([]byte, error) {
	if m, ok := p.mode.(replicatedMode); ok {
		if rep := m.set.Replica(g); rep != nil {
			return rep.Snapshot()
		}
	}
	return nil, fmt.Errorf("group %d: %w", g, replication.ErrUnknownGroup)
}

// RestoreReplicated routes a restore to its group's replica.
func (p *Plane) RestoreReplicated(g replication.GroupID, index uint64, data []byte) error {
	if m, ok := p.mode.(replicatedMode); ok {
		if rep := m.set.Replica(g); rep != nil {
			return rep.Restore(index, data)
		}
	}
	return fmt.Errorf("group %d: %w", g, replication.ErrUnknownGroup)
}
