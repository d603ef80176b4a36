package partition

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
)

// Damaged data. A partition whose log holds records that fail verification
// opens with them quarantined (storage.Partition.Damaged) and serves the
// rest: a poll skips the damaged offsets as it skips offsets removed by
// retention (poll.go). What recovery quarantined is logged once here, at
// open, one line per range; what a read finds in a sealed segment recovery
// did not verify whole (storage verifies records before it first serves
// them) is logged once when found; the scrubber logs what it finds later.

// Sources of found damage (the metrics label source).
const (
	// damageSourceOpen names damage found by recovery.
	damageSourceOpen = "open"
	// damageSourceRead names damage found by a read verifying records
	// before serving them.
	damageSourceRead = "read"
)

// readDamage logs range d of partition id of t, which a read just found
// and quarantined (storage.Options.DamageFound), counts it, and hands it
// to p.damaged (in cluster mode: the replica's rebuild, rebuild.go).
func (p *Plane) readDamage(t catalog.TopicRef, id uint32, d storage.Damage) {
	p.log.Error("damaged records quarantined: they are not served",
		"stream", t.StreamID, "topic", t.TopicID, "partition", id,
		"file", d.Path, "pos", d.Pos, "bytes", d.Len, "first_offset", d.First, "last_offset", d.Last,
		"reason", d.Reason, "source", damageSourceRead)
	if o := p.opts.ScrubObserver; o != nil {
		o.DamageFound(damageSourceRead, 1)
	}
	// Off the read path, which must not wait for the plane's lock.
	go p.damaged(t, id, []storage.Damage{d})
}

// logOpenDamage logs the quarantine of partition id of t just opened.
func (p *Plane) logOpenDamage(t catalog.TopicRef, id uint32, dir string, dmg []storage.Damage) {
	if len(dmg) == 0 {
		return
	}
	p.log.Warn("partition has damaged records; serving the rest",
		"stream", t.StreamID, "topic", t.TopicID, "partition", id, "dir", dir,
		"ranges", damageRanges(dmg), "records", damagedRecords(dmg))
	for _, d := range dmg {
		p.log.Error("damaged records quarantined: they are not served",
			"stream", t.StreamID, "topic", t.TopicID, "partition", id,
			"file", d.Path, "pos", d.Pos, "bytes", d.Len, "first_offset", d.First, "last_offset", d.Last,
			"reason", d.Reason, "source", damageSourceOpen)
	}
	if o := p.opts.ScrubObserver; o != nil {
		o.DamageFound(damageSourceOpen, len(dmg))
	}
}

// damageRanges formats the offset ranges of dmg as "12-14,80".
func damageRanges(dmg []storage.Damage) string {
	var b strings.Builder
	for i, d := range dmg {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(d.First, 10))
		if d.Last != d.First {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(d.Last, 10))
		}
	}
	return b.String()
}

// damagedRecords is the number of offsets dmg quarantines.
func damagedRecords(dmg []storage.Damage) uint64 {
	var n uint64
	for _, d := range dmg {
		n += d.Last - d.First + 1
	}
	return n
}

// PartitionDamage is the quarantine of one partition held here.
type PartitionDamage struct {
	StreamID  uint32
	TopicID   uint32
	Partition uint32
	// Damage is the partition's quarantine, oldest first.
	Damage []storage.Damage
}

// DamagedPartitions lists every open partition held here that has
// quarantined records, for stats and metrics (iggo_storage_damaged_records
// is the sum of DamagedRecords over it).
func (p *Plane) DamagedPartitions() []PartitionDamage {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []PartitionDamage
	for _, tp := range p.topics {
		for id, part := range tp.parts {
			if part.log == nil {
				continue
			}
			if dmg := part.log.Damaged(); len(dmg) > 0 {
				out = append(out, PartitionDamage{StreamID: tp.ref.StreamID, TopicID: tp.ref.TopicID, Partition: id, Damage: dmg})
			}
		}
	}
	return out
}

// DamagedRecords is the number of offsets pd quarantines.
func (pd PartitionDamage) DamagedRecords() uint64 { return damagedRecords(pd.Damage) }

// damageError describes the quarantined ranges d of a partition (the
// first one in full) as the reason of its rebuild.
func damageError(d []storage.Damage) error {
	f := d[0]
	return fmt.Errorf("%d damaged record range(s), the first in %s at byte %d (+%d), offsets %d..%d: %s",
		len(d), f.Path, f.Pos, f.Len, f.First, f.Last, f.Reason)
}
