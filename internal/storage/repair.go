package storage

import (
	"errors"
	"fmt"
	"slices"
)

// ErrBadRepair is returned (wrapped) by RepairRecord for bytes that do not
// fill the quarantined slot: they must verify, carry its base offset and
// message count, and be exactly as long.
var ErrBadRepair = errors.New("storage: repair record does not fit the quarantined slot")

// RepairRecord replaces the quarantined record whose base offset is base
// with rec, which must verify (Format.Verify), carry that base offset and
// have exactly the quarantined slot's length; it is written in place,
// synced, and the range leaves the quarantine.
//
// A slot covering several records (recovery could only locate where the
// damaged run ends) takes one record holding all its messages. rec is not
// retained. It fails with an error wrapping ErrNotDamaged when no
// quarantined range starts at base, and with one wrapping ErrBadRepair when
// rec does not fit; nothing is written then.
func (p *Partition) RepairRecord(base uint64, rec []byte) error {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	segs := p.segs.Load().segs
	if len(segs) == 0 || base < segs[0].start {
		return fmt.Errorf("repair record %d: %w", base, ErrNotDamaged)
	}
	seg := segs[segmentFor(segs, base)]
	q := seg.damage()
	i := slices.IndexFunc(q, func(d Damage) bool { return d.First == base })
	if i < 0 {
		return fmt.Errorf("repair record %d: %w", base, ErrNotDamaged)
	}
	d := q[i]
	if err := p.checkSlot(rec, d); err != nil {
		return fmt.Errorf("repair record %d: %w: %v", base, ErrBadRepair, err)
	}
	if !seg.acquire() {
		return fmt.Errorf("repair record %d: %w", base, ErrNotDamaged)
	}
	defer seg.release()
	if _, err := seg.log.WriteAt(rec, d.Pos); err != nil {
		return fmt.Errorf("repair record %d in %s: %w", base, seg.logPath, err)
	}
	if err := syncData(seg.log); err != nil {
		return fmt.Errorf("repair record %d: sync %s: %w", base, seg.logPath, err)
	}
	nq := slices.Delete(slices.Clone(q), i, i+1)
	if err := seg.writeSidecar(p.dir, nq); err != nil {
		return fmt.Errorf("repair record %d: %w", base, err)
	}
	seg.setDamage(nq)
	return nil
}
