package partition

import (
	"errors"

	"github.com/iggo-dev/iggo/internal/fileio"

	"github.com/iggo-dev/iggo/internal/storage"
)

// onDisk logs a partition's disk events (storage.DiskReport): once when a
// write or sync error stops the partition, once per full-disk episode and
// when space is back. Each error names the files or directory concerned.
// Sends refused meanwhile get CannotAppendMessage (4010) without a log
// line each (diskRefused). Runs under the partition's lock: logging only.
func (p *Plane) onDisk(r storage.DiskReport) {
	switch r.Event {
	case storage.DiskStopped:
		p.log.Error("partition stopped after a disk error: writes are refused until the server restarts; polls serve what was written", "err", r.Err)
	case storage.DiskFull:
		if !r.Repeat {
			p.log.Error("disk full: the partition refuses writes until space is freed; polls are served", "err", r.Err)
		}
	case storage.DiskSpaceBack:
		p.log.Info("disk space is back: the partition accepts writes again")
	}
}

// offsetWritten logs a failed consumer-offset write: a full disk once per
// episode (auto-commit polls would repeat it on every poll), anything else
// each time.
func (p *Plane) offsetWritten(part *partition, err error) {
	switch {
	case err == nil:
		if part.offsetsFull.Swap(false) {
			p.log.Info("consumer offset writes succeed again: disk space is back", "dir", part.dir)
		}
	case fileio.NoSpace(err):
		if !part.offsetsFull.Swap(true) {
			p.log.Error("disk full: consumer offsets are not stored until space is freed; polls are served", "dir", part.dir, "err", err)
		}
	default:
		p.log.Warn("consumer offset write failed", "dir", part.dir, "err", err)
	}
}

// diskRefused reports whether err is an append refused by a full disk or
// a stopped log, which onDisk already reported.
func diskRefused(err error) bool {
	return errors.Is(err, storage.ErrDiskFull) || errors.Is(err, storage.ErrStopped)
}
