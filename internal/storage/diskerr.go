package storage

import (
	"errors"
	"fmt"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// What a partition does when its disk fails (docs/OPERATIONS.md, "Disk
// errors"):
//
//   - A failed sync, or a write that failed for any reason but a full file
//     system (EIO above all), stops the log: the write and every append
//     that waited for the sync fail, nothing is acknowledged, and every
//     later append, Flush and Close answers the same *ErrStopped error.
//     A sync is never retried: after a failed fsync the kernel may have
//     dropped the dirty pages and a second fsync would report success
//     for data that is not on disk ("fsyncgate"). The log stays stopped
//     until the process restarts; recovery then verifies what the disk
//     holds.
//   - A write refused for lack of space (ENOSPC, EDQUOT) cuts the log back
//     to the last whole record and fails with ErrDiskFull; the log stays
//     open and the next append that fits succeeds. A segment roll or index
//     write that finds the disk full is retried by the next append.
//
// Each event goes to Options.OnDisk (once per stop, once per full-disk
// episode with Repeat false) and to a WriteErrorObserver.

var (
	// ErrDiskFull is an append refused because the file system holding the
	// partition is out of space; the partition stays open and appends
	// resume once space is freed.
	ErrDiskFull = errors.New("storage: no space left on device")
	// ErrStopped is an append (or Flush, Close) refused because an earlier
	// write or sync of the log failed; the log stays stopped until the
	// process restarts.
	ErrStopped = errors.New("storage: log stopped after a disk error")
	// errSync marks a failed data sync (never retried, never "disk full").
	errSync = errors.New("data sync failed")
)

// DiskEvent is a change in a partition's ability to write.
type DiskEvent uint8

// The disk events reported to Options.OnDisk.
const (
	// DiskFull: a write was refused for lack of space (every refusal).
	DiskFull DiskEvent = iota + 1
	// DiskSpaceBack: the first append that succeeded after DiskFull.
	DiskSpaceBack
	// DiskStopped: a write or sync failed and the log stopped (once).
	DiskStopped
)

// DiskReport is one disk event of a partition.
type DiskReport struct {
	Event DiskEvent
	// Err is the error appends get (nil for DiskSpaceBack).
	Err error
	// Repeat is set on a DiskFull while the partition was already
	// refusing writes for lack of space, so a caller logs each episode
	// once.
	Repeat bool
}

// WriteErrorObserver, when the Options.Observer implements it too, counts
// the write and sync errors the OS returned (iggo_storage_write_errors_total):
// kind is "enospc" for a full file system and "eio" for everything else.
type WriteErrorObserver interface {
	StorageWriteError(kind string)
}

// noSpace reports whether err is a write refused for lack of space, which
// leaves the log usable (a failed sync never does).
func noSpace(err error) bool {
	return fileio.NoSpace(err) && !errors.Is(err, errSync)
}

// diskErrLocked handles err from a write, sync, roll or index write of the
// append path: a full disk is reported and returned as ErrDiskFull, any
// other error stops the log. Caller must hold p.mu.
func (p *Partition) diskErrLocked(err error) error {
	if noSpace(err) {
		return p.fullLocked(err)
	}
	return p.stopLocked(err)
}

// fullLocked reports a write refused for lack of space. Caller must hold
// p.mu.
func (p *Partition) fullLocked(err error) error {
	err = fmt.Errorf("%w: the file system holding %s is full; appends resume once space is freed: %w", ErrDiskFull, p.dir, err)
	repeat := p.full
	p.full = true
	p.countWriteError(true)
	if p.opts.OnDisk != nil {
		p.opts.OnDisk(DiskReport{Event: DiskFull, Err: err, Repeat: repeat})
	}
	return err
}

// spaceBackLocked reports the first successful append after a full disk.
// Caller must hold p.mu with p.full set.
func (p *Partition) spaceBackLocked() {
	p.full = false
	if p.opts.OnDisk != nil {
		p.opts.OnDisk(DiskReport{Event: DiskSpaceBack})
	}
}

// stopLocked stops the log after the failed write or sync err (the first
// failure wins) and returns the error every later append gets. Caller
// must hold p.mu.
func (p *Partition) stopLocked(err error) error {
	if p.failed != nil {
		return p.failed
	}
	p.failed = fmt.Errorf("%w: %w; the partition refuses writes until the server restarts (recovery then verifies the files)", ErrStopped, err)
	p.countWriteError(fileio.NoSpace(err))
	if p.opts.OnDisk != nil {
		p.opts.OnDisk(DiskReport{Event: DiskStopped, Err: p.failed})
	}
	return p.failed
}

// countWriteError counts one error of the OS in the observer.
func (p *Partition) countWriteError(noSpace bool) {
	o, ok := p.opts.Observer.(WriteErrorObserver)
	if !ok {
		return
	}
	if noSpace {
		o.StorageWriteError("enospc")
	} else {
		o.StorageWriteError("eio")
	}
}
