package storage

import (
	"errors"
	"slices"
)

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

// ErrNotDamaged is returned by RepairRecord for a base offset that does not
// start a quarantined range.
var ErrNotDamaged = errors.New("storage: record is not quarantined")

// The quarantine of a segment is an immutable slice of Damage ordered by
// offset, published through segment.quar and replaced as a whole (under
// Partition.qmu) when Scrub adds to it or RepairRecord lifts a range. Each
// Damage is one slot of the segment: one index entry whose log bytes
// [Pos, Pos+Len) held offsets First..Last; readers never return a slot's
// bytes (read.go). The quarantine is kept on disk beside the segment
// (sidecar.go), since recovery trusts a sealed index without reading every
// record.

// damage returns the segment's quarantine (nil when it has none).
func (s *segment) damage() []Damage {
	if q := s.quar.Load(); q != nil {
		return *q
	}
	return nil
}

// setDamage publishes q as the segment's quarantine. Caller must hold
// Partition.qmu or own the segment.
func (s *segment) setDamage(q []Damage) {
	if len(q) == 0 {
		s.quar.Store(nil)
		return
	}
	s.quar.Store(&q)
}

// damageFrom returns the first range of q ending at or after off.
func damageFrom(q []Damage, off uint64) (Damage, bool) {
	i, _ := slices.BinarySearchFunc(q, off, func(d Damage, x uint64) int {
		if d.Last < x {
			return -1
		}
		return 1
	})
	if i == len(q) {
		return Damage{}, false
	}
	return q[i], true
}

// damageAt returns the range of q holding offset off.
func damageAt(q []Damage, off uint64) (Damage, bool) {
	d, ok := damageFrom(q, off)
	if !ok || d.First > off {
		return Damage{}, false
	}
	return d, true
}

// skipDamaged returns the first offset at or after from that is not
// quarantined, following ranges across segment boundaries.
func skipDamaged(segs []*segment, from uint64) uint64 {
	if len(segs) == 0 {
		return from
	}
	for {
		d, ok := damageAt(segs[segmentFor(segs, from)].damage(), from)
		if !ok || d.Last == ^uint64(0) {
			return from
		}
		from = d.Last + 1
	}
}

// Damaged returns the current quarantine, oldest first: every range of
// records that failed verification (at Open, in a Scrub, or when
// ReadRecord met it) and that reads skip.
func (p *Partition) Damaged() []Damage {
	var out []Damage
	for _, s := range p.segs.Load().segs {
		out = append(out, s.damage()...)
	}
	return out
}
