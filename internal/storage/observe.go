package storage

import "time"

// Observer receives storage latencies (the server's metrics). Its methods
// are called on the append and sync paths, possibly concurrently and with
// partition locks held, so they must be cheap and must not block.
type Observer interface {
	// StorageWrite reports one record write to a segment log: how long
	// the write call took and how many bytes it wrote.
	StorageWrite(d time.Duration, bytes int)
	// StorageSync reports one sync round (index write plus fdatasync of
	// the active segment), whether run for enforce_fsync or by the
	// background flusher.
	StorageSync(d time.Duration)
}

// observeStart returns the start time of a measured operation, or the
// zero time when no Observer is set (no clock read).
func (p *Partition) observeStart() time.Time {
	if p.opts.Observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// observeWrite reports a record write begun at start.
func (p *Partition) observeWrite(start time.Time, bytes int) {
	if p.opts.Observer != nil {
		p.opts.Observer.StorageWrite(time.Since(start), bytes)
	}
}

// observeSync reports a sync round begun at start.
func (p *Partition) observeSync(start time.Time) {
	if p.opts.Observer != nil {
		p.opts.Observer.StorageSync(time.Since(start))
	}
}
