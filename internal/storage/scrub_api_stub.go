package storage

import (
	"context"
	"errors"
)

// This file is a placeholder of the storage damage API so that code built
// on it compiles before the real implementation lands; it finds nothing.

// Damage is one quarantined range of a partition's log: records that failed
// verification and are never served as data.
type Damage struct {
	Path   string // the segment (.log) file
	Pos    int64  // byte position of the first damaged byte range in Path
	Len    int64  // bytes quarantined
	First  uint64 // first offset of the damaged range (inclusive)
	Last   uint64 // last offset (inclusive)
	Reason string // what failed (checksum, length, index mismatch ...)
}

// ScrubReport is what one Scrub pass checked and found.
type ScrubReport struct {
	Segments int
	Records  int64
	Bytes    int64
	Damaged  []Damage // everything quarantined after the pass (old and new)
	New      []Damage // found by this pass
}

// ErrNotDamaged is returned by RepairRecord for a record that is not
// quarantined.
var ErrNotDamaged = errors.New("storage: record is not quarantined")

// Damaged returns the current quarantine, oldest first.
func (p *Partition) Damaged() []Damage { return nil }

// Scrub re-verifies every record of the sealed segments and their index
// against the log, reading at most bytesPerSec (0: unlimited); newly found
// damage is quarantined (and reported by Damaged from then on).
func (p *Partition) Scrub(ctx context.Context, bytesPerSec int64) (ScrubReport, error) {
	if err := ctx.Err(); err != nil {
		return ScrubReport{}, err
	}
	return ScrubReport{}, nil
}

// RepairRecord replaces the quarantined record whose base offset is base
// with rec; see the damage API.
func (p *Partition) RepairRecord(base uint64, rec []byte) error { return ErrNotDamaged }
