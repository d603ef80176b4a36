package storage

import "errors"

// ErrOffsetMismatch is returned by AppendStamped when the record's base
// offset is not the partition's next offset.
var ErrOffsetMismatch = errors.New("storage: stamped record does not continue the log")

// AppendStamped writes rec exactly as given: a record already stamped
// elsewhere (a replicated batch stamped by the partition's raft leader)
// with base offset base and timestamp ts. base must equal the next offset
// (else ErrOffsetMismatch and nothing is written); everything else is as
// Append: indexing, visibility, flush thresholds, fsync with
// Options.Fsync and segment roll. rec is neither modified nor retained.
// A ts below the last record's timestamp is stored as given (the stamper
// keeps timestamps monotonic); lookups by timestamp stay correct for
// monotonic input only.
func (p *Partition) AppendStamped(rec []byte, count uint32, base, ts uint64) (AppendResult, error) {
	return p.write(rec, count, true, base, ts)
}

// AppendStampedDeferred is AppendStamped without waiting for the fsync of
// Options.Fsync: the record is durable once Sync(seq) returned nil (seq 0:
// nothing to wait for). The host of a cluster node syncs the appends of
// many partitions at once this way instead of one after another.
func (p *Partition) AppendStampedDeferred(rec []byte, count uint32, base, ts uint64) (res AppendResult, seq uint64, err error) {
	res, seq, err = p.writeRecord(rec, count, true, base, ts)
	if err != nil || !p.opts.Fsync {
		return res, 0, err
	}
	return res, seq, nil
}

// Sync makes every append up to sequence number seq durable (a no-op for
// seq 0 or one already synced); see AppendStampedDeferred.
func (p *Partition) Sync(seq uint64) error {
	if seq == 0 {
		return nil
	}
	return p.syncTo(seq)
}

// Tail returns the offset the next record gets and the timestamp of the
// last record appended (0 for a partition that never held a record; a
// purge keeps it). Unlike Bounds, next counts records appended but
// not yet visible (waiting for their fsync, or for Reveal in held mode).
func (p *Partition) Tail() (next, lastTs uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next, p.lastTs
}
