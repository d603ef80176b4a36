package partition

import (
	"errors"

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

// diskRefused reports whether err is an append refused by a full disk or
// a stopped log, which onDisk already reported.
func diskRefused(err error) bool {
	return errors.Is(err, storage.ErrDiskFull) || errors.Is(err, storage.ErrStopped)
}
